"""gtune: autotuning of OpenCL stencil kernels.

The flow: a :class:`~gtune.kernel.TunableKernel` and a device's
:class:`~gtune.device.DeviceLimits` give a pruned :mod:`gtune.space`; heuristics in
:mod:`gtune.heuristics` walk it group by group through an
:class:`~gtune.measure.Evaluator`; every :class:`~gtune.measure.Result` lands in the
:mod:`gtune.store`.
"""

from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError, InputError
from gtune.kernel import TunableKernel, load_kernel
from gtune.measure import Evaluator, ReplayEvaluator, Result, Status, StoredEvaluator
from gtune.store import SQLiteStore

__version__ = "0.1.0"

__all__ = [
    "DeviceLimits",
    "Evaluator",
    "GtuneError",
    "InputError",
    "ReplayEvaluator",
    "Result",
    "SQLiteStore",
    "Status",
    "StoredEvaluator",
    "TunableKernel",
    "__version__",
    "load_kernel",
]
