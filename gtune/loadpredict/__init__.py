"""Data-loading technique prediction from static stencil features (seed 001 §6.1).

A random forest (:class:`TechniqueForest`, a scikit-learn estimator) trained per device
and heuristic on which technique won each kernel predicts the technique before the
search, so the heuristic runs once instead of once per technique.
:func:`choose_techniques` is what tuning asks; it falls back to trying every technique
(the oracle) when no model fits the device, saying so.

This package is what tuning needs at run time and never imports :mod:`gtune.tuning`;
training (collecting rows by tuning, cross-validation) is :mod:`gtune.training`, above.
"""

from typing import TYPE_CHECKING, Any

from gtune.loadpredict.dataset import Dataset, TrainingRow, row_from_runs
from gtune.loadpredict.features import (
    DeviceTraits,
    FeaturesUnavailable,
    StencilTraits,
    traits_of,
)
from gtune.loadpredict.models import (
    LoadedModel,
    ModelCard,
    device_card,
    find_model,
    installed_models,
    user_model_dir,
)
from gtune.loadpredict.policy import TechniqueChoice, choose_techniques

if TYPE_CHECKING:
    from gtune.loadpredict.model import TechniqueForest


def __getattr__(name: str) -> Any:
    """``TechniqueForest`` on first use: importing scikit-learn takes about 2 s, which
    every ``gtune`` command paid when this package imported it."""
    if name == "TechniqueForest":
        from gtune.loadpredict.model import TechniqueForest

        return TechniqueForest
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Dataset",
    "DeviceTraits",
    "FeaturesUnavailable",
    "LoadedModel",
    "ModelCard",
    "StencilTraits",
    "TechniqueChoice",
    "TechniqueForest",
    "TrainingRow",
    "choose_techniques",
    "device_card",
    "find_model",
    "installed_models",
    "row_from_runs",
    "traits_of",
    "user_model_dir",
]
