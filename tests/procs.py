"""Reading processes from /proc, for tests of what gtune starts and ends."""

from __future__ import annotations

import contextlib
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (any of its threads')."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def descendants(pid: int) -> list[int]:
    """Its children, their children, and so on."""
    out: list[int] = []
    for kid in children(pid):
        out += [kid, *descendants(kid)]
    return out


def cmdline(pid: int) -> str:
    """The process's command line, its arguments joined by spaces ('' once it ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def command_name(pid: int) -> str:
    """The process's command (at most 15 characters, as the kernel keeps it)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command's name (the state first), or
    none where the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with its pid, it names one
    process, where a pid alone may name a later one (pids wrap at 32768 here, and a
    loaded test machine starts thousands of processes a minute)."""
    fields = _stat(pid)
    return int(fields[19]) if len(fields) > 19 else None


def alive(pid: int, started: int | None = None) -> bool:
    """Whether the process exists and has not ended (a zombie has: only its exit status
    is left); with ``started`` (:func:`start_time`), whether that very process has not:
    another that took its pid since does not count."""
    fields = _stat(pid)
    if not fields or fields[0] in ("Z", "X"):
        return False
    return started is None or start_time(pid) == started
