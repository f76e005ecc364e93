"""Training the data-loading technique predictor: what runs above tuning.

:mod:`gtune.loadpredict` is what tuning needs at run time (stencil and device traits,
the model, model cards, the policy that answers ``--technique auto``) and sits below
:mod:`gtune.tuning`. Training tunes kernels to label them, so it sits above: collecting
labelled rows by tuning every technique (:mod:`~gtune.training.train`, ``gtune
train``) and the leave-one-out cross-validation a model card states
(:mod:`~gtune.training.validation`).
"""

from gtune.training.validation import (
    DECISIVE_MARGIN,
    MAJORITY,
    CrossValidation,
    NestedCrossValidation,
    grouped_importances,
    held_out_devices,
    held_out_of,
    leave_one_out,
    nested_from_picks,
    nested_leave_one_out,
    pair_picks,
    penalties,
)

__all__ = [
    "DECISIVE_MARGIN",
    "MAJORITY",
    "CrossValidation",
    "NestedCrossValidation",
    "grouped_importances",
    "held_out_devices",
    "held_out_of",
    "leave_one_out",
    "nested_from_picks",
    "nested_leave_one_out",
    "pair_picks",
    "penalties",
]
