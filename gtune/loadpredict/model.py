"""The technique classifier: a scikit-learn estimator around a random forest.

Follows scikit-learn's conventions: ``__init__`` only stores its parameters, ``fit``
returns ``self``, fitted state ends in ``_``; so it works with ``clone``,
cross-validation and ``get_params``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data


def sklearn_version() -> str:
    """The installed scikit-learn's version: a forest's fit, and so its
    cross-validation, can change between versions for the same data and seed."""
    import sklearn

    return str(sklearn.__version__)


class TechniqueForest(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Predicts a kernel's best data-loading technique from its static features.

    ``n_estimators``, ``max_depth``, ``min_samples_leaf`` and ``random_state`` are passed
    to :class:`~sklearn.ensemble.RandomForestClassifier`. ``class_weight`` defaults to
    None (unweighted): on the H100's 72 labelled kernels a nested leave-one-out chose an
    unweighted forest in every outer fold, and ``"balanced"`` (the earlier default)
    scored 0.981 penalty-weighted against 0.995 unweighted
    (``benchmarks/results/predict/h100-scale/evaluation.md``).
    """

    def __init__(
        self,
        n_estimators: int = 200,
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        class_weight: str | None = None,
        random_state: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.class_weight = class_weight
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> TechniqueForest:
        X_, y_ = validate_data(self, X, y, reset=True)
        check_classification_targets(y_)
        self.classes_ = np.unique(y_)
        if len(self.classes_) == 1:
            # A device where one technique always won: nothing to learn, and a forest
            # would say the same; keep it explicit.
            self.forest_: RandomForestClassifier | None = None
            self.constant_ = self.classes_[0]
            self.feature_importances_ = np.zeros(X_.shape[1])
            return self
        self.forest_ = RandomForestClassifier(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            class_weight=self.class_weight,
            random_state=self.random_state,
        ).fit(X_, y_)
        self.constant_ = None
        self.feature_importances_ = self.forest_.feature_importances_
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "classes_")
        X_ = validate_data(self, X, reset=False)
        if self.forest_ is None:
            return np.ones((len(X_), 1))
        proba: np.ndarray = self.forest_.predict_proba(X_)
        return proba

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)
        out: np.ndarray = self.classes_[np.argmax(proba, axis=1)]
        return out
