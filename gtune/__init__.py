"""gtune: autotuning of OpenCL stencil kernels.

The flow: a :class:`~gtune.kernel.TunableKernel` and a device's
:class:`~gtune.device.DeviceLimits` give a pruned :mod:`gtune.space`; heuristics in
:mod:`gtune.heuristics` walk it group by group through an
:class:`~gtune.measure.Evaluator`; every :class:`~gtune.measure.Result` lands in the
:mod:`gtune.store`. :func:`tune` and :class:`Campaign` are the library's entry points.
"""

import os as _os
import sys as _sys

if _sys.argv[:1] == ["-m"] and not _sys.flags.safe_path and _sys.path[:1] == [_os.getcwd()]:
    # ``python -m gtune`` put the working directory first on sys.path: take it off
    # before anything is imported, so that no module lying there (a ``numpy.py``)
    # runs. A PYTHONPATH entry naming it stays (docs/robustness.md, security model).
    del _sys.path[0]

import importlib as _importlib
import logging
import typing as _typing

if _typing.TYPE_CHECKING:
    from gtune.api import Campaign, CampaignResult, TuningTask, run_task, tune
    from gtune.description import load_kernel
    from gtune.device import DeviceLimits
    from gtune.exceptions import GtuneError, InputError
    from gtune.kernel import TunableKernel
    from gtune.measure import Evaluator, ReplayEvaluator, Result, Status, StoredEvaluator
    from gtune.progress import ProgressBar
    from gtune.store import SQLiteStore
    from gtune.tuned import TunedKernel, tuned_kernel
    from gtune.tuning import (
        CancelToken,
        ConfirmPolicy,
        FixedTechniquePolicy,
        Observer,
        OracleTechniquePolicy,
        PredictedTechniquePolicy,
        TechniquePolicy,
        TuningReport,
    )

# The entry points are imported on first use (PEP 562): ``import gtune`` alone, as each
# worker process's ``python -m gtune.measure._worker`` does, then costs nothing beyond
# the modules that process needs, instead of the whole library (0.4 s per process).
_LAZY = {
    "gtune.api": ("Campaign", "CampaignResult", "TuningTask", "run_task", "tune"),
    "gtune.description": ("load_kernel",),
    "gtune.device": ("DeviceLimits",),
    "gtune.exceptions": ("GtuneError", "InputError"),
    "gtune.kernel": ("TunableKernel",),
    "gtune.measure": ("Evaluator", "ReplayEvaluator", "Result", "Status", "StoredEvaluator"),
    "gtune.progress": ("ProgressBar",),
    "gtune.store": ("SQLiteStore",),
    "gtune.tuned": ("TunedKernel", "tuned_kernel"),
    "gtune.tuning": (
        "CancelToken",
        "ConfirmPolicy",
        "FixedTechniquePolicy",
        "Observer",
        "OracleTechniquePolicy",
        "PredictedTechniquePolicy",
        "TechniquePolicy",
        "TuningReport",
    ),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> _typing.Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'gtune' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


__version__ = "0.2.0"  # pyproject.toml's version (tests/commands/test_cli_logging.py)

# gtune logs to the "gtune" logger hierarchy (gtune.tuning, gtune.store, gtune.campaign,
# ...); an application decides whether and where the records go.
logging.getLogger("gtune").addHandler(logging.NullHandler())

__all__ = [
    "Campaign",
    "CampaignResult",
    "CancelToken",
    "ConfirmPolicy",
    "DeviceLimits",
    "Evaluator",
    "FixedTechniquePolicy",
    "GtuneError",
    "InputError",
    "Observer",
    "OracleTechniquePolicy",
    "PredictedTechniquePolicy",
    "ProgressBar",
    "ReplayEvaluator",
    "Result",
    "SQLiteStore",
    "Status",
    "StoredEvaluator",
    "TechniquePolicy",
    "TunableKernel",
    "TunedKernel",
    "TuningReport",
    "TuningTask",
    "__version__",
    "load_kernel",
    "run_task",
    "tune",
    "tuned_kernel",
]
