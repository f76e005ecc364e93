"""Budgets across the searches of a run, the run's clock, and where the time went.

A budget (:class:`~gtune.budget.Budget`) covers the whole run. Its evaluations and
measured seconds are shared by the technique searches (each gets an equal part of what
the earlier ones left). Its wall time is one deadline for everything, from the moment
the run starts: the searches may use it up to a reserve kept for the confirmation
round, and no configuration is handed out once the deadline has passed or when the
time left is shorter than a configuration is expected to take, so a run ends within
one configuration of its budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gtune.budget import Budget
from gtune.measure.result import Result

CONFIRM_RESERVE = 0.15  # share of a wall-time budget kept for the confirmation round
SEGMENT_MIN = 3  # configurations a search measures before its own pace is used
SCOUT_SHARE = 0.4
"""Share of a wall-time budget's search time in which several searches (one per
technique) each scout, equally; the rest goes to the searches whose best leads."""
SPARE_ROUNDS = 6
"""Confirmation rounds beyond the policy's that a wall-time budget's reserve may hold."""
LEAD_FACTOR = 1.25
"""A scouted search leads when its best is within this factor of the fastest's."""


def share(budget: Budget | None, runs_left: int, spent_evals: int, spent_s: float) -> Budget | None:
    """This search's part of the evaluations and measured seconds still left."""
    if budget is None:
        return None
    evaluations = seconds = None
    if budget.evaluations is not None:
        left = max(0, budget.evaluations - spent_evals)
        evaluations = max(1, left // runs_left) if left else 0
    if budget.seconds is not None:
        seconds = max(0.0, budget.seconds - spent_s) / runs_left
    return Budget(evaluations=evaluations, seconds=seconds)


class Clock:
    """The run's wall clock: its deadline, and the pace of configurations so far."""

    def __init__(self, wall_seconds: float | None, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self.wall_seconds = wall_seconds
        self._fresh = 0
        self._pace_from: float | None = None
        self.exclude: Callable[[], float] | None = None
        self._seg_from: float | None = None
        self._seg_fresh = 0
        self._seg_excluded = 0.0
        self.last_room: tuple[float, float] | None = None  # seconds left, per configuration

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def deadline(self) -> float:
        if self.wall_seconds is None:
            return math.inf
        return self.started + self.wall_seconds

    @property
    def search_deadline(self) -> float:
        """When the searches stop, keeping a reserve for the confirmation round."""
        if self.wall_seconds is None:
            return math.inf
        return self.started + self.wall_seconds * (1.0 - CONFIRM_RESERVE)

    def left(self, until: float | None = None) -> float:
        end = self.deadline if until is None else until
        return end - time.monotonic()

    def start_pacing(self) -> None:
        """Measuring starts now: the pace is wall time from here per configuration."""
        if self._pace_from is None:
            self._pace_from = time.monotonic()

    def measured(self) -> None:
        """One more configuration measured now (not served by the store)."""
        self._fresh += 1
        self._seg_fresh += 1

    def segment(self) -> None:
        """A new search begins: once it has measured a few configurations, its own pace
        (techniques differ: streaming builds take longer) replaces the run's."""
        self._seg_from = time.monotonic()
        self._seg_fresh = 0
        self._seg_excluded = self._excluded()

    def _excluded(self) -> float:
        return self.exclude() if self.exclude is not None else 0.0

    def per_config(self) -> float | None:
        """Mean wall seconds per configuration measured so far (None before any): the
        current search's once it has measured ``SEGMENT_MIN``, else the run's; neither
        counts the seconds ``exclude`` reports (starting the workers)."""
        now = time.monotonic()
        if self._seg_from is not None and self._seg_fresh >= SEGMENT_MIN:
            spent = now - self._seg_from - (self._excluded() - self._seg_excluded)
            return max(0.0, spent) / self._seg_fresh
        if not self._fresh or self._pace_from is None:
            return None
        return max(0.0, now - self._pace_from - self._excluded()) / self._fresh

    def room_for(self, until: float) -> int | None:
        """How many more configurations fit before ``until`` (None: no limit known)."""
        if not math.isfinite(until):
            return None
        left = until - time.monotonic()
        if left <= 0:
            return 0
        pace = self.per_config()
        if pace is None or pace <= 0:
            return None
        self.last_room = (left, pace)
        return int(left // pace)


# -------------------------------------------------------------------------------------
# Where the time went


def _extra_s(result: Result, key: str) -> float:
    """A non-negative number of seconds from ``result.extra`` (0 when absent or odd)."""
    value: Any = result.extra.get(key) if isinstance(result.extra, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) and value > 0 else 0.0


@dataclass
class TimeBreakdown:
    """Wall time split into compile, run, verify and overhead; the four sum to ``wall_s``.

    Sums over the configurations measured now (those served by the store cost nothing):
    ``run_s`` is timed runs plus warm-ups, ``verify_s`` the output checks; compiling
    overlapped with measuring (parallel builds) is not wall time of its own, so
    ``compile_s`` counts only the part that did not overlap and ``compile_hidden_s`` the
    rest. ``overhead_s`` is everything else, broken down into ``space_s`` (solving the
    tuning space, or reading it from the cache), ``startup_s`` (starting the measuring
    workers and putting the problem's data on the device), ``store_s`` (reading and
    writing the result store, claims included), ``wait_s`` (waiting for the device
    while another process measured on it: gtune.measure.devlock) and ``other_s`` (the rest:
    handing configurations to the workers and back, the store, the search itself).
    """

    wall_s: float = 0.0
    compile_s: float = 0.0
    run_s: float = 0.0
    verify_s: float = 0.0
    overhead_s: float = 0.0
    compile_hidden_s: float = 0.0
    compile_total_s: float = 0.0
    space_s: float = 0.0
    startup_s: float = 0.0
    store_s: float = 0.0
    wait_s: float = 0.0
    other_s: float = 0.0

    def add(self, result: Result) -> None:
        self.compile_total_s += max(0.0, result.compile_s)
        self.run_s += result.run_s + _extra_s(result, "warmup_s")
        self.verify_s += _extra_s(result, "verify_s")
        self.wait_s += _extra_s(result, "wait_s")

    def close(self, wall_s: float) -> None:
        """Settle the split at the end of the run so that it sums to ``wall_s``."""
        self.wall_s = wall_s
        serial = self.run_s + self.verify_s
        if serial > wall_s:  # clocks of different processes; never report negative time
            scale = wall_s / serial if serial > 0 else 0.0
            self.run_s *= scale
            self.verify_s *= scale
            serial = wall_s
        self.compile_s = min(self.compile_total_s, wall_s - serial)
        self.compile_hidden_s = self.compile_total_s - self.compile_s
        self.overhead_s = max(0.0, wall_s - serial - self.compile_s)
        parts = self.space_s + self.startup_s + self.store_s + self.wait_s
        known = min(self.overhead_s, parts)
        if known < parts:  # clocks of different processes
            scale = known / parts
            self.space_s *= scale
            self.startup_s *= scale
            self.store_s *= scale
            self.wait_s *= scale
        self.other_s = self.overhead_s - known

    def to_dict(self) -> dict[str, float]:
        return {
            "wall_s": self.wall_s,
            "compile_s": self.compile_s,
            "run_s": self.run_s,
            "verify_s": self.verify_s,
            "overhead_s": self.overhead_s,
            "compile_hidden_s": self.compile_hidden_s,
            "compile_total_s": self.compile_total_s,
            "space_s": self.space_s,
            "startup_s": self.startup_s,
            "store_s": self.store_s,
            "wait_s": self.wait_s,
            "other_s": self.other_s,
        }


__all__ = [
    "CONFIRM_RESERVE",
    "LEAD_FACTOR",
    "SCOUT_SHARE",
    "SPARE_ROUNDS",
    "Clock",
    "TimeBreakdown",
    "share",
]
