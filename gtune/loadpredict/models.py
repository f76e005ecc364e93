"""Trained models: which exist, which fits a device, and loading one.

A model is a *card* (JSON: the device it was trained on, the heuristic, the estimator's
parameters, its cross-validation scores) next to its *dataset* (CSV). Loading a model
fits the estimator on the dataset again -- a few hundred milliseconds, deterministic
through the fixed seed -- so nothing pickled is ever read: a model file is data, and it
keeps working across scikit-learn versions.

Shipped models live in the package (``gtune/data/models``); models a user trains go
to ``$GTUNE_MODELS`` or ``~/.local/share/gtune/models`` and take precedence.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.loadpredict.dataset import Dataset
from gtune.loadpredict.features import DeviceTraits, StencilTraits
from gtune.outfiles import write_text

if TYPE_CHECKING:  # scikit-learn takes about 2 s to import: only where a model is fitted
    from gtune.loadpredict.model import TechniqueForest

CARD_SUFFIX = ".model.json"
DEFAULT_CONFIDENCE = 0.6
DEFAULT_SCOUT_SHARE = 0.2
"""The share of the runner-up's search scouted besides the first choice (``auto``)."""
CUT_SHORT_CONFIGS = 150
"""A dataset whose searches all stopped at or below this many configurations per
technique was labelled by cut-short searches (the H200's first dataset: 100 each)."""


