"""Data-loading technique prediction from static stencil features (seed 001 §6.1).

A random forest (:class:`TechniqueForest`, a scikit-learn estimator) trained per device
and heuristic on which technique won each kernel predicts the technique before the
search, so the heuristic runs once instead of once per technique.
:func:`choose_techniques` is what tuning asks; it falls back to trying every technique
(the oracle) when no model fits the device, saying so.
"""

from gtune.loadpredict.dataset import Dataset, TrainingRow, row_from_runs
from gtune.loadpredict.features import (
    DeviceTraits,
    FeaturesUnavailable,
    StencilTraits,
    traits_of,
)
from gtune.loadpredict.model import TechniqueForest
from gtune.loadpredict.models import (
    LoadedModel,
    ModelCard,
    device_card,
    find_model,
    installed_models,
    user_model_dir,
)
from gtune.loadpredict.policy import TechniqueChoice, choose_techniques
from gtune.loadpredict.validation import (
    CrossValidation,
    held_out_devices,
    leave_one_out,
    penalties,
)

__all__ = [
    "CrossValidation",
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
    "held_out_devices",
    "installed_models",
    "leave_one_out",
    "penalties",
    "row_from_runs",
    "traits_of",
    "user_model_dir",
]
