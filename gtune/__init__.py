"""gtune: autotuning of OpenCL stencil kernels.

The flow: a :class:`~gtune.kernel.TunableKernel` and a device's
:class:`~gtune.device.DeviceLimits` give a pruned :mod:`gtune.space`; heuristics in
:mod:`gtune.heuristics` walk it group by group through an
:class:`~gtune.measure.Evaluator`; every :class:`~gtune.measure.Result` lands in the
:mod:`gtune.store`. :func:`tune` and :class:`Campaign` are the library's entry points.
"""

import os as _os
import sys as _sys


def _drop_working_directory() -> None:
    """The gtune command imports nothing from the directory it was started in: the
    entry ``python -m gtune`` puts first, empty ``PYTHONPATH`` entries (which Python
    reads as the working directory) and ``.`` are taken off ``sys.path`` before
    anything else is imported, so that no module lying there (a ``numpy.py``) runs.
    A ``PYTHONPATH`` entry naming the working directory by its absolute path stays: the
    user wrote it out (docs/robustness.md, security model). Only the gtune command does
    this; ``import gtune`` in a program of the user's leaves its path alone."""
    try:
        cwd = _os.getcwd()
    except OSError:  # the working directory was removed: nothing can be found there
        return
    named = {e for e in _os.environ.get("PYTHONPATH", "").split(_os.pathsep) if _os.path.isabs(e)}
    keep = {cwd} if any(_os.path.realpath(e) == _os.path.realpath(cwd) for e in named) else set()
    _sys.path[:] = [e for e in _sys.path if e not in ("", ".") and (e != cwd or e in keep)]


if _sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0]) in ("gtune", "gtune.exe"):
    # ``python -m gtune`` (argv[0] is "-m" while the package imports) or the console
    # script: the gtune command itself
    _drop_working_directory()

import importlib as _importlib  # noqa: E402
import logging  # noqa: E402
import typing as _typing  # noqa: E402

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
