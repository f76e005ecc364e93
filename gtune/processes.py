"""gtune's own processes: starting Python children (workers, device queries, the
reference), stopping waits on them, and scratch folders.

Every Python process gtune starts runs this package, and nothing from the directory
gtune was started in: ``python -m`` would put the working directory first on the
child's ``sys.path`` (a ``numpy.py`` lying there would run in every worker), so
children start with ``-P`` and ``PYTHONSAFEPATH=1`` (passed on to their own
children), and empty ``PYTHONPATH`` entries (which Python reads as the working
directory; ``PYTHONPATH=$PYTHONPATH:/x`` with an unset variable makes one) are
dropped. The rest of ``PYTHONPATH`` is kept: the folder above this package comes
first, then whatever the user put there.

:func:`spawn_worker` starts a worker that talks to its parent over a socket and dies
with it (``gtune.measure._worker.guard_parent``); the measuring, compiling and split
workers all start through it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.connection import Connection
from pathlib import Path

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])
"""The folder holding the ``gtune`` package: first on a child's ``PYTHONPATH``, so a
child imports the gtune its parent runs (a checkout that is not installed too)."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a Python child: this one, ``extra``, this package first on
    ``PYTHONPATH``, no empty ``PYTHONPATH`` entry, and ``PYTHONSAFEPATH`` set."""
    env = dict(os.environ)
    env.update(extra or {})
    entries = [PACKAGE_PARENT, *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(e for e in entries if e))
    env["PYTHONSAFEPATH"] = "1"
    return env


def python_command(module: str, *args: str) -> list[str]:
    """The command line running ``python -m module args`` without the working
    directory on ``sys.path``."""
    return [sys.executable, "-P", "-m", module, *args]


def spawn_worker(
    module: str,
    *,
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
) -> tuple[subprocess.Popen[bytes], Connection]:
    """Start ``python -m module FD PARENT_PID main|thread`` in a session of its own (so
    Ctrl-C reaches only the parent) and return it with the parent's end of its socket.

    The worker calls ``guard_parent`` with those arguments: the parent-death signal
    follows the thread that started the process, so a worker started off the main
    thread asks for none and relies on its watchdog."""
    ours, theirs = socket.socketpair()
    starter = "main" if threading.current_thread() is threading.main_thread() else "thread"
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115
    try:
        process = subprocess.Popen(
            python_command(module, str(theirs.fileno()), str(os.getpid()), starter),
            pass_fds=[theirs.fileno()],
            env=child_env(env),
            start_new_session=True,
            stdout=log,
            stderr=log,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
        if log is not None:
            log.close()
    return process, Connection(ours.detach())


# -- stopping -------------------------------------------------------------------------

STOP_GRACE_S = 2.0
"""How long a wait on a child goes on after a stop was asked for: a measurement that
ends within it is kept, one that hangs (or a reference that loops) is abandoned."""

_stop_at: list[float] = []  # when a stop was asked for (monotonic), while one is


def request_stop() -> None:
    """Ask every wait on a gtune child in this process to give up :data:`STOP_GRACE_S`
    from now: the command line's first Ctrl-C, SIGTERM or SIGHUP. Signal-safe."""
    if not _stop_at:
        _stop_at.append(time.monotonic())


def clear_stop() -> None:
    _stop_at.clear()


def stop_requested() -> bool:
    return bool(_stop_at)


def stop_overdue() -> bool:
    """Whether a stop was asked for more than :data:`STOP_GRACE_S` ago."""
    return bool(_stop_at) and time.monotonic() >= _stop_at[0] + STOP_GRACE_S


_deferring: list[int] = []  # open sections of stops_deferred on the main thread
_deferred: list[Callable[[], None]] = []  # the stop a handler left for a section's end


def defer_stop(raise_it: Callable[[], None]) -> bool:
    """For a stop signal's handler (Python runs them on the main thread): inside
    :func:`stops_deferred`, keep ``raise_it`` for the section's end and say so (True);
    elsewhere False, and the handler raises at once."""
    if _deferring:
        _deferred.append(raise_it)
        return True
    return False


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """A section in which a stop signal (Ctrl-C, SIGTERM, SIGHUP: the command line's
    handlers) does not raise until the section ends: starting a child inside it, the
    stop comes once the caller holds the child, so whatever ends the wait ends the child
    too. A signal that arrived while ``subprocess.Popen`` waited for the child's exec
    would otherwise raise inside Popen, after the child started, and leave it running
    with nobody to end it. Off the main thread, where no signal handler raises, the
    section defers nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring.append(1)
    try:
        yield
    finally:
        _deferring.pop()
    if not _deferring and _deferred:
        raise_it = _deferred[0]
        _deferred.clear()
        raise_it()


class Stopped(KeyboardInterrupt):
    """A wait on a child given up because a stop was asked for."""


def wait_stoppable(ready: Callable[[float], bool], timeout_s: float | None) -> bool:
    """Call ``ready(slice)`` (which waits at most ``slice`` seconds) until it says True
    or ``timeout_s`` passes (False); raise :class:`Stopped` once a stop is overdue
    (:func:`stop_overdue`)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        now = time.monotonic()
        ends = [t for t in (deadline, _stop_at[0] + STOP_GRACE_S if _stop_at else None) if t]
        step = min([0.25, *(max(0.0, t - now) for t in ends)])
        if ready(step):
            return True
        if stop_overdue():
            raise Stopped()
        if deadline is not None and time.monotonic() >= deadline:
            return False


# -- scratch folders ------------------------------------------------------------------


def scratch_dir(kind: str, parent: str | None = None) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder ``gtune-KIND-PID-...`` removed when done. A process killed
    with SIGKILL cannot remove its own; folders of this kind whose process no longer
    runs are removed here, when the next one is made."""
    base = Path(parent or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for old in base.glob(f"gtune-{kind}-*-*"):
            pid_text = old.name[len(f"gtune-{kind}-") :].partition("-")[0]
            if pid_text.isdigit() and not _runs(int(pid_text)) and old.stat().st_uid == os.getuid():
                shutil.rmtree(old, ignore_errors=True)
    return tempfile.TemporaryDirectory(prefix=f"gtune-{kind}-{os.getpid()}-", dir=parent)


def _runs(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return True
    return state not in ([b"Z"], [b"X"])


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity: ``taskset``, a container's
    cpuset); every CPU where the platform has no affinity."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        return list(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """How many CPUs this process may use (:func:`allowed_cpus`), not the machine's: two
    tunings pinned to half a host each (one per GPU) would otherwise each start helpers
    (compile workers, solver processes) for the whole host."""
    return max(1, len(allowed_cpus()))
