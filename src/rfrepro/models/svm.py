"""Support vector machines: linear (liblinear) on features, kernel on an exact kernel.

The regularisation is given either as scikit-learn's ``C`` or as the papers'
``lam`` for the objective lam/2 ||w||^2 + (1/m) sum_i hinge_i, which is
liblinear's objective with C = 1 / (lam m) (Sun et al. 2018).

Sun et al. (2018, Sec. 2) write both SVMs without a bias term "for technical
convenience"; their released code fits one in both. ``fit_intercept`` selects
either: with a bias, :class:`LinearSVM` is liblinear's (which penalises the
bias as the weight of a constant feature ``intercept_scaling``) and
:class:`KernelSVM` is libsvm's (an unpenalised bias); without a bias,
both solve the no-bias hinge-loss problem with liblinear's dual coordinate
descent.
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.validation import check_is_fitted, validate_data

#: liblinear's default stopping tolerance; libsvm's is 1e-3.
LIBLINEAR_TOL = 1e-4


def _resolve_C(C: float | None, lam: float | None, m: int) -> float:
    if (C is None) == (lam is None):
        raise ValueError(f"give exactly one of C and lam (got C={C!r}, lam={lam!r})")
    if lam is not None and not (np.isfinite(float(lam)) and float(lam) > 0):
        raise ValueError(f"lam must be positive and finite, got {lam!r}")
    value = float(C) if C is not None else 1.0 / (float(lam) * m)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"C must be positive and finite (C={C!r}, lam={lam!r}, m={m})")
    return value


#: Eigenfeatures of the last few training kernels: a lambda sweep refits the same K many times.
_EIGEN_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
_EIGEN_CACHE_SIZE = 4


def _eigenfeatures(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, U): the eigenpairs of K with eigenvalue above m * eps * trace(K) (rounding level)."""
    K = np.ascontiguousarray(K)
    key = (K.shape, hashlib.blake2b(K.view(np.uint8), digest_size=16).hexdigest())
    hit = _EIGEN_CACHE.get(key)
    if hit is None:
        floor = K.shape[0] * np.finfo(np.float64).eps * max(float(np.trace(K)), 0.0)
        if floor <= 0:
            raise ValueError("KernelSVM: the training kernel has no positive diagonal")
        hit = scipy.linalg.eigh(K, subset_by_value=[floor, np.inf], driver="evr")
        while len(_EIGEN_CACHE) >= _EIGEN_CACHE_SIZE:
            _EIGEN_CACHE.pop(next(iter(_EIGEN_CACHE)))
        _EIGEN_CACHE[key] = hit
    return hit


