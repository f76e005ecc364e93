"""Choosing the technique before the search: the predictor's side of the technique policy.

Given a kernel and a device, say which data-loading techniques the heuristic should
search: the predicted one when the model is confident, the two most likely otherwise,
and every technique (the oracle) when no model fits the device or the kernel's
description has no stencil features -- always with a note saying which and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel
from gtune.loadpredict.features import DeviceTraits, FeaturesUnavailable, traits_of
from gtune.loadpredict.models import LoadedModel, ModelCard, find_model


@dataclass(frozen=True)
class TechniqueChoice:
    techniques: list[str]  # to search, in order; all of the kernel's for the oracle
    note: str
    predicted: str | None = None  # the model's first choice, if a model answered
    probability: float | None = None
    model: str | None = None
    scout: str | None = None  # the runner-up, scouted besides (see TechniqueChoice)
    scout_share: float = 0.0
    # the runner-up's search length over the first choice's, from the model's data
    # (``None``: unknown; the scout's share is then of the first choice's length)
    scout_length: float | None = None

    @property
    def oracle(self) -> bool:
        return self.predicted is None


_LOADED: dict[str, LoadedModel] = {}


def _load(card: ModelCard) -> LoadedModel:
    key = str(card.path)
    if key not in _LOADED:
        _LOADED[key] = card.load()
    return _LOADED[key]


def choose_techniques(
    kernel: TunableKernel,
    device: DeviceLimits,
    heuristic: str,
    *,
    card: ModelCard | None = None,
) -> TechniqueChoice:
    """The techniques to search for ``kernel`` on ``device`` under ``heuristic``."""
    names = list(kernel.techniques)
    if len(names) <= 1:
        return TechniqueChoice(names, "the kernel has one data-loading technique")
    card = card if card is not None else find_model(device, heuristic)
    if card is None:
        return TechniqueChoice(
            names,
            f"no load-predictor model for {heuristic} on {device.name}: tried every "
            "technique (oracle); `gtune train` builds one",
        )
    try:
        traits = traits_of(kernel)
    except FeaturesUnavailable as exc:
        return TechniqueChoice(names, f"{exc.message}: tried every technique (oracle)")
    model = _load(card)
    every = model.rank(traits, DeviceTraits.of(device))
    # A technique the model never saw compete on this kind of array (streaming along y
    # for 2D arrays: its training kernels had none) has an uninformed probability: it
    # is not ranked, and is searched besides the prediction, as temporal blocking is.
    new_here = set(model.unseen(traits, names))
    ranked = [(t, p) for t, p in every if t in kernel.techniques and t not in new_here]
    if not ranked:
        return TechniqueChoice(
            names,
            f"model {card.name} knows none of this kernel's techniques: tried every one (oracle)",
        )
    best, prob = ranked[0]
    scout = _runner_up(model, ranked, names) if card.scout_share > 0 else None
    if scout is not None:
        chosen = [best]
        how = (
            f"predicted {best} (p={prob:.2f}, model {card.name}); scouting the runner-up, "
            f"{scout}, for {card.scout_share:.0%} of its search: searched to its end if it "
            f"leads {best} at the same share of {best}'s search"
        )
    elif prob >= card.confidence or len(ranked) == 1:
        chosen = [best]
        how = f"predicted {best} (p={prob:.2f}, model {card.name})"
    else:
        chosen = [t for t, _ in ranked[:2]]
        how = (
            f"model {card.name} unsure (p={prob:.2f} < {card.confidence:.2f}): "
            f"searched its two most likely, {' and '.join(chosen)}"
        )
    # Temporal blocking (kernels with time steps) is a technique the model may never
    # have been trained on, as its training kernels ran one step: then it cannot be
    # ranked, and it is searched besides the prediction rather than never tried.
    # Every temporal technique counts (2D arrays have two: streaming and tiles).
    known = {t for t, _ in every}
    temporal = set(kernel.temporal_techniques)
    unseen = [
        t
        for t in names
        if t not in chosen and ((t in temporal and t not in known) or t in new_here)
    ]
    if unseen:
        chosen += unseen
        how += f"; also {', '.join(unseen)}, which model {card.name} has not seen"
    return TechniqueChoice(
        chosen,
        how,
        predicted=best,
        probability=prob,
        model=card.name,
        scout=scout if scout not in chosen else None,
        scout_share=card.scout_share if scout not in chosen else 0.0,
        scout_length=model.length_ratio(best, scout) if scout and scout not in chosen else None,
    )


def _runner_up(model: LoadedModel, ranked: list[tuple[str, float]], names: list[str]) -> str | None:
    """The technique to scout besides the first choice: the model's second; when the
    model gives it no probability (one technique won every training kernel), the
    technique whose training times came closest to the winners' (``model.closeness``)."""
    best = ranked[0][0]
    if len(ranked) > 1 and ranked[1][1] > 0:
        return ranked[1][0]
    for t in model.closeness:
        if t != best and t in names:
            return t
    return None
