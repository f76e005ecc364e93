"""Progress as events, and cancellation as a token.

Library code never prints: it tells an :class:`Observer` what happens, as typed event
records (of a tuning run, and of a campaign's tasks), and a display (the command line's
progress bar, a notebook widget, a log) decides what to show. Stopping is asked for
with a :class:`CancelToken`; the search checks it between configurations, so a stop
never leaves a configuration half recorded, and everything measured until then is in
the report and the store.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gtune.measure.result import Result

if TYPE_CHECKING:
    from gtune.tuning.confirm import Confirmation
    from gtune.tuning.report import TuningReport


@dataclass(frozen=True)
class TaskStarted:
    """A campaign starts one of its tasks (``index`` counts from 0)."""

    label: str
    index: int
    total: int


@dataclass(frozen=True)
class CampaignStarted:
    """A campaign on Dask workers begins: ``total`` tasks, ``skipped`` of them finished
    by an earlier run of the same campaign, on ``devices``."""

    total: int
    skipped: int
    devices: tuple[str, ...]


@dataclass(frozen=True)
class TaskProgress:
    """A campaign task (``task``: its key) has used ``configs`` configurations on
    ``device``, ``measured`` of them measured now (the rest served by the store)."""

    task: str
    device: str
    configs: int
    measured: int


@dataclass(frozen=True)
class TaskFinished:
    """A campaign task ended: its ``summary`` (the ledger's row), or ``error`` when it
    failed on every retry (``summary`` is then None)."""

    key: str
    label: str
    size: str
    strategy: str
    device: str
    summary: Mapping[str, Any] | None
    error: str = ""


@dataclass(frozen=True)
class RunStarted:
    """A tuning run (one kernel, one device, one strategy) begins."""

    kernel: str
    device: str
    strategy: str
    techniques: tuple[str | None, ...]


@dataclass(frozen=True)
class SearchStarted:
    """One search begins: the strategy on one technique's space (or the whole space)."""

    label: str
    technique: str | None
    total: int | None  # configurations it will use, when known in advance


@dataclass(frozen=True)
class BatchStarted:
    """The search hands ``size`` configurations of ``step`` to the evaluator."""

    step: str
    size: int


@dataclass(frozen=True)
class ResultMeasured:
    """One configuration done; ``fresh``: measured now (else served by the store)."""

    result: Result
    fresh: bool
    best_s: float  # the best time of the current search so far (inf before any)


@dataclass(frozen=True)
class ConfirmStarted:
    """The confirmation round begins: ``configs`` re-measured ``rounds`` times each."""

    configs: int
    rounds: int
    label: str = "confirmation round"


@dataclass(frozen=True)
class Confirmed:
    """The confirmation round is over."""

    confirmation: Confirmation


@dataclass(frozen=True)
class RunFinished:
    """The run is over (finished, out of budget or cancelled); the full report."""

    report: TuningReport


TuningEvent = (
    TaskStarted
    | CampaignStarted
    | TaskProgress
    | TaskFinished
    | RunStarted
    | SearchStarted
    | BatchStarted
    | ResultMeasured
    | ConfirmStarted
    | Confirmed
    | RunFinished
)


class Observer(Protocol):
    """Told every event of a tuning run, in order, from the thread that tunes; and of a
    campaign (its tasks' progress arrives from Dask's event thread, the rest from the
    thread that runs the campaign). An observer ignores the events it has no use for."""

    def on_event(self, event: TuningEvent) -> None: ...


class NullObserver:
    """Ignores every event."""

    def on_event(self, event: TuningEvent) -> None:
        return None


log = logging.getLogger("gtune.tuning")


def log_event(event: TuningEvent) -> None:
    """Every event on the ``gtune.tuning`` logger: milestones at INFO, results at DEBUG."""
    if isinstance(event, ResultMeasured):
        if log.isEnabledFor(logging.DEBUG):
            r = event.result
            how = "measured" if event.fresh else "from the store"
            time_s = f"{r.median_s:.4g} s" if math.isfinite(r.median_s) else "-"
            log.debug("%s %s: %s, %s", how, dict(r.config), r.status.value, time_s)
        return
    if not log.isEnabledFor(logging.INFO):
        return
    if isinstance(event, TaskStarted):
        log.info("task %d of %d: %s", event.index + 1, event.total, event.label)
    elif isinstance(event, RunStarted):
        which = ", ".join(t or "whole space" for t in event.techniques)
        log.info(
            "tuning %s on %s with %s (techniques: %s)",
            event.kernel,
            event.device,
            event.strategy,
            which,
        )
    elif isinstance(event, SearchStarted):
        size = f" ({event.total} configurations)" if event.total is not None else ""
        log.info("search %s%s", event.label, size)
    elif isinstance(event, BatchStarted):
        log.debug("step %s: %d configurations", event.step, event.size)
    elif isinstance(event, ConfirmStarted):
        log.info("%s: %d configurations x %d rounds", event.label, event.configs, event.rounds)
    elif isinstance(event, RunFinished):
        rep = event.report
        best = f"{rep.best_s:.4g} s" if math.isfinite(rep.best_s) else "nothing valid"
        log.info(
            "finished %s: best %s after %d configurations (%d measured, %d from the store)",
            rep.kernel_label or rep.kernel,
            best,
            rep.evaluations,
            rep.measured,
            rep.reused,
        )


class LoggedObserver:
    """Logs every event (:func:`log_event`), then tells ``observer`` (if any)."""

    def __init__(self, observer: Observer | None = None) -> None:
        self.observer = observer

    def on_event(self, event: TuningEvent) -> None:
        log_event(event)
        if self.observer is not None:
            self.observer.on_event(event)


class CancelToken:
    """Asks a running search to stop after the configuration it is measuring.

    Thread-safe and signal-safe: a Ctrl-C handler, a timer or another thread may call
    :meth:`cancel`. ``reason`` says why (shown in the report's notes).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        if not self._event.is_set():
            self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


__all__ = [
    "BatchStarted",
    "CampaignStarted",
    "CancelToken",
    "ConfirmStarted",
    "Confirmed",
    "LoggedObserver",
    "NullObserver",
    "Observer",
    "ResultMeasured",
    "RunFinished",
    "RunStarted",
    "SearchStarted",
    "TaskFinished",
    "TaskProgress",
    "TaskStarted",
    "TuningEvent",
    "log_event",
]
