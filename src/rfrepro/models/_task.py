"""Targets of the Wu et al. (2016) solvers: real values, or +-1 columns one-vs-all.

The CG ridge, BlockDiag, exact-kernel ridge and coordinate-descent models all
solve real-valued problems; classification is one-vs-all least squares (or
squared hinge) on +-1 targets, as in the paper. This mixin turns ``y`` into
the target matrix and scores back into labels, once for all of them.
"""

from __future__ import annotations

import numpy as np
from sklearn.preprocessing import LabelBinarizer

#: ``task`` values: the dataset tasks of the registry, plus a generic "classification".
TASKS = ("regression", "binary", "multiclass", "classification")


class TaskMixin:
    """Encode ``y`` for ``self.task`` and decode the real-valued scores of ``_scores``."""

    def _is_classifier(self) -> bool:
        if self.task not in TASKS:
            raise ValueError(f"task={self.task!r}; valid tasks: {', '.join(TASKS)}")
        return self.task != "regression"

    def _encode(self, y) -> np.ndarray:
        """(n, k) float64 targets: y itself (k = 1 or its columns), or +-1 one-vs-all."""
        if not self._is_classifier():
            Y = np.asarray(y, dtype=np.float64)
            self._single_output = Y.ndim == 1
            return Y.reshape(len(Y), -1)
        binarizer = LabelBinarizer(neg_label=-1, pos_label=1)
        T = binarizer.fit_transform(y).astype(np.float64)
        self.classes_ = binarizer.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y")
        return T

    def _decode(self, scores: np.ndarray) -> np.ndarray:
        if not self._is_classifier():
            return scores[:, 0] if self._single_output else scores
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X) -> np.ndarray:
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        return self._decode(self._scores(X))
