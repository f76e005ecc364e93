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

:func:`tune_kernel` is the older entry point, kept for callers that use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gtune.device import DeviceLimits
from gtune.heuristics import Budget
from gtune.kernel import TunableKernel
from gtune.measure.result import Status
from gtune.store import ResultStore
from gtune.tuning.budget import TimeBreakdown, share
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

_share = share  # the name older callers import


def tune_kernel(
    kernel: TunableKernel,
    device: DeviceLimits,
    *,
    strategy: str = "hybrid",
    spec_path: str | Path | None = None,
    technique: str | TechniquePolicy = AUTO,
    budget: Budget | None = None,
    store: ResultStore | None = None,
    runs: int | None = None,
    timeout_s: float = 60.0,
    compile_workers: int | None = None,
    options: dict[str, Any] | None = None,
    session: TuningSession | None = None,
    measure_default: bool = True,
    confirm: ConfirmPolicy | None = None,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    remeasure: Iterable[Status] = frozenset(),
) -> TuningReport:
    """Tune ``kernel`` on ``device`` (the older entry point; see :func:`gtune.tune`).

    ``measure_default=False`` skips the confirmation round (and so the default);
    without ``store`` the results are kept in memory.
    """
    from gtune.api import tune

    policy = (confirm or ConfirmPolicy()) if measure_default else None
    return tune(
        kernel,
        device=device,
        strategy=strategy,
        spec=spec_path,
        technique=technique,
        budget=budget,
        store=store if store is not None else "sqlite://",
        observer=observer,
        cancel=cancel,
        strategy_options=options,
        remeasure=remeasure,
        runs=runs,
        timeout_s=timeout_s,
        compile_workers=compile_workers,
        session=session,
        confirm=policy,
    )


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
    "TuningReport",
    "TuningSession",
    "build_space",
    "run_tuning",
    "technique_of",
    "technique_policy",
    "techniques_to_run",
    "tune_kernel",
]
