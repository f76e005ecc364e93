"""Build slots: at most so many builds at once on this host, whoever runs them.

A campaign on several GPUs of one host runs several searches at once, each with its
own compile helpers; all of them build on the host's cores. Given a count (the
environment variable ``GTUNE_BUILD_SLOTS``, set by the campaign's local cluster from
the host's physical cores), every compile helper takes one of that many slots for each
build. The helpers of all workers so share one budget: a GPU whose searches have ended
builds nothing and leaves its slots to the others, and together they never run more
builds than the host has cores for.

A slot is an OS file lock (``flock``) on one of ``count`` files in the lock folder
(:func:`gtune.measure.devlock.lock_dir`): the kernel releases it when its process ends,
however it ends. A build that finds every slot taken tries again after a short pause;
one that has waited :data:`MAX_WAIT_S` builds without a slot (its parent's time limit
for the build runs meanwhile).
Pure Python (no OpenCL): the compile workers call it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from gtune.exceptions import EnvironmentProblem
from gtune.measure.devlock import LOCK_DIR_ENV, lock_dir

BUILD_SLOTS_ENV = "GTUNE_BUILD_SLOTS"
"""Builds this host runs at once (all processes together); unset or 0: no limit."""

FIRST_PAUSE_S = 0.001  # a waiter's first pause; it grows to MAX_PAUSE_S
MAX_PAUSE_S = 0.02
MAX_WAIT_S = 10.0  # a build waits at most this long for a slot, then builds anyway


def slots_from_env() -> int:
    """The count ``GTUNE_BUILD_SLOTS`` gives (0: none given, or not a count)."""
    text = os.environ.get(BUILD_SLOTS_ENV, "").strip()
    return int(text) if text.isascii() and text.isdigit() else 0


class BuildSlots:
    """``count`` slots shared by every process of this host that uses the same folder."""

    def __init__(self, count: int, folder: Path | None = None) -> None:
        if count < 1:
            raise ValueError("build slots: the count must be at least 1")
        self.count = count
        host = socket.gethostname().replace("/", "-") or "host"
        self.folder = (folder or lock_dir()) / f"build-slots@{host}"
        self._fds: list[int] = []
        #: Seconds waited for a slot, over all builds so far, and builds that waited.
        self.waited_s = 0.0
        self.waits = 0
        #: Builds that waited ``max_wait_s`` and went ahead without a slot.
        self.unslotted = 0

    def _open(self) -> list[int]:
        if len(self._fds) < self.count:
            try:
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                for i in range(len(self._fds), self.count):
                    path = self.folder / f"slot-{i}"
                    self._fds.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
            except OSError as exc:
                raise EnvironmentProblem(
                    f"cannot open the build slots: {exc}",
                    source=str(self.folder),
                    hint=f"set {LOCK_DIR_ENV} to a writable folder",
                ) from None
        return self._fds

    def _try(self, fds: list[int], first: int) -> int | None:
        for k in range(len(fds)):
            fd = fds[(first + k) % len(fds)]
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                continue
        return None

    @contextlib.contextmanager
    def held(self, max_wait_s: float = MAX_WAIT_S) -> Iterator[float]:
        """Hold one slot; yields the seconds waited for it. After ``max_wait_s`` the
        build goes ahead without one: the parent's time limit for a build counts from
        when it asked, and a build must not time out waiting (unslotted builds)."""
        fds = self._open()
        start = time.monotonic()
        first = random.randrange(len(fds))  # waiters spread over the slots
        fd = self._try(fds, first)
        pause = FIRST_PAUSE_S
        while fd is None and time.monotonic() - start < max_wait_s:
            time.sleep(pause)
            pause = min(pause * 1.5, MAX_PAUSE_S)
            fd = self._try(fds, random.randrange(len(fds)))
        waited = time.monotonic() - start
        if waited > FIRST_PAUSE_S / 2:
            self.waited_s += waited
            self.waits += 1
        if fd is None:
            self.unslotted += 1
        try:
            yield waited
        finally:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def host_slots() -> BuildSlots | None:
    """The build slots ``GTUNE_BUILD_SLOTS`` asks for, or None (builds unlimited)."""
    count = slots_from_env()
    return BuildSlots(count) if count > 0 else None


__all__ = ["BUILD_SLOTS_ENV", "BuildSlots", "host_slots", "slots_from_env"]
