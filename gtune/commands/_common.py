"""Helpers shared by the subcommands: option parsing and output."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.kernel import MAX_SIZE, TunableKernel
from gtune.outfiles import check_target
from gtune.result import ResultStore, Status, StoredRow
from gtune.store import open_store as open_store_url

if TYPE_CHECKING:
    from gtune.campaign import SchedulerTls
    from gtune.tuning.events import CancelToken

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
)
"""Signals that stop gtune the way Ctrl-C does (a closed terminal, ``kill``)."""
received_signals: list[str] = []
"""Names of the stop signals this process received (the CLI reports them, exit 2)."""
received_interrupts: list[int] = []
"""The Ctrl-Cs (SIGINT) the command line received while it raised KeyboardInterrupt for
them (:func:`cancelled_by_ctrl_c` reads it)."""

EXIT_DEADLINE_S = 20.0
"""How long cleanup may take once gtune has been told to stop (Ctrl-C, SIGTERM,
SIGHUP) before the process ends regardless."""
_deadline: list[threading.Timer] = []


def arm_exit_deadline(status: int, why: str, seconds: float = EXIT_DEADLINE_S) -> None:
    """End the process ``seconds`` from now, with ``status``, unless it has ended by then.

    Stopping runs cleanup (workers asked to stop, then killed; the store closed). Should
    that ever stall, a stop request must still end gtune: every measurement is committed
    to the store as it is made, and workers die with their parent, so nothing is lost by
    ending here. Armed once; later calls change nothing."""
    if _deadline:
        return

    def expire() -> None:
        with contextlib.suppress(OSError):
            os.write(
                2,
                f"gtune: {why}: cleanup did not finish within {seconds:g} s; exiting "
                "(every result measured so far is in the result store)\n".encode(),
            )
        os._exit(status)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    _deadline.append(timer)
    timer.start()


def disarm_exit_deadline() -> None:
    """Cancel an armed deadline (``main`` called in-process, returning to its caller)."""
    while _deadline:
        _deadline.pop().cancel()


@contextlib.contextmanager
def cancelled_by_ctrl_c(token: CancelToken) -> Iterator[None]:
    """Ctrl-C cancels ``token`` (the command stops cooperatively, keeping every result,
    and exits 2). A Ctrl-C the command line received before cancels it at once: its
    KeyboardInterrupt would normally have ended the command already, but library code
    that catches everything while loading can swallow it."""
    try:
        previous = signal.signal(signal.SIGINT, lambda *_: token.cancel())
    except ValueError:  # not the main thread: signals are not ours
        yield
        return
    if received_interrupts:
        token.cancel()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def exit_now(status: int, why: str) -> None:
    """End the process at once (a second Ctrl-C): results already stored are kept."""
    with contextlib.suppress(OSError):
        os.write(2, f"gtune: {why}: exiting now (results already stored are kept)\n".encode())
    os._exit(status)


def parse_size(
    text: str | None, kernel: TunableKernel | None = None, *, whole: bool = False
) -> dict[str, int] | None:
    """``256x256x256`` (in the order of the kernel's problem names) or ``NX=256,NY=64``.
    ``whole``: the ``x`` form must give every size of ``kernel`` (``32x32`` for a 3D
    kernel would otherwise keep the description's NZ unseen); names set some only."""
    if text is None:
        return None
    if not text.strip():
        raise InputError("empty size; expected e.g. 256x256x256 or NX=256,NY=128", source="--size")
    if "=" in text:
        out: dict[str, int] = {}
        for part in text.split(","):
            name, _, value = part.partition("=")
            name, value = name.strip(), value.strip()
            if not name.isidentifier() or not re.fullmatch(r"[0-9]+", value, re.ASCII):
                raise InputError(f"bad size {part!r}; expected NAME=integer", source="--size")
            if name in out:
                raise InputError(f"size {name} given twice", source="--size")
            out[name] = _size_value(int(value), part)
        return out
    if not re.fullmatch(r"[0-9]+(x[0-9]+)*", text, re.ASCII):
        raise InputError(
            f"bad size {text!r}; expected e.g. 256x256x256 or NX=256,NY=128", source="--size"
        )
    values = [_size_value(int(v), text) for v in text.split("x")]
    names = list(kernel.sizes) if kernel is not None else ["NX", "NY", "NZ"]
    if len(values) > len(names):
        raise InputError(
            f"{len(values)} sizes given but the kernel has {len(names)} ({', '.join(names)})",
            source="--size",
        )
    if whole and kernel is not None and len(values) < len(names):
        raise InputError(
            f"{len(values)} size{'s' if len(values) > 1 else ''} given but the kernel has "
            f"{len(names)} ({', '.join(names)}): "
            f"give all {len(names)} ({'x'.join(str(v) for v in kernel.sizes.values())}), or "
            f"name the ones to change ({names[0]}={values[0]})",
            source="--size",
        )
    return dict(zip(names, values, strict=False))


def _size_value(value: int, given: str) -> int:
    if not 0 < value <= MAX_SIZE:
        raise InputError(
            f"bad size {given!r}: every size must be an integer from 1 to {MAX_SIZE}",
            source="--size",
        )
    return value


def writable_file(path: str | Path, option: str, *, force: bool = False) -> Path:
    """Refuse an output file that cannot be written before any work starts: a link, a
    special file, an existing file without ``force`` (:mod:`gtune.outfiles`), a folder
    that cannot be written (it is created now; nothing is left in it)."""
    p = Path(path)
    where = f"{option} {p}"
    if p.is_dir():
        raise InputError("is a directory; give a file name", source=where)
    check_target(p, force=force)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p.parent, prefix=f".{p.name}."):
            pass
    except FileExistsError:
        raise InputError("cannot create it: a parent is not a directory", source=where) from None
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=where) from None
    return p