def _liblinear(C: float, loss: str, fit_intercept: bool, intercept_scaling: float, max_iter: int,
               tol: float) -> LinearSVC:
    return LinearSVC(C=C, loss=loss, fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                     dual=True, max_iter=max_iter, tol=tol, random_state=0)


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
        Sun et al.'s RFSVM has no bias term (the paper); their code fits one.
    intercept_scaling : float
        With a bias: liblinear's constant feature (the bias is its weight,
        penalised like the others).
    max_iter, tol : liblinear's stopping rule (``converged_`` says whether
        it stopped on ``tol`` before ``max_iter`` passes).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> svm = LinearSVM(lam=0.1).fit(X, y)
    >>> svm.predict(X).tolist(), svm.intercept_.tolist()
    ([1, 1, -1, -1], [0.0])
    """

    #: recorded with each run: the C used, liblinear's passes and whether it stopped before max_iter
    recorded_attributes = ("C_", "n_iter_", "converged_")

    input_kind = "features"

    def __init__(self, *, lam=None, C=None, loss="hinge", fit_intercept=False, intercept_scaling=1.0,
                 max_iter=100_000, tol=LIBLINEAR_TOL):
        self.lam = lam
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        self.C_ = _resolve_C(self.C, self.lam, X.shape[0])
        self.svc_ = _liblinear(self.C_, self.loss, self.fit_intercept, self.intercept_scaling,
                               self.max_iter, self.tol).fit(X, y)
        self.classes_ = self.svc_.classes_
        self.n_iter_ = int(np.max(self.svc_.n_iter_))
        self.converged_ = self.n_iter_ < self.max_iter
        self.intercept_ = np.atleast_1d(self.svc_.intercept_)
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
    """Kernel SVM on a precomputed exact kernel (``ExactKernel`` output), no bias by default.

    Parameters
    ----------
    lam, C : float
        Exactly one, as for :class:`LinearSVM`.
    fit_intercept : bool
        False (Sun et al.'s KSVM): the no-bias dual, a QP with box
        constraints only, solved by liblinear on the kernel's eigenfeatures
        (below). True: libsvm's SVC, whose bias is unpenalised (the authors'
        code).
    tol : float or None
        Stopping tolerance; None: the solver's default (liblinear 1e-4,
        libsvm 1e-3).
    max_iter : int
        Passes of liblinear (no bias); libsvm runs to ``tol``.
    cache_size : float
        libsvm's kernel cache (MB).

    Notes
    -----
    Neither libsvm nor liblinear takes a precomputed kernel without a bias
    (libsvm's dual always carries the bias's equality constraint). With
    K = U S U^T, the features Z = U S^(1/2) satisfy Z Z^T = K, so the
    no-bias linear SVM on Z is the no-bias kernel SVM (same dual), and a
    new point's decision value is k(x, X_train) U S^(-1/2) w. Eigenvalues
    below m * eps * trace(K) are eigh's rounding noise and are not computed
    (LAPACK's subset driver); the last few kernels' eigenpairs are cached,
    so a sweep over lambda decomposes each training kernel once.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> K = X @ X.T
    >>> KernelSVM(lam=0.1).fit(K, y).predict(K).tolist()
    [1, 1, -1, -1]
    """

    #: recorded with each run: the C used, the solver's iterations and whether it converged
    recorded_attributes = ("C_", "n_iter_", "converged_")

    input_kind = "kernel"

    def __init__(self, *, lam=None, C=None, fit_intercept=False, tol=None, max_iter=100_000, cache_size=500):
        self.lam = lam
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"KernelSVM needs the square training kernel, got shape {X.shape}")
        self.C_ = _resolve_C(self.C, self.lam, X.shape[0])
        if self.fit_intercept:
            tol = 1e-3 if self.tol is None else self.tol
            self.svc_ = SVC(kernel="precomputed", C=self.C_, tol=tol, cache_size=self.cache_size).fit(X, y)
            self.n_iter_ = int(np.max(self.svc_.n_iter_))
            self.converged_ = True  # libsvm has no iteration cap here (max_iter=-1)
            self.intercept_ = self.svc_.intercept_
        else:
            self._fit_no_bias(X, y)
        self.classes_ = self.svc_.classes_
        return self

    def _fit_no_bias(self, K, y):
        s, U = _eigenfeatures(K)
        root = np.sqrt(s)
        Z = U * root
        tol = LIBLINEAR_TOL if self.tol is None else self.tol
        self.svc_ = _liblinear(self.C_, "hinge", False, 1.0, self.max_iter, tol).fit(Z, y)
        self.n_iter_ = int(np.max(self.svc_.n_iter_))
        self.converged_ = self.n_iter_ < self.max_iter
        # decision(x) = k(x, X_train) @ dual_coef_.T: one column per liblinear weight vector
        self.dual_coef_ = (U @ (self.svc_.coef_ / root).T).T
        self.intercept_ = np.zeros(self.dual_coef_.shape[0])

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.fit_intercept:
            return self.svc_.decision_function(X)
        scores = X @ self.dual_coef_.T
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        check_is_fitted(self)
        if self.fit_intercept:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return self.svc_.predict(X)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
