"""Worker processes: isolation for builds and runs that may hang or crash the driver.

Workers are fresh interpreters (started by :func:`gtune.processes.spawn_worker`; forking
after the NVIDIA driver is initialised fails) and talk to the parent over a pipe with plain
data. A worker dies with its parent however the parent ends (see :func:`guard_parent`),
even while a kernel hangs. A *measure* worker holds the problem data on the device and
times configurations (or runs one with other inputs, once or once per plane in one sweep,
and hands back its outputs: probing, ``gtune lift``); *compile* workers only build
programs and hand back binaries, so that compilation overlaps measurement.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import select
import signal
import threading
import time
import traceback
import warnings
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gtune.device import DeviceLimits
    from gtune.kernel import TunableKernel

_PR_SET_PDEATHSIG = 1

# Notices a measuring worker sends before its answer (see gtune.measure.devlock): it
# waits for the device while another process measures on it, then holds it. The
# parent's time limit for the answer starts only once the device is held.
WAITING = "waiting"
HOLDING = "holding"
# The answer to a request whose handling raised an exception in the worker's Python
# code (not a GtuneError): the worker lives on; the payload is :func:`raised`'s.
RAISED = "raised"


def guard_parent(parent: int, fd: int | None = None, *, death_signal: bool = True) -> None:
    """End this process when ``parent`` ends, on every path (SIGKILL included).

    ``death_signal``: ask Linux for SIGKILL when the parent goes (``PR_SET_PDEATHSIG``;
    it follows the parent *thread* that started us, so a parent that starts workers from
    another thread asks for none). In any case a watchdog thread ends the process when
    its parent changes (re-parented to init or a sub-reaper) or the parent's end of the
    socket ``fd`` is closed: the main thread may be stuck in a kernel that never returns.
    """
    if death_signal:
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before we could ask
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, fd), name="gtune-watchdog", daemon=True).start()


def _watch(parent: int, fd: int | None) -> None:
    poller = None
    if fd is not None:
        poller = select.poll()
        poller.register(fd, getattr(select, "POLLRDHUP", 0) | select.POLLHUP)
    while True:
        if poller is not None:
            with contextlib.suppress(OSError):
                if poller.poll(500):  # only hang-up events are registered
                    os._exit(1)
        else:
            time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def serve(conn: Connection) -> None:
    """Worker main loop: ``(verb, payload)`` in, ``(status, payload)`` out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C means
    # Build logs are kept with each result; pyopencl's warnings would only repeat them.
    warnings.filterwarnings("ignore", message="Non-empty compiler output")
    session: Any = None
    compiler: Any = None
    while True:
        try:
            verb, payload = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            if verb == "stop":
                conn.send(("ok", None))
                return
            if verb == "setup":
                limits, kernel = _device_and_kernel(payload)
                context = None
                if session is not None:  # a pooled worker handed its next kernel
                    if session.limits == limits:
                        # its driver context serves the next kernel: PoCL loads its
                        # kernel library into each new context at the first build
                        # (about 0.5 s of CPU a kernel)
                        context = session.context
                    session = None
                    gc.collect()  # the last kernel's device buffers go before the new ones
                session = _session(limits, kernel, payload, conn, context)
                conn.send(("ok", None))
            elif verb == "compiler":
                from gtune.device import DeviceLimits
                from gtune.measure._opencl import Compiler

                compiler = Compiler(
                    DeviceLimits.from_dict(payload["device"]), payload.get("build_lock_s")
                )
                conn.send(("ok", None))
            elif verb == "build":
                conn.send(("ok", _build(compiler, payload)))
            elif verb == "build_bundle":
                conn.send(("ok", _build_bundle(compiler, payload)))
            elif verb == "bundle":  # configurations built together, measured next
                conn.send(("ok", session.build_here(**payload)))
            elif verb == "measure":
                start = time.perf_counter()
                data = session.measure(**payload).to_dict()
                data["extra"]["worker_s"] = time.perf_counter() - start
                conn.send(("ok", data))
            elif verb == "check":
                conn.send(("ok", session.check(**payload)))
            elif verb == "settle":
                conn.send(("ok", session.settle(payload["config"])))
            elif verb == "run":
                conn.send(("ok", session.run_once(**payload)))
            elif verb == "output":
                conn.send(("ok", session.read_output(payload["name"])))
            elif verb == "guards":
                conn.send(("ok", session.guards(**payload)))
            elif verb == "reload_refs":  # the arrays it now has a reference output of
                session.load_references()
                conn.send(("ok", sorted(session.refs)))
            else:
                conn.send(("error", f"unknown verb {verb!r}"))
        except Exception as exc:  # reported to the parent, which classifies it
            from gtune.exceptions import GtuneError

            if isinstance(exc, GtuneError):
                conn.send(("gtune_error", exc))
            else:
                conn.send((RAISED, raised(exc)))


