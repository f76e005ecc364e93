"""Leave-one-out cross-validation with the paper's two accuracies (seed 001 §8.2).

*Absolute accuracy*: the fraction of kernels whose best technique is predicted.
*Penalty-weighted accuracy*: the mean, over kernels, of the oracle's best time divided
by the best time of the predicted technique -- the speedup of the heuristic using the
model relative to the heuristic trying every technique (1.0 when every prediction is
right or every mistake costs nothing).

Beside them: the majority baseline (always the technique that wins most training
kernels), the same scores restricted to the *decisive* kernels (those whose runner-up
technique is more than :data:`DECISIVE_MARGIN` slower than the best, where a choice
matters), and feature importances measured on held-out kernels
(:func:`permutation_importances`). :func:`held_out_of` judges a trained model on the
kernels of a dataset it never saw.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gtune.exceptions import InputError
from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.models import ModelCard, new_forest

if TYPE_CHECKING:
    from gtune.loadpredict.model import TechniqueForest


def clone(estimator: Any) -> Any:
    """scikit-learn's ``clone``, imported on first use (see :func:`new_forest`)."""
    from sklearn.base import clone as sk_clone

    return sk_clone(estimator)


# A kernel is decisive when its runner-up technique is more than this much slower than
# its best: there the choice of technique matters, and a near-tie cannot hide a miss.
DECISIVE_MARGIN = 0.05


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

    @property
    def margin(self) -> float:
        """How much slower the runner-up technique the kernel has is than its best
        (0.07: 7 % slower; ``inf`` when no other technique produced a valid result)."""
        have = [t for t in (self.available or tuple(self.penalties)) if t in self.penalties]
        ranked = sorted((self.penalties[t] for t in have), reverse=True)
        if len(ranked) < 2 or ranked[1] <= 0.0:
            return math.inf
        return 1.0 / ranked[1] - 1.0

    def fallback(self, order: tuple[str, ...]) -> str:
        """The first of ``order`` the kernel has: what a model-free choice in that
        order (the majority baseline) picks."""
        have = [t for t in order if not self.available or t in self.available]
        return have[0] if have else order[0]


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
    # feature (one-hot columns grouped) -> mean loss of (absolute, penalty-weighted)
    # accuracy on held-out kernels when the feature's value is another kernel's
    permutation: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def absolute(self) -> float:
        return _mean([p.label == p.predicted for p in self.predictions])

    @property
    def penalty_weighted(self) -> float:
        return _mean([p.penalty for p in self.predictions])

    @property
    def majority_choices(self) -> list[str]:
        """Per kernel, what always answering the majority technique picks (a baseline).

        A kernel without that technique gets the most frequent winner it has, as a
        model-free `gtune run` would choose."""
        order = self.ranking or (self.majority,)
        return [p.fallback(order) for p in self.predictions]

    @property
    def majority_absolute(self) -> float:
        return _mean(
            [p.label == c for p, c in zip(self.predictions, self.majority_choices, strict=True)]
        )

    @property
    def majority_penalty_weighted(self) -> float:
        """What always answering the majority technique scores (see ``majority_choices``)."""
        return _mean(
            [
                p.penalties.get(c, 0.0)
                for p, c in zip(self.predictions, self.majority_choices, strict=True)
            ]
        )

    def only(self, kernels: Iterable[str]) -> CrossValidation:
        """The same cross-validation restricted to ``kernels`` (prediction names)."""
        keep = set(kernels)
        preds = [p for p in self.predictions if p.kernel in keep]
        return dataclasses.replace(
            self, predictions=preds, confusion=_confusion(self.techniques, preds)
        )

    def decisive(self, margin: float = DECISIVE_MARGIN) -> CrossValidation:
        """Restricted to the kernels whose runner-up technique is more than ``margin``
        slower than the best: where the choice matters."""
        return self.only(p.kernel for p in self.predictions if p.margin > margin)

    def scores(self) -> dict[str, Any]:
        """Kernels, the model's and the majority baseline's two accuracies."""
        return {
            "kernels": len(self.predictions),
            "absolute_accuracy": self.absolute,
            "penalty_weighted_accuracy": self.penalty_weighted,
            "majority_absolute_accuracy": self.majority_absolute,
            "majority_penalty_weighted_accuracy": self.majority_penalty_weighted,
        }

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
            "majority_absolute_accuracy": self.majority_absolute,
            "majority_penalty_weighted_accuracy": self.majority_penalty_weighted,
            "decisive_margin": DECISIVE_MARGIN,
            "decisive": self.decisive().scores(),
            "confusion": {"labels": self.techniques, "matrix": self.confusion},
            "importances": self.importances,
            "permutation_importances": {
                name: {"absolute": a, "penalty_weighted": w}
                for name, (a, w) in self.permutation.items()
            },
            "predictions": [
                {
                    "kernel": p.kernel,
                    "label": p.label,
                    "predicted": p.predicted,
                    "majority": c,
                    "penalty": p.penalty,
                    "margin": p.margin if math.isfinite(p.margin) else None,
                    "penalties": p.penalties,
                }
                for p, c in zip(self.predictions, self.majority_choices, strict=True)
            ],
        }


