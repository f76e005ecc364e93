"""The device lock: no two processes of one host time kernels on one device at once.

Several searches may share a device (a campaign with more than one worker per GPU,
two ``gtune run`` side by side): their builds overlap freely, but whatever is timed
(the warm-up, the timed runs, the checks of a measured configuration, a probing run)
holds the device's lock *exclusively*. The lock is an OS file lock (``flock``) on a
file in a per-user runtime folder, so the kernel releases it when its process ends,
however it ends (Ctrl-C, SIGKILL, a crash in the driver).

On a CPU device a build runs on the cores a timed kernel runs on: builds there hold
the lock *shared* (any number of builds at once, never while a kernel is timed). A
second file, the gate, keeps a stream of builds from starving a measurement: a
measurement takes the gate first, and a build passes the gate before it takes its
shared lock, so no build starts while a measurement waits.

Pure Python (no OpenCL): the measuring and compile workers call it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from gtune.device import DeviceLimits
from gtune.exceptions import EnvironmentProblem

LOCK_DIR_ENV = "GTUNE_LOCK_DIR"
"""Where the lock files live (default: ``$XDG_RUNTIME_DIR/gtune``, else the gtune cache
folder's ``locks``). Processes share a device's lock only if they agree on it."""

LOCK_LOG_ENV = "GTUNE_LOCK_LOG"
"""If set, a file to which every exclusive hold appends one line ``pid enter exit``
(``time.time()`` stamps taken inside the lock): a record of who held the device when."""

POLL_S = 0.005  # first pause of a waiter off the main thread (which polls)


class _Late(Exception):
    pass


def _late(signum: int, frame: object) -> None:
    raise _Late()


def _take_until(fd: int, mode: int, deadline: float) -> bool:
    """A blocking ``flock`` that an interval timer interrupts at ``deadline`` (the main
    thread only): the lock is taken the moment it is free, with no polling delay."""
    previous = signal.signal(signal.SIGALRM, _late)
    try:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        signal.setitimer(signal.ITIMER_REAL, left)
        try:
            fcntl.flock(fd, mode)
            return True
        except _Late:  # (or just after it took the lock: then this fd holds it)
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def lock_dir() -> Path:
    """The per-user folder of the lock files."""
    given = os.environ.get(LOCK_DIR_ENV)
    if given:
        return Path(given)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return Path(runtime) / "gtune"
    from gtune.space.solve import cache_dir

    return cache_dir() / "locks"


def lock_name(identity: str, selector: str, host: str | None = None) -> str:
    """The lock file's name for a device: its identity (what it is) and its selector
    (which one of the host's devices: two identical GPUs differ only there), and the
    host (a cache folder on a shared file system is shared by hosts, GPUs are not)."""
    where = host if host is not None else socket.gethostname()
    text = f"{identity}@{selector}@{where}"
    return re.sub(r"[^A-Za-z0-9._@-]+", "-", text) + ".lock"


class DeviceLock:
    """The lock of one device of this host (see the module's docs)."""

    def __init__(self, device: DeviceLimits, folder: Path | None = None) -> None:
        self.device = device
        self.path = (folder or lock_dir()) / lock_name(device.identity, device.selector)
        self.gate_path = self.path.with_suffix(".gate")
        self._fds: dict[Path, int] = {}
        self.log = os.environ.get(LOCK_LOG_ENV) or None
        self.held = False  # inside exclusive()

    def _fd(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                raise EnvironmentProblem(
                    f"cannot open the lock file of {self.device.name}: {exc}",
                    source=str(path),
                    hint=f"set {LOCK_DIR_ENV} to a writable folder",
                ) from None
            self._fds[path] = fd
        return fd

    def _take(self, path: Path, mode: int, deadline: float | None) -> bool:
        """Lock ``path`` (``fcntl.LOCK_EX`` or ``LOCK_SH``); False when ``deadline``
        (a ``time.monotonic`` instant) passes first."""
        fd = self._fd(path)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        if deadline is None:
            fcntl.flock(fd, mode)
            return True
        if threading.current_thread() is threading.main_thread():
            return _take_until(fd, mode, deadline)
        pause = POLL_S
        while True:  # signals are the main thread's: try again now and then
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(pause * 1.5, 0.05)
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass

    def busy(self) -> bool:
        """Whether another process holds the device (or waits first in line) now."""
        fd = self._fd(self.gate_path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False

    @contextlib.contextmanager
    def exclusive(
        self, timeout_s: float | None = None, on_wait: Callable[[bool], None] | None = None
    ) -> Iterator[float]:
        """Hold the device alone; yields the seconds waited for it. ``on_wait(True)``
        is called before waiting (only if the device is busy), ``on_wait(False)`` once
        it is held after a wait. Raises :class:`EnvironmentProblem` when ``timeout_s``
        passes first (nothing stays locked)."""
        start = time.monotonic()
        deadline = None if timeout_s is None else start + timeout_s
        waiting = False

        def take(path: Path) -> None:
            nonlocal waiting
            fd = self._fd(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            if not waiting and on_wait is not None:
                on_wait(True)
            waiting = True
            if not self._take(path, fcntl.LOCK_EX, deadline):
                raise self._timed_out(timeout_s)

        take(self.gate_path)
        try:
            take(self.path)
            try:
                waited = time.monotonic() - start
                if waiting and on_wait is not None:
                    on_wait(False)
                self.held = True
                entered = time.time()
                yield waited
                if self.log:
                    with open(self.log, "a") as fh:
                        fh.write(f"{os.getpid()} {entered:.6f} {time.time():.6f}\n")
            finally:
                self.held = False
                fcntl.flock(self._fd(self.path), fcntl.LOCK_UN)
        finally:
            fcntl.flock(self._fd(self.gate_path), fcntl.LOCK_UN)

    @contextlib.contextmanager
    def shared(self, timeout_s: float | None = None) -> Iterator[bool]:
        """Hold the device beside other builds, never while a kernel is timed; yields
        whether it is held (False when ``timeout_s`` passed first: go on unlocked).
        Inside :meth:`exclusive` of this same lock it does nothing (held already)."""
        if self.held:
            yield True
            return
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        held = False
        if self._take(self.gate_path, fcntl.LOCK_EX, deadline):
            try:
                held = self._take(self.path, fcntl.LOCK_SH, deadline)
            finally:
                fcntl.flock(self._fd(self.gate_path), fcntl.LOCK_UN)
        try:
            yield held
        finally:
            if held:
                fcntl.flock(self._fd(self.path), fcntl.LOCK_UN)

    def _timed_out(self, timeout_s: float | None) -> EnvironmentProblem:
        return EnvironmentProblem(
            f"{self.device.name} ({self.device.selector}) was measured by another process "
            f"for over {timeout_s:g} s",
            source=str(self.path),
            hint="another gtune process holds this device; `fuser` on the lock file names it",
        )

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def __del__(self) -> None:  # a pooled worker makes one per kernel: no fd left open
        with contextlib.suppress(Exception):
            self.close()


__all__ = ["LOCK_DIR_ENV", "LOCK_LOG_ENV", "DeviceLock", "lock_dir", "lock_name"]
