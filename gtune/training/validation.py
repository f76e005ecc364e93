"""Leave-one-out cross-validation with the paper's two accuracies (seed 001 §8.2).

*Absolute accuracy*: the fraction of kernels whose best technique is predicted.
*Penalty-weighted accuracy*: the mean, over kernels, of the oracle's best time divided
by the best time of the predicted technique -- the speedup of the heuristic using the
model relative to the heuristic trying every technique (1.0 when every prediction is
right or every mistake costs nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from gtune.exceptions import InputError
from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.model import TechniqueForest


@dataclass(frozen=True)
class Prediction:
    kernel: str
    label: str
    predicted: str
    penalties: dict[str, float]  # technique -> oracle best / that technique's best
    # the techniques the kernel has, as `gtune run` would choose among them
    available: tuple[str, ...] = ()

    @property
    def penalty(self) -> float:
        """The oracle's best time over the predicted technique's (<= 1; 0 if invalid)."""
        return self.penalties.get(self.predicted, 0.0)


@dataclass(frozen=True)
class CrossValidation:
    heuristic: str
    device: str
    techniques: list[str]
    predictions: list[Prediction]
    confusion: list[list[int]]  # rows: true technique, columns: predicted
    importances: dict[str, float]
    majority: str  # the technique that wins most kernels
    majority_share: float
    # techniques by how many training kernels they win, most first
    ranking: tuple[str, ...] = ()

    @property
    def absolute(self) -> float:
        return float(np.mean([p.label == p.predicted for p in self.predictions]))

    @property
    def penalty_weighted(self) -> float:
        return float(np.mean([p.penalty for p in self.predictions]))

    @property
    def majority_penalty_weighted(self) -> float:
        """What always answering the majority technique would score (a baseline).

        A kernel without that technique gets the most frequent winner it has, as a
        model-free `gtune run` would choose."""
        order = self.ranking or (self.majority,)
        scores = []
        for p in self.predictions:
            have = [t for t in order if not p.available or t in p.available]
            scores.append(p.penalties.get(have[0] if have else self.majority, 0.0))
        return float(np.mean(scores))

    def to_dict(self) -> dict[str, Any]:
        return {
            "heuristic": self.heuristic,
            "device": self.device,
            "kernels": len(self.predictions),
            "techniques": self.techniques,
            "absolute_accuracy": self.absolute,
            "penalty_weighted_accuracy": self.penalty_weighted,
            "majority_technique": self.majority,
            "majority_share": self.majority_share,
            "majority_penalty_weighted_accuracy": self.majority_penalty_weighted,
            "confusion": {"labels": self.techniques, "matrix": self.confusion},
            "importances": self.importances,
            "predictions": [
                {
                    "kernel": p.kernel,
                    "label": p.label,
                    "predicted": p.predicted,
                    "penalty": p.penalty,
                    "penalties": p.penalties,
                }
                for p in self.predictions
            ],
        }


def penalties(row: TrainingRow) -> dict[str, float]:
    """Per technique: the oracle's best time over that technique's best (0 if none)."""
    oracle = row.best_s
    return {
        t: (oracle / got if math.isfinite(got) and got > 0 else 0.0) for t, got in row.times.items()
    }


def leave_one_out(
    data: Dataset,
    *,
    estimator: TechniqueForest | None = None,
    with_device: bool = False,
) -> CrossValidation:
    """Train on all kernels but one, predict that one; for every kernel."""
    data = data.usable()
    if len(data) < 2:
        raise InputError(f"cross-validation needs at least 2 kernels, the dataset has {len(data)}")
    heuristics = {r.heuristic for r in data.rows}
    devices = {r.device for r in data.rows}
    est = estimator if estimator is not None else TechniqueForest()
    X = data.X(with_device)
    y = data.y()
    techniques = data.techniques
    preds: list[Prediction] = []
    for i, row in enumerate(data.rows):
        mask = np.arange(len(data)) != i
        model = clone(est).fit(X[mask], y[mask])
        guess = _choose(model, X[i : i + 1], row)
        preds.append(
            Prediction(
                f"{row.kernel}@{row.device}", row.label, guess, penalties(row), row.available
            )
        )
    index = {t: k for k, t in enumerate(techniques)}
    confusion = [[0] * len(techniques) for _ in techniques]
    for p in preds:
        confusion[index[p.label]][index[p.predicted]] += 1
    full = clone(est).fit(X, y)
    importances = dict(
        zip(
            data.feature_names(with_device),
            (float(v) for v in full.feature_importances_),
            strict=True,
        )
    )
    labels, counts = np.unique(y, return_counts=True)
    majority = str(labels[int(np.argmax(counts))])
    return CrossValidation(
        heuristic=",".join(sorted(heuristics)),
        device=",".join(sorted(devices)),
        techniques=techniques,
        predictions=preds,
        confusion=confusion,
        importances=dict(sorted(importances.items(), key=lambda kv: -kv[1])),
        majority=majority,
        majority_share=float(counts.max() / counts.sum()),
        ranking=_ranking(y),
    )


def _ranking(y: np.ndarray[Any, Any]) -> tuple[str, ...]:
    labels, counts = np.unique(y, return_counts=True)
    order = sorted(zip(labels, counts, strict=True), key=lambda lc: (-int(lc[1]), str(lc[0])))
    return tuple(str(label) for label, _ in order)


def _choose(model: TechniqueForest, x: np.ndarray[Any, Any], row: TrainingRow) -> str:
    """The most probable technique the kernel has: what `gtune run` would search. A
    model that knows none of them leaves `gtune run` to the oracle, which finds the
    kernel's best technique."""
    classes = [str(c) for c in model.classes_]
    proba = model.predict_proba(x)[0]
    ranked = [t for t, _ in sorted(zip(classes, proba, strict=True), key=lambda cp: -cp[1])]
    have = [t for t in ranked if t in row.available]
    return have[0] if have else row.label