def _mean(values: Sequence[float | bool]) -> float:
    return float(np.mean(values)) if values else math.nan


def _confusion(techniques: Sequence[str], preds: Sequence[Prediction]) -> list[list[int]]:
    """Rows: true technique, columns: predicted."""
    index = {t: k for k, t in enumerate(techniques)}
    confusion = [[0] * len(techniques) for _ in techniques]
    for p in preds:
        confusion[index[p.label]][index[p.predicted]] += 1
    return confusion


def feature_groups(names: Sequence[str]) -> dict[str, list[int]]:
    """Feature name -> its columns; a one-hot category (``pattern=star``, ...) is one
    feature, as the stencil traits name it."""
    groups: dict[str, list[int]] = {}
    for k, name in enumerate(names):
        groups.setdefault(name.split("=", 1)[0], []).append(k)
    return groups


def grouped_importances(importances: Mapping[str, float]) -> dict[str, float]:
    """Impurity importances summed over each feature's columns (they add up)."""
    groups = feature_groups(list(importances))
    values = list(importances.values())
    out = {g: float(sum(values[k] for k in cols)) for g, cols in groups.items()}
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def penalties(row: TrainingRow) -> dict[str, float]:
    """Per technique: the oracle's best time over that technique's best (0 if none)."""
    oracle = row.best_s
    return {
        t: (oracle / got if math.isfinite(got) and got > 0 else 0.0) for t, got in row.times.items()
    }


def _ordered(data: Dataset) -> Dataset:
    """The usable rows in the dataset file's order (device, heuristic, kernel): a
    forest's bootstrap depends on the order, and every fold sees this one."""
    return Dataset(sorted(data.usable().rows, key=lambda r: (r.device, r.heuristic, r.kernel)))


def held_out_prediction(
    data: Dataset,
    kernel: str,
    *,
    estimator: TechniqueForest | None = None,
    with_device: bool = False,
) -> Prediction:
    """One fold of :func:`leave_one_out`: ``kernel`` (a row's ``kernel@device`` name, as
    :class:`Prediction` names it) predicted by the estimator trained on every other
    kernel, exactly as the whole leave-one-out predicts it; to check a stated
    cross-validation on a sample of its folds."""
    data = _ordered(data)
    names = [f"{r.kernel}@{r.device}" for r in data.rows]
    if kernel not in names:
        raise InputError(f"the dataset has no kernel {kernel}")
    i = names.index(kernel)
    X, y = data.X(with_device), data.y()
    est = estimator if estimator is not None else new_forest()
    mask = np.arange(len(data)) != i
    model = clone(est).fit(X[mask], y[mask])
    row = data.rows[i]
    return Prediction(
        kernel, row.label, _choose(model, X[i : i + 1], row), penalties(row), row.available
    )


def scores_of(data: Dataset, predicted: Mapping[str, str]) -> tuple[float, float]:
    """Absolute and penalty-weighted accuracy of the stated per-kernel predictions
    (``kernel@device`` -> technique) on ``data``: what :func:`leave_one_out` reports
    when its folds predicted these."""
    preds = [
        Prediction(
            f"{r.kernel}@{r.device}",
            r.label,
            predicted[f"{r.kernel}@{r.device}"],
            penalties(r),
            r.available,
        )
        for r in _ordered(data).rows
    ]
    return _mean([p.label == p.predicted for p in preds]), _mean([p.penalty for p in preds])


