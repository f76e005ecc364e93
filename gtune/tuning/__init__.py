"""Tuning one kernel on one device: the pieces behind :func:`gtune.tune`.

Read in this order:

- :mod:`~gtune.tuning.session` -- a kernel on a device: its space and its evaluator,
  made once and shared by every search (``TuningSession``);
- :mod:`~gtune.tuning.techniques` -- which data-loading technique(s) to search
  (``TechniquePolicy``: the oracle today, a load predictor later);
- :mod:`~gtune.tuning.strategy` -- which strategy runs, adapted to the kernel's
  parameters, with its options;
- :mod:`~gtune.tuning.budget` -- budgets shared by the searches, the run's clock and
  the wall-time breakdown;
- :mod:`~gtune.tuning.driver` -- the search driver that ties them together;
- :mod:`~gtune.tuning.confirm` -- the confirmation round at the end of a run;
- :mod:`~gtune.tuning.report` -- what a run found (``TuningReport``);
- :mod:`~gtune.tuning.events` -- progress events and the cancel token.

The entry points are above this package: :func:`gtune.tune` and :func:`run_tuning`.
"""

from __future__ import annotations

from typing import Protocol

from gtune.measure.result import Result
from gtune.tuning.budget import TimeBreakdown
from gtune.tuning.confirm import Confirmation, ConfirmedConfig, ConfirmPolicy
from gtune.tuning.driver import run_tuning
from gtune.tuning.events import (
    BatchStarted,
    CancelToken,
    Confirmed,
    ConfirmStarted,
    NullObserver,
    Observer,
    ResultMeasured,
    RunFinished,
    RunStarted,
    SearchStarted,
    TaskStarted,
    TuningEvent,
)
from gtune.tuning.report import TechniqueRun, TuningInterrupted, TuningReport
from gtune.tuning.session import TuningSession, build_space
from gtune.tuning.techniques import (
    ALL,
    AUTO,
    NO_PREDICTOR_NOTE,
    WHOLE,
    FixedTechniquePolicy,
    OracleTechniquePolicy,
    PredictedTechniquePolicy,
    TechniqueChoice,
    TechniquePolicy,
    technique_of,
    technique_policy,
    techniques_to_run,
)


class TuningProgress(Protocol):
    """The older progress interface (three calls); see :class:`ProgressObserver`."""

    def run_started(self, label: str, total: int | None) -> None: ...

    def batch_started(self, step: str, size: int) -> None: ...

    def result(self, result: Result, fresh: bool, best_s: float) -> None: ...


class ProgressObserver:
    """Turns events into the calls of a :class:`TuningProgress`."""

    def __init__(self, progress: TuningProgress) -> None:
        self.progress = progress

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, SearchStarted):
            self.progress.run_started(event.label, event.total)
        elif isinstance(event, BatchStarted):
            self.progress.batch_started(event.step, event.size)
        elif isinstance(event, ResultMeasured):
            self.progress.result(event.result, event.fresh, event.best_s)
        elif isinstance(event, ConfirmStarted):
            self.progress.run_started("confirmation round", event.configs * event.rounds)
            self.progress.batch_started("confirm", event.configs)


__all__ = [
    "ALL",
    "AUTO",
    "NO_PREDICTOR_NOTE",
    "WHOLE",
    "BatchStarted",
    "CancelToken",
    "ConfirmPolicy",
    "ConfirmStarted",
    "Confirmation",
    "Confirmed",
    "ConfirmedConfig",
    "FixedTechniquePolicy",
    "NullObserver",
    "Observer",
    "OracleTechniquePolicy",
    "PredictedTechniquePolicy",
    "ProgressObserver",
    "ResultMeasured",
    "RunFinished",
    "RunStarted",
    "SearchStarted",
    "TaskStarted",
    "TechniqueChoice",
    "TechniquePolicy",
    "TechniqueRun",
    "TimeBreakdown",
    "TuningEvent",
    "TuningInterrupted",
    "TuningProgress",
    "TuningReport",
    "TuningSession",
    "build_space",
    "run_tuning",
    "technique_of",
    "technique_policy",
    "techniques_to_run",
]