def writable_dir(path: str | Path, option: str) -> Path:
    """Create an output directory now (or refuse it) rather than after the work."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError("exists and is not a directory", source=f"{option} {p}") from None
    except OSError as exc:
        raise InputError(f"cannot create: {exc.strerror or exc}", source=f"{option} {p}") from None
    if not os.access(p, os.W_OK):
        raise InputError("directory is not writable", source=f"{option} {p}")
    return p


def parse_config(text: str) -> dict[str, int]:
    """``WX=32,WY=4`` into a configuration."""
    out: dict[str, int] = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        try:
            if not name.strip().isidentifier():
                raise ValueError(name)
            out[name.strip()] = int(value)
        except ValueError:
            raise InputError(
                f"bad setting {part!r}; expected NAME=integer", source="--config"
            ) from None
    return out


def open_kernel(path: str, size: str | None) -> TunableKernel:
    kernel = load_kernel(path)
    sizes = parse_size(size, kernel, whole=True)
    return kernel.with_sizes(sizes) if sizes else kernel


def open_store(args: argparse.Namespace, *, readonly: bool = False) -> ResultStore:
    """The store named by ``--db`` (a path or URL), else ``$GTUNE_DB`` or the default.

    Opened before any work starts, so a store that cannot be written or reached is
    reported at once."""
    return open_store_url(getattr(args, "db", None), readonly=readonly)


REMEASURE_HELP = (
    "measure again stored configurations of these statuses instead of serving them: "
    f"{', '.join(s.value for s in Status)} or all (e.g. timeout,crashed)"
)


def parse_remeasure(text: str | None) -> frozenset[Status]:
    """``timeout,crashed`` (or ``all``) into the statuses to re-measure."""
    if text is None:
        return frozenset()
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("no status given; e.g. timeout,crashed or all", source="--remeasure")
    if "all" in names:
        return frozenset(Status)
    known = {s.value: s for s in Status}
    for name in names:
        if name not in known:
            raise InputError(
                f"unknown status {name!r}; expected {', '.join(known)} or all",
                source="--remeasure",
            )
    return frozenset(known[n] for n in names)


def quiet_console(args: argparse.Namespace, console: Console) -> Console:
    """Where a progress display draws: ``console``, or nowhere with ``--quiet``."""
    if getattr(args, "quiet", False):
        return Console(file=console.file, quiet=True)
    return console


def fmt_seconds(s: float) -> str:
    if s == float("inf"):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def size_text(problem: Mapping[str, int]) -> str:
    """A problem size as people write it: ``256x256x64``, else ``N=100,M=7``."""
    axes = [n for n in ("NX", "NY", "NZ") if n in problem]
    if problem and len(axes) == len(problem) and axes == ["NX", "NY", "NZ"][: len(axes)]:
        return "x".join(str(problem[n]) for n in axes)
    return ",".join(f"{k}={v}" for k, v in problem.items())


def selected_rows(
    store: ResultStore,
    *,
    kernel: str | None,
    device: str | None,
    history: bool = False,
) -> list[StoredRow]:
    """The rows ``--kernel`` and ``--device`` select; none is an error that says what
    the store does hold (exit status 2), never an empty answer that looks like success."""
    rows = list(store.rows(device=device, kernel=kernel, history=history))
    if rows:
        return rows
    wanted = " and ".join(
        f"{flag} {value}" for flag, value in (("--kernel", kernel), ("--device", device)) if value
    )
    held: dict[str, None] = {}
    for r in store.rows():
        held[f"{r.kernel_name} ({size_text(r.problem)}) on {r.device}"] = None
        if len(held) > 12:
            break
    if not held:
        absent = "://" not in store.location and store.location != ":memory:"
        absent = absent and not Path(store.location).exists()
        raise InputError(
            "holds no results yet",
            source=store.location,
            hint="no such file: the store is $GTUNE_DB, else ./gtune-results.db in the "
            "folder gtune ran in; run from that folder, or give gtune --db PATH"
            if absent
            else "",
        )
    listing = "; ".join(list(held)[:12]) + ("; ..." if len(held) > 12 else "")
    raise InputError(
        f"no results match {wanted or 'the selection'}; the store holds {listing}",
        source=store.location,
        hint="--kernel takes a kernel's file name (heat3d), its full name, its function "
        "name or an identity prefix; --device an identity prefix",
    )


def add_scheduler_tls_arguments(p: argparse.ArgumentParser) -> None:
    """``--tls-ca-file``/``--tls-cert``/``--tls-key`` for a ``tls://`` Dask scheduler."""
    p.add_argument(
        "--tls-ca-file",
        metavar="FILE",
        help="for a tls:// scheduler: the CA certificate that signed the scheduler's",
    )
    p.add_argument("--tls-cert", metavar="FILE", help="for a tls:// scheduler: this client's")
    p.add_argument("--tls-key", metavar="FILE", help="the key of --tls-cert (if not inside it)")