def leave_one_out(
    data: Dataset,
    *,
    estimator: TechniqueForest | None = None,
    with_device: bool = False,
    permutation: bool = False,
) -> CrossValidation:
    """Train on all kernels but one, predict that one; for every kernel.

    Rows are taken in the dataset file's order (device, heuristic, kernel), so the
    scores are those of the CSV whatever order the rows were collected in (a forest's
    bootstrap depends on the order). ``permutation``: also measure each feature's
    permutation importance on the held-out kernels (:func:`permutation_importances`).
    """
    data = _ordered(data)
    if len(data) < 2:
        raise InputError(f"cross-validation needs at least 2 kernels, the dataset has {len(data)}")
    heuristics = {r.heuristic for r in data.rows}
    devices = {r.device for r in data.rows}
    est = estimator if estimator is not None else new_forest()
    X = data.X(with_device)
    y = data.y()
    techniques = data.techniques
    names = data.feature_names(with_device)
    groups = feature_groups(names)
    preds: list[Prediction] = []
    # per feature: per held-out kernel, (correct, penalty) averaged over substitutions
    permuted: dict[str, list[tuple[float, float]]] = {g: [] for g in groups}
    for i, row in enumerate(data.rows):
        mask = np.arange(len(data)) != i
        model = clone(est).fit(X[mask], y[mask])
        guess = _choose(model, X[i : i + 1], row)
        pred = Prediction(
            f"{row.kernel}@{row.device}", row.label, guess, penalties(row), row.available
        )
        preds.append(pred)
        if permutation:
            for g, scores in _substituted(model, X, i, groups, row, pred).items():
                permuted[g].append(scores)
    full = clone(est).fit(X, y)
    importances = dict(zip(names, (float(v) for v in full.feature_importances_), strict=True))
    labels, counts = np.unique(y, return_counts=True)
    majority = str(labels[int(np.argmax(counts))])
    absolute = _mean([p.label == p.predicted for p in preds])
    weighted = _mean([p.penalty for p in preds])
    loss = {
        g: (absolute - _mean([a for a, _ in v]), weighted - _mean([w for _, w in v]))
        for g, v in permuted.items()
        if v
    }
    return CrossValidation(
        heuristic=",".join(sorted(heuristics)),
        device=",".join(sorted(devices)),
        techniques=techniques,
        predictions=preds,
        confusion=_confusion(techniques, preds),
        importances=dict(sorted(importances.items(), key=lambda kv: -kv[1])),
        majority=majority,
        majority_share=float(counts.max() / counts.sum()),
        ranking=_ranking(y),
        permutation=dict(sorted(loss.items(), key=lambda kv: (-kv[1][1], -kv[1][0]))),
    )


def _substituted(
    model: TechniqueForest,
    X: np.ndarray[Any, Any],
    i: int,
    groups: Mapping[str, list[int]],
    row: TrainingRow,
    pred: Prediction,
) -> dict[str, tuple[float, float]]:
    """Held-out kernel ``i`` predicted again with one feature's value replaced by each
    training kernel's value of it in turn: the expectation, for this kernel, of a
    permutation of that feature over the kernels (permutation importance measured on
    held-out data, exactly rather than by random shuffles). Per feature: the mean
    (correct, penalty) of those predictions."""
    others = np.flatnonzero(np.arange(len(X)) != i)
    blocks = []
    for cols in groups.values():
        block = np.repeat(X[i : i + 1], len(others), axis=0)
        block[:, cols] = X[np.ix_(others, np.asarray(cols, dtype=np.intp))]
        blocks.append(block)
    proba = model.predict_proba(np.vstack(blocks))
    classes = [str(c) for c in model.classes_]
    out: dict[str, tuple[float, float]] = {}
    for k, g in enumerate(groups):
        part = proba[k * len(others) : (k + 1) * len(others)]
        guesses = [_pick(classes, p, row) for p in part]
        out[g] = (
            _mean([t == pred.label for t in guesses]),
            _mean([pred.penalties.get(t, 0.0) for t in guesses]),
        )
    return out