def raised(exc: BaseException) -> dict[str, str]:
    """An exception of the worker's own Python code (a host-side check, bad arrays, a
    bug), for the parent: its type, its message and the traceback apart (the parent
    says it in one line, and shows the traceback only with ``--debug``)."""
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc)),
    }


def _device_and_kernel(payload: dict[str, Any]) -> tuple[DeviceLimits, TunableKernel]:
    """``setup``'s device limits and kernel, read from plain data."""
    from gtune.description import from_dict
    from gtune.device import DeviceLimits

    return DeviceLimits.from_dict(payload["device"]), from_dict(payload["kernel"])


def _session(
    limits: DeviceLimits,
    kernel: TunableKernel,
    payload: dict[str, Any],
    conn: Connection,
    context: Any = None,
) -> Any:
    """The measuring session of ``setup``'s kernel on its device (in ``context``, an
    earlier session's driver context, where given)."""
    from gtune.measure._opencl import Session

    return Session(
        limits,
        kernel,
        Path(payload["data_dir"]),
        build_lock_s=payload.get("build_lock_s"),
        lock_wait_s=payload.get("lock_wait_s"),
        notify=lambda waiting: conn.send((WAITING if waiting else HOLDING, None)),
        context=context,
    )


def _build(compiler: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """One configuration built, as plain data: the parent never unpickles anything of
    the backend's."""
    built = compiler.build_binary(payload["source"], payload["options"])
    return {
        "status": built.status.value,
        "compile_s": built.compile_s,
        "log": built.log,
        "binary": built.binary,
        "code": built.code,
        "wait_s": built.wait_s,
    }


def _build_bundle(compiler: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """A bundle built: one binary for it (not one per configuration over the pipe);
    ``binary`` False in the payload: whether each builds, no binary."""
    made = compiler.build_bundle(
        payload["source"], payload["name"], payload["options"], binary=payload.get("binary", True)
    )
    configs = [
        {
            "status": b.status.value,
            "compile_s": b.compile_s,  # the bundle's time over its size
            "log": b.log,
            "binary": b.binary,  # only where built singly
            "code": b.code,
            "kernel": name,
        }
        for b, name in zip(made.built, made.names, strict=True)
    ]
    answer = {"configs": configs, "binary": made.binary, "why": made.why}
    return {**answer, "wait_s": made.wait_s}


def print_devices() -> None:
    """``--devices``: every OpenCL device's limits as JSON on stdout, or the error."""
    import json
    import sys

    from gtune.exceptions import GtuneError
    from gtune.measure import _opencl

    try:
        data: dict[str, Any] = {"devices": [d.to_dict() for d in _opencl.list_devices()]}
    except GtuneError as exc:
        data = {
            "error": {
                "type": type(exc).__name__,
                "message": exc.message,
                "source": exc.source,
                "hint": exc.hint,
            }
        }
    sys.stdout.write(json.dumps(data))


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--devices"]:
        print_devices()
        sys.exit(0)
    if len(sys.argv) > 2:
        guard_parent(int(sys.argv[2]), int(sys.argv[1]), death_signal=sys.argv[3:] != ["thread"])
    # every worker drives OpenCL: its Python side loads before the first request comes
    # (an evaluator starts its worker while its reference runs); a failure here is
    # reported by the request that needs it
    with contextlib.suppress(Exception):
        from gtune.measure import _opencl  # noqa: F401
    serve(Connection(int(sys.argv[1])))