def user_model_dir() -> Path:
    env = os.environ.get("GTUNE_MODELS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gtune" / "models"


def shipped_model_dir() -> Path:
    return Path(str(resources.files("gtune") / "data" / "models"))


@dataclass
class ModelCard:
    name: str
    heuristic: str
    device: dict[str, Any]  # vendor, name, type, platform, identity, compute_units, ...
    dataset: str  # file name beside the card
    estimator: dict[str, Any] = field(default_factory=dict)
    with_device: bool = False
    confidence: float = DEFAULT_CONFIDENCE
    trained: str = ""
    sizes: list[str] = field(default_factory=list)
    cv: dict[str, Any] = field(default_factory=dict)
    # how the dataset was collected (kernels, techniques, search size) and where it is
    # recorded with its evaluation; free text, shown by `gtune models`
    source: str = ""
    # how each label's searches ran: {"search": "complete"} (every technique searched
    # to the end of its spec) or {"search": "budget", "budget": "100"}; {} for cards
    # written before gtune recorded it (see :meth:`label_search`)
    labels: dict[str, Any] = field(default_factory=dict)
    # the runner-up technique is scouted for this share of its search (0: never)
    scout_share: float = DEFAULT_SCOUT_SHARE
    path: Path | None = None  # where the card was read from

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "heuristic": self.heuristic,
            "device": self.device,
            "dataset": self.dataset,
            "estimator": self.estimator,
            "with_device": self.with_device,
            "confidence": self.confidence,
            "trained": self.trained,
            "sizes": self.sizes,
            "cv": self.cv,
            **({"source": self.source} if self.source else {}),
            **({"labels": self.labels} if self.labels else {}),
            "scout_share": self.scout_share,
        }

    @classmethod
    def read(cls, path: Path) -> ModelCard:
        try:
            raw = json.loads(path.read_text())
            card = cls(
                name=str(raw["name"]),
                heuristic=str(raw["heuristic"]),
                device=dict(raw["device"]),
                dataset=str(raw["dataset"]),
                estimator=dict(raw.get("estimator") or {}),
                with_device=bool(raw.get("with_device", False)),
                confidence=float(raw.get("confidence", DEFAULT_CONFIDENCE)),
                trained=str(raw.get("trained", "")),
                sizes=[str(s) for s in raw.get("sizes") or []],
                cv=dict(raw.get("cv") or {}),
                source=str(raw.get("source") or ""),
                labels=dict(raw.get("labels") or {}),
                scout_share=float(raw.get("scout_share", 0.0)),
            )
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read model card: {exc}", source=path) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed model card: {exc}", source=path) from None
        if "/" in card.dataset or card.dataset.startswith("."):
            raise InputError("dataset must be a file name beside the card", source=path)
        if not 0.0 <= card.scout_share <= 1.0:
            raise InputError(
                f"scout_share must lie between 0 and 1, got {card.scout_share}", source=path
            )
        card.path = path
        return card

    def write(self, directory: Path, *, force: bool = True) -> Path:
        """Write the card into ``directory`` (atomically, never through a link); an
        existing card of the same name is replaced only with ``force``."""
        path = directory / f"{self.name}{CARD_SUFFIX}"
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
        write_text(path, text, force=force)
        self.path = path
        return path

    def label_search(self) -> str:
        """How the labels were searched, in words, with a warning when they were cut
        short: the card's record, else what the dataset's configuration counts show."""
        search = self.labels.get("search")
        if search == "complete":
            return "complete searches (every technique to the end of its spec)"
        if search == "budget":
            return f"searches cut at a budget of {self.labels.get('budget')} per technique"
        if self.path is None:
            return "not recorded"
        try:
            rows = Dataset.read_csv(self.path.parent / self.dataset).rows
        except InputError:
            return "not recorded"
        counts = [n for r in rows for n in r.configs.values() if n > 0]
        if not counts:
            return "not recorded"
        # complete searches stop where their specs end, at counts that differ from
        # kernel to kernel; a budget stops most at one count
        mode, times = Counter(counts).most_common(1)[0]
        if max(counts) <= CUT_SHORT_CONFIGS:
            return (
                f"not recorded; every search stopped by {max(counts)} configurations "
                "per technique: cut short"
            )
        if times >= len(counts) / 2 and mode <= CUT_SHORT_CONFIGS:
            return (
                f"not recorded; {times} of its {len(counts)} searches stopped at {mode} "
                "configurations: cut short"
            )
        return "not recorded"

    def cut_short(self) -> bool:
        """Whether the labels come from searches cut short (see :meth:`label_search`)."""
        text = self.label_search()
        return "cut" in text

    def matches(self, device: DeviceLimits) -> bool:
        """Trained on this kind of device: same vendor, name and type."""
        d = self.device
        return (
            _norm(d.get("vendor", "")) == _norm(device.vendor)
            and _norm(d.get("name", "")) == _norm(device.name)
            and str(d.get("type", "")).upper() == device.type.upper()
        )

    def load(self) -> LoadedModel:
        if self.path is None:
            raise InputError(f"model {self.name} has no location")
        data = Dataset.read_csv(self.path.parent / self.dataset).usable()
        if len(data) == 0:
            raise InputError("the model's dataset has no usable rows", source=self.path)
        try:
            est = new_forest(**self.estimator)
        except TypeError as exc:
            raise InputError(f"bad estimator parameters: {exc}", source=self.path) from None
        est.fit(data.X(self.with_device), data.y())
        seen: dict[int, set[str]] = {}
        for r in data.rows:
            seen.setdefault(array_dims(r.traits), set()).update(r.available)
        frozen = {k: frozenset(v) for k, v in seen.items()}
        lengths = tuple(dict(r.configs) for r in data.rows if r.configs)
        return LoadedModel(self, est, frozen, closeness(data), lengths)


def new_forest(**params: Any) -> TechniqueForest:
    """A :class:`~gtune.loadpredict.model.TechniqueForest` with these parameters.
    scikit-learn (about 2 s to import) is imported here, on first use, so that the
    ``gtune`` commands that fit no model never import it."""
    from gtune.loadpredict.model import TechniqueForest

    return TechniqueForest(**params)