def held_out_devices(
    data: Dataset,
    *,
    estimator: TechniqueForest | None = None,
    with_device: bool = True,
) -> dict[str, CrossValidation]:
    """Per device: train on every other device's kernels, predict this device's.

    The question a cross-device model answers (a device it never saw). Each prediction
    is the most probable technique the held-out kernel actually has (as ``gtune run``
    chooses), so a technique missing on that device never counts against the model.
    ``majority`` is the training devices' majority technique: the answer of a model
    that ignores the device.
    """
    data = data.usable()
    devices = sorted({r.device for r in data.rows})
    if len(devices) < 2:
        raise InputError(
            f"a held-out device needs data from at least 2 devices, the dataset has {devices}"
        )
    est = estimator if estimator is not None else TechniqueForest()
    X = data.X(with_device)
    y = data.y()
    techniques = data.techniques
    index = {t: k for k, t in enumerate(techniques)}
    names = data.feature_names(with_device)
    out: dict[str, CrossValidation] = {}
    for dev in devices:
        held = np.array([r.device == dev for r in data.rows])
        model = clone(est).fit(X[~held], y[~held])
        preds: list[Prediction] = []
        for i in np.flatnonzero(held):
            row = data.rows[i]
            guess = _choose(model, X[i : i + 1], row)
            preds.append(
                Prediction(
                    f"{row.kernel}@{row.device}", row.label, guess, penalties(row), row.available
                )
            )
        confusion = [[0] * len(techniques) for _ in techniques]
        for p in preds:
            confusion[index[p.label]][index[p.predicted]] += 1
        labels, counts = np.unique(y[~held], return_counts=True)
        majority = str(labels[int(np.argmax(counts))])
        importances = dict(zip(names, (float(v) for v in model.feature_importances_), strict=True))
        out[dev] = CrossValidation(
            heuristic=",".join(sorted({r.heuristic for r in data.rows})),
            device=dev,
            techniques=techniques,
            predictions=preds,
            confusion=confusion,
            importances=dict(sorted(importances.items(), key=lambda kv: -kv[1])),
            majority=majority,
            majority_share=float(np.mean(y[held] == majority)),
            ranking=_ranking(y[~held]),
        )
    return out