def held_out_of(card: ModelCard, data: Dataset) -> CrossValidation:
    """A trained model judged on the kernels of ``data`` it never saw.

    The model is fitted from its card and dataset as ``gtune run`` loads it. A kernel
    counts as seen when the model's dataset has a row for the same device and
    heuristic with the same features (the same stencil at the same shape): the model
    would answer it from memory. The rest are predicted as ``gtune run`` chooses (the
    most probable technique the kernel has); ``majority`` is the model's own training
    majority, the answer of a model-free choice trained on the same data.
    """
    model = card.load()
    if card.with_device:
        raise InputError("judging a model with device features is cross_device.py's job")
    assert card.path is not None
    trained = Dataset.read_csv(card.path.parent / card.dataset).usable()
    seen = {(r.device, r.heuristic, tuple(r.traits.vector())) for r in trained.rows}
    rows = sorted(
        (
            r
            for r in data.usable().rows
            if r.heuristic == card.heuristic
            and r.device == card.device.get("identity", r.device)
            and (r.device, r.heuristic, tuple(r.traits.vector())) not in seen
        ),
        key=lambda r: (r.device, r.heuristic, r.kernel),
    )
    if not rows:
        raise InputError(
            f"the dataset has no kernel for {card.heuristic} on "
            f"{card.device.get('identity', '?')} that model {card.name} never saw",
            source=card.path,
        )
    held = Dataset(rows)
    techniques = sorted(set(held.techniques) | {str(c) for c in model.estimator.classes_})
    preds = [
        Prediction(
            f"{r.kernel}@{r.device}",
            r.label,
            _choose(model.estimator, held.X()[k : k + 1], r),
            penalties(r),
            r.available,
        )
        for k, r in enumerate(held.rows)
    ]
    y = trained.y()
    labels, counts = np.unique(y, return_counts=True)
    names = held.feature_names()
    imp = dict(zip(names, (float(v) for v in model.estimator.feature_importances_), strict=True))
    return CrossValidation(
        heuristic=card.heuristic,
        device=str(card.device.get("identity", "")),
        techniques=techniques,
        predictions=preds,
        confusion=_confusion(techniques, preds),
        importances=dict(sorted(imp.items(), key=lambda kv: -kv[1])),
        majority=str(labels[int(np.argmax(counts))]),
        majority_share=float(np.mean(held.y() == labels[int(np.argmax(counts))])),
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
    return _pick([str(c) for c in model.classes_], model.predict_proba(x)[0], row)


def _pick(classes: Sequence[str], proba: np.ndarray[Any, Any], row: TrainingRow) -> str:
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
    est = estimator if estimator is not None else new_forest()
    X = data.X(with_device)
    y = data.y()
    techniques = data.techniques
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
        confusion = _confusion(techniques, preds)
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


# -------------------------------------------------------------------------------------
# Nested leave-one-out: the setting chosen inside each outer fold

MAJORITY = "majority"
"""The candidate that answers the training kernels' most frequent winner (a constant)."""


def _sorted_usable(data: Dataset) -> Dataset:
    return Dataset(sorted(data.usable().rows, key=lambda r: (r.device, r.heuristic, r.kernel)))


def _constant_pick(y: np.ndarray[Any, Any], row: TrainingRow) -> str:
    """What the majority of ``y`` answers for ``row`` (its fallback when the kernel
    lacks the majority technique)."""
    order = _ranking(y)
    have = [t for t in order if not row.available or t in row.available]
    return have[0] if have else order[0]


def pair_picks(
    data: Dataset,
    estimator: TechniqueForest | None,
    *,
    with_device: bool = False,
    progress: Any = None,
) -> list[list[str]]:
    """``picks[i][j]``: the technique chosen for kernel ``j`` by ``estimator`` fitted on
    every kernel but ``i`` and ``j`` (``picks[i][i]``: fitted on every kernel but ``i``,
    the ordinary leave-one-out). The inner leave-one-out of outer fold ``i`` is row
    ``i``. One fit serves both ``picks[i][j]`` and ``picks[j][i]`` (the same training
    set), so a candidate costs ``n (n - 1) / 2 + n`` fits. ``estimator=None``: the
    majority constant. Rows in :func:`leave_one_out`'s order; ``progress(done, total)``
    is called after each fit."""
    data = _sorted_usable(data)
    n = len(data)
    X = data.X(with_device)
    y = data.y()
    rows = data.rows
    picks = [[""] * n for _ in range(n)]
    total = n * (n - 1) // 2 + n
    done = 0
    for i in range(n):
        for j in range(i, n):
            mask = np.ones(n, dtype=bool)
            mask[[i, j]] = False
            if estimator is None:
                picks[i][j] = _constant_pick(y[mask], rows[j])
                if j != i:
                    picks[j][i] = _constant_pick(y[mask], rows[i])
                continue
            model = clone(estimator).fit(X[mask], y[mask])
            classes = [str(c) for c in model.classes_]
            targets = [i] if i == j else [i, j]
            proba = model.predict_proba(X[targets])
            if i == j:
                picks[i][i] = _pick(classes, proba[0], rows[i])
            else:
                picks[j][i] = _pick(classes, proba[0], rows[i])
                picks[i][j] = _pick(classes, proba[1], rows[j])
            done += 1
            if progress is not None:
                progress(done, total)
    return picks


@dataclass(frozen=True)
class NestedCrossValidation:
    """Leave-one-out whose setting is chosen inside each outer fold.

    For held-out kernel ``i``, every candidate is scored by leave-one-out over the
    other kernels alone (inner penalty-weighted accuracy, then absolute accuracy, then
    the candidates' order breaking ties); the winner, refitted on every kernel but
    ``i``, predicts ``i``. ``nested`` holds those outer predictions: an estimate of the
    whole procedure "choose the setting by leave-one-out, then train" that never saw the
    kernel it is judged on. ``plain``: each candidate's ordinary leave-one-out (chosen
    on every kernel, so the best of them is optimistic)."""

    candidates: list[str]
    nested: CrossValidation
    chosen: list[str]  # per outer kernel, in nested.predictions' order
    inner: list[dict[str, tuple[float, float]]]  # per outer fold: candidate -> (PW, abs)
    plain: dict[str, CrossValidation]

    def chosen_counts(self) -> dict[str, int]:
        return {c: self.chosen.count(c) for c in self.candidates if c in self.chosen}

    def to_dict(self) -> dict[str, Any]:
        d = self.nested.decisive()
        return {
            "candidates": self.candidates,
            "nested": {**self.nested.scores(), "decisive": d.scores()},
            "chosen_counts": self.chosen_counts(),
            "chosen": {
                p.kernel: c for p, c in zip(self.nested.predictions, self.chosen, strict=True)
            },
            "plain": {
                name: {**cv.scores(), "decisive": cv.decisive().scores()}
                for name, cv in self.plain.items()
            },
        }


def nested_from_picks(
    data: Dataset, picks: Mapping[str, Sequence[Sequence[str]]]
) -> NestedCrossValidation:
    """The nested leave-one-out from each candidate's :func:`pair_picks` (candidates in
    order of preference on ties)."""
    data = _sorted_usable(data)
    n = len(data)
    if n < 3:
        raise InputError(f"nested cross-validation needs at least 3 kernels, the dataset has {n}")
    rows = data.rows
    y = data.y()
    pens = [penalties(r) for r in rows]
    names = list(picks)
    inner: list[dict[str, tuple[float, float]]] = []
    chosen: list[str] = []
    preds: list[Prediction] = []
    for i, row in enumerate(rows):
        scores: dict[str, tuple[float, float]] = {}
        for c in names:
            others = [j for j in range(n) if j != i]
            pw = _mean([pens[j].get(picks[c][i][j], 0.0) for j in others])
            ab = _mean([picks[c][i][j] == rows[j].label for j in others])
            scores[c] = (pw, ab)
        best = max(names, key=lambda c: (scores[c][0], scores[c][1], -names.index(c)))
        inner.append(scores)
        chosen.append(best)
        preds.append(
            Prediction(
                f"{row.kernel}@{row.device}", row.label, picks[best][i][i], pens[i], row.available
            )
        )
    labels, counts = np.unique(y, return_counts=True)
    techniques = data.techniques

    def cv_of(predictions: list[Prediction]) -> CrossValidation:
        return CrossValidation(
            heuristic=",".join(sorted({r.heuristic for r in rows})),
            device=",".join(sorted({r.device for r in rows})),
            techniques=techniques,
            predictions=predictions,
            confusion=_confusion(techniques, predictions),
            importances={},
            majority=str(labels[int(np.argmax(counts))]),
            majority_share=float(counts.max() / counts.sum()),
            ranking=_ranking(y),
        )

    plain = {
        c: cv_of(
            [
                Prediction(f"{r.kernel}@{r.device}", r.label, picks[c][i][i], pens[i], r.available)
                for i, r in enumerate(rows)
            ]
        )
        for c in names
    }
    return NestedCrossValidation(names, cv_of(preds), chosen, inner, plain)


def nested_leave_one_out(
    data: Dataset,
    candidates: Mapping[str, TechniqueForest | None],
    *,
    with_device: bool = False,
) -> NestedCrossValidation:
    """Nested leave-one-out over ``candidates`` (name -> forest, or None for the
    majority constant), in order of preference on ties. See
    :class:`NestedCrossValidation`."""
    picks = {
        name: pair_picks(data, est, with_device=with_device) for name, est in candidates.items()
    }
    return nested_from_picks(data, picks)
