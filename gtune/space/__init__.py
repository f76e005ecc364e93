"""Tuning spaces: device limits and kernel constraints decided by MiniZinc.

:func:`solve_space` / :func:`build_space` turn a kernel description and a device's
limits into an :class:`EnumeratedSpace` (the :class:`Space` protocol over an array of
valid configurations); :func:`build_model`, :func:`model_mzn` and :func:`device_dzn`
expose the MiniZinc model itself.
"""

from gtune.space.base import Space, Violation
from gtune.space.build import SpaceBuild, build_space, solve_space, technique_space
from gtune.space.constraints import NamedConstraint
from gtune.space.enumerated import EnumeratedSpace, Exclusions
from gtune.space.model import SpaceModel, build_model, device_dzn, model_mzn
from gtune.space.refusals import RefusalStore
from gtune.space.report import Cut, constraint_cuts
from gtune.space.solve import SolveInfo, cache_dir

__all__ = [
    "Cut",
    "EnumeratedSpace",
    "Exclusions",
    "NamedConstraint",
    "RefusalStore",
    "SolveInfo",
    "Space",
    "SpaceBuild",
    "SpaceModel",
    "Violation",
    "build_model",
    "build_space",
    "cache_dir",
    "constraint_cuts",
    "device_dzn",
    "model_mzn",
    "solve_space",
    "technique_space",
]