def closeness(data: Dataset) -> tuple[str, ...]:
    """Techniques by how close their best times came to each kernel's best (geometric
    mean of the ratio over the kernels that searched them), closest first."""
    logs: dict[str, list[float]] = {}
    for r in data.rows:
        for t, s in r.times.items():
            if math.isfinite(s) and s > 0 and r.best_s > 0:
                logs.setdefault(t, []).append(math.log(s / r.best_s))
    return tuple(sorted(logs, key=lambda t: (sum(logs[t]) / len(logs[t]), t)))


def array_dims(traits: StencilTraits) -> int:
    """The array's dimensionality as the traits tell it: 2 for an ``NY x NX`` array (no
    z extent, ``log2_nz == 0``), else 3. Not the stencil's own ``dims``: a 2D stencil
    over a 3D array is a 3D array's kernel."""
    return 2 if traits.log2_nz <= 0 else 3


@dataclass
class LoadedModel:
    card: ModelCard
    estimator: TechniqueForest
    # per array dimensionality (2, 3): the techniques some training kernel of that kind
    # had (searched)
    seen: Mapping[int, frozenset[str]] = field(default_factory=dict)
    closeness: tuple[str, ...] = ()  # techniques, closest to the winners first
    # per training kernel: how many configurations each technique's search measured
    lengths: tuple[Mapping[str, int], ...] = ()

    def length_ratio(self, first: str, second: str) -> float | None:
        """How long ``second``'s search is against ``first``'s: the median over the
        training kernels that searched both of the ratio of their configurations
        (``None``: no kernel did). With labels from complete searches (the H200's:
        stream 0.2-0.3 of vec) this is each technique's own search length, so a
        runner-up is scouted for a share of *its* search, not of the first choice's."""
        ratios = [
            n[second] / n[first]
            for n in self.lengths
            if n.get(first, 0) > 0 and n.get(second, 0) > 0
        ]
        return statistics.median(ratios) if ratios else None

    def unseen(self, traits: StencilTraits, techniques: Sequence[str]) -> list[str]:
        """Those of ``techniques`` the model learned on one kind of array only, never on
        the kind ``traits`` has (streaming: trained on 3D arrays, new for 2D ones). The
        model may rank such a technique, but its probability there is uninformed.
        Techniques no training kernel had at all are not listed: the model never ranks
        them."""
        known = self.seen.get(array_dims(traits), frozenset())
        learned = frozenset().union(*self.seen.values())
        return [t for t in techniques if t in learned and t not in known]

    def rank(
        self, traits: StencilTraits, device: DeviceTraits | None = None
    ) -> list[tuple[str, float]]:
        """Techniques by predicted probability of being best, most likely first."""
        x = traits.vector()
        if self.card.with_device:
            if device is None:
                raise InputError(f"model {self.card.name} needs device features")
            x += device.vector()
        proba = self.estimator.predict_proba(np.array([x]))[0]
        pairs = [(str(c), float(p)) for c, p in zip(self.estimator.classes_, proba, strict=True)]
        return sorted(pairs, key=lambda cp: -cp[1])


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def installed_models() -> list[ModelCard]:
    """Every model card found: the user's first, then the shipped ones."""
    cards: list[ModelCard] = []
    for directory in (user_model_dir(), shipped_model_dir()):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob(f"*{CARD_SUFFIX}")):
            cards.append(ModelCard.read(path))
    return cards


def find_model(device: DeviceLimits, heuristic: str) -> ModelCard | None:
    """The first installed model for ``heuristic`` trained on this kind of device."""
    for card in installed_models():
        if card.heuristic == heuristic and card.matches(device):
            return card
    return None


def device_card(device: DeviceLimits) -> dict[str, Any]:
    """What a card records of the device it was trained on."""
    return {
        "vendor": device.vendor,
        "name": device.name,
        "type": device.type,
        "platform": device.platform,
        "driver_version": device.driver_version,
        "identity": device.identity,
        "compute_units": device.compute_units,
        "local_mem_size": device.local_mem_size,
        "max_work_group_size": device.max_work_group_size,
    }
