"""Which stored configuration is a kernel's best: the answer ``gtune run`` gave.

A search measures configurations minutes apart; its fastest row is partly luck. The
confirmation round at the end of ``gtune run`` re-measures the best candidates and the
default side by side and writes each one's pooled times to the store, marked with
:data:`CONFIRMATION` (the round's id, whether it is the round's best and whether it
is the default). Ranking puts the latest round's configurations first, in the order the
round measured them, then every other configuration that ran correctly, fastest first:
so the first row is the best ``gtune run`` reported, and ``results --best``, ``export``
and ``run`` agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gtune.result import StoredRow

CONFIRMED = "/confirmed"
"""Suffix of the kernel identity confirmation-round rows are stored under: beside the
kernel's own rows (a prefix lookup of the identity finds both), never served to a search
in place of what it measured, so a repeated run replays exactly."""

CONFIRMATION = "confirmation"
"""Key in a result's ``extra`` of a confirmation-round measurement: a mapping with
``round`` (the round's id), ``best`` and ``default`` (booleans) and ``rounds``."""

Group = tuple[str, str]
"""(device identity, kernel identity)."""


def confirmation(row: StoredRow) -> Mapping[str, Any] | None:
    """The confirmation mark of ``row``; None for a search measurement."""
    mark = row.result.extra.get(CONFIRMATION)
    return mark if isinstance(mark, Mapping) and mark.get("round") else None


def confirmed_role(row: StoredRow) -> str:
    """``best``, ``default``, ``best,default``, ``candidate`` or '' (not confirmed)."""
    mark = confirmation(row)
    if mark is None:
        return ""
    roles = [name for name in ("best", "default") if mark.get(name)]
    return ",".join(roles) or "candidate"


def confirmed_id(kernel_id: str) -> str:
    """The identity a kernel's confirmation-round rows are stored under."""
    return kernel_id + CONFIRMED


def base_id(kernel_id: str) -> str:
    """The kernel identity of a row, confirmation-round rows included."""
    return kernel_id.removesuffix(CONFIRMED)


def groups(rows: Iterable[StoredRow]) -> dict[Group, list[StoredRow]]:
    """Rows by (device, kernel identity), confirmation rows with their kernel's, in
    first-seen order."""
    out: dict[Group, list[StoredRow]] = {}
    for r in rows:
        out.setdefault((r.device, base_id(r.kernel_id)), []).append(r)
    return out


def latest_round(rows: Iterable[StoredRow]) -> str | None:
    """The id of the newest confirmation round among ``rows`` (one kernel, one device)."""
    newest: StoredRow | None = None
    for r in rows:
        if confirmation(r) is not None and (newest is None or r.row_id > newest.row_id):
            newest = r
    if newest is None:
        return None
    mark = confirmation(newest)
    return str(mark["round"]) if mark is not None else None


def ranked(rows: Iterable[StoredRow]) -> list[StoredRow]:
    """The rows of one kernel on one device that ran correctly, best first: the latest
    confirmation round's (its best first), then the others fastest first."""
    ok = [r for r in rows if r.result.ok]
    current = latest_round(ok)

    def in_round(r: StoredRow) -> bool:
        mark = confirmation(r)
        return mark is not None and str(mark["round"]) == current

    head = sorted(
        (r for r in ok if in_round(r)),
        key=lambda r: (not bool((confirmation(r) or {}).get("best")), r.result.median_s),
    )
    rest = sorted((r for r in ok if not in_round(r)), key=lambda r: r.result.median_s)
    return head + rest


def best_rows(rows: Iterable[StoredRow], n: int) -> list[StoredRow]:
    """The ``n`` best rows of every (device, kernel) group (see :func:`ranked`)."""
    return [r for group in groups(rows).values() for r in ranked(group)[:n]]


def confirmed_default(rows: Iterable[StoredRow]) -> StoredRow | None:
    """The default configuration as the latest confirmation round measured it."""
    rows = list(rows)
    current = latest_round(rows)
    for r in rows:
        mark = confirmation(r)
        if mark is not None and str(mark["round"]) == current and mark.get("default"):
            return r
    return None


__all__ = [
    "CONFIRMATION",
    "CONFIRMED",
    "base_id",
    "best_rows",
    "confirmation",
    "confirmed_default",
    "confirmed_id",
    "confirmed_role",
    "groups",
    "latest_round",
    "ranked",
]