def scheduler_tls(args: argparse.Namespace) -> SchedulerTls | None:
    """The :class:`~gtune.campaign.SchedulerTls` the flags name (None without them);
    refuses certificates without a scheduler, half a pair, and with ``--scheduler``
    whatever connecting would refuse (a missing file, a ``tls://`` scheduler without
    certificates): a command calls it before it writes anything."""
    tls = None
    if args.tls_ca_file or args.tls_cert or args.tls_key:
        if not args.scheduler:
            raise InputError("TLS certificates are for a remote scheduler", source="--tls-cert")
        if not (args.tls_ca_file and args.tls_cert):
            raise InputError("give both --tls-ca-file and --tls-cert", source="--tls-cert")
        from gtune.campaign import SchedulerTls

        tls = SchedulerTls(args.tls_ca_file, args.tls_cert, args.tls_key)
    if args.scheduler:
        from gtune.campaign import check_scheduler

        check_scheduler(args.scheduler, tls)
    return tls


def unencrypted_scheduler_note(scheduler: str | None) -> str | None:
    """What a plain ``tcp://`` scheduler exposes, said once before connecting."""
    if not scheduler or scheduler.startswith("tls://"):
        return None
    return (
        f"note: {scheduler} is reached without encryption or authentication; whoever "
        "can reach that scheduler runs code on every worker and in this process "
        "(see docs/campaigns.md, Security)"
    )
