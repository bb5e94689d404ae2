"""Support vector machines: linear (liblinear) on features, kernel (libsvm) on an exact kernel.

The regularisation is given either as scikit-learn's ``C`` or as the papers'
``lam`` for the objective lam/2 ||w||^2 + (1/m) sum_i hinge_i, which is
liblinear's objective with C = 1 / (lam m) (Sun et al. 2018).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.validation import check_is_fitted, validate_data


def _resolve_C(C: float | None, lam: float | None, m: int) -> float:
    if (C is None) == (lam is None):
        raise ValueError(f"give exactly one of C and lam (got C={C!r}, lam={lam!r})")
    if lam is not None and not (np.isfinite(float(lam)) and float(lam) > 0):
        raise ValueError(f"lam must be positive and finite, got {lam!r}")
    value = float(C) if C is not None else 1.0 / (float(lam) * m)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"C must be positive and finite (C={C!r}, lam={lam!r}, m={m})")
    return value


class LinearSVM(ClassifierMixin, BaseEstimator):
    """Linear SVM by liblinear (scikit-learn's LinearSVC), no bias by default.

    Parameters
    ----------
    lam, C : float
        Exactly one: ``C`` directly, or ``lam`` giving C = 1 / (lam m).
    loss : {"hinge", "squared_hinge"}
        "hinge" for Sun et al. (RFSVM); liblinear's default "squared_hinge"
        for Schleif et al. (C = 1).
    fit_intercept : bool
        Sun et al.'s RFSVM has no bias term.
    max_iter, tol : liblinear stopping rule.
    """

    def __init__(self, *, lam=None, C=None, loss="hinge", fit_intercept=False, max_iter=10000, tol=1e-4):
        self.lam = lam
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    input_kind = "features"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        self.C_ = _resolve_C(self.C, self.lam, X.shape[0])
        self.svc_ = LinearSVC(
            C=self.C_, loss=self.loss, fit_intercept=self.fit_intercept, dual=True,
            max_iter=self.max_iter, tol=self.tol, random_state=0,
        ).fit(X, y)
        self.classes_ = self.svc_.classes_
        self.n_iter_ = int(np.max(self.svc_.n_iter_))
        self.converged_ = self.n_iter_ < self.max_iter
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self.svc_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self.svc_.predict(X)


class KernelSVM(ClassifierMixin, BaseEstimator):
    """Kernel SVM (libsvm) on a precomputed exact kernel (``ExactKernel`` output).

    Parameters
    ----------
    lam, C : float
        Exactly one, as for :class:`LinearSVM`. libsvm always fits a bias.
    """

    input_kind = "kernel"

    def __init__(self, *, lam=None, C=None, tol=1e-3, cache_size=500):
        self.lam = lam
        self.C = C
        self.tol = tol
        self.cache_size = cache_size

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"KernelSVM needs the square training kernel, got shape {X.shape}")
        self.C_ = _resolve_C(self.C, self.lam, X.shape[0])
        self.svc_ = SVC(kernel="precomputed", C=self.C_, tol=self.tol, cache_size=self.cache_size).fit(X, y)
        self.classes_ = self.svc_.classes_
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.svc_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.svc_.predict(X)
