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


def alive(pid: int) -> bool:
    """Whether the process exists and has not ended (a zombie has: only its exit status
    is left)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
