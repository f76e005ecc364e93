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

from gtune.tuning.budget import TimeBreakdown
from gtune.tuning.confirm import Confirmation, ConfirmedConfig, ConfirmPolicy
from gtune.tuning.driver import run_tuning
from gtune.tuning.events import (
    BatchStarted,
    CampaignStarted,
    CancelToken,
    Confirmed,
    ConfirmStarted,
    NullObserver,
    Observer,
    ResultMeasured,
    RunFinished,
    RunStarted,
    SearchStarted,
    TaskFinished,
    TaskProgress,
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

__all__ = [
    "ALL",
    "AUTO",
    "NO_PREDICTOR_NOTE",
    "WHOLE",
    "BatchStarted",
    "CampaignStarted",
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
    "ResultMeasured",
    "RunFinished",
    "RunStarted",
    "SearchStarted",
    "TaskFinished",
    "TaskProgress",
    "TaskStarted",
    "TechniqueChoice",
    "TechniquePolicy",
    "TechniqueRun",
    "TimeBreakdown",
    "TuningEvent",
    "TuningInterrupted",
    "TuningReport",
    "TuningSession",
    "build_space",
    "run_tuning",
    "technique_of",
    "technique_policy",
    "techniques_to_run",
]
