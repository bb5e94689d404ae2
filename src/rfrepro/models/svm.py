"""Support vector machines: linear on features, kernel on an exact kernel.

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

:class:`LinearSVM` solves with :func:`rfrepro.models._dual_cd.dual_cd_ovr`,
liblinear's algorithm run on dense rows in place (liblinear itself would
first copy them into a sparse node list twice their size) or on CSR rows
(``LINEAR_SVM_SOLVERS``); unlike liblinear, it can start from given duals,
which its lambda search uses along the path. For that search, dense features
wider than they are long (a float64 Gram no larger than the features) are
first reduced to their Gram matrix, computed once for the CV's folds and the
final fit, and the same coordinate steps run on it (n per step instead of 2 D).
A single fit at a given lam or C reads the rows: its n^2 D Gram would cost more
than the few passes it usually needs.
"""

from __future__ import annotations

import hashlib
import warnings
from numbers import Integral

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC, LinearSVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features._base import POSITIVE_INT, POSITIVE_REAL, RANDOM_STATE
from rfrepro.models._dual_cd import dual_cd_ovr

#: liblinear's default stopping tolerance; libsvm's is 1e-3.
LIBLINEAR_TOL = 1e-4

#: The solver of :class:`LinearSVM` for each input format: the same problem, the same stopping rule.
LINEAR_SVM_SOLVERS = {"dense": "dual_cd (rows in place, one-vs-rest classes in parallel)",
                      "csr": "dual_cd (CSR rows, one-vs-rest classes in parallel)"}

#: Rows per block when a dense array is scored (float32 blocks are scored in float64).
_SCORE_BLOCK_ROWS = 4096


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


#: Default grid of ``LinearSVM(lam="cv")``: one value per decade. With
#: features whose Gram approximates a unit-diagonal kernel, lam = 1/m is
#: liblinear's default C = 1; 1e-6 is about C = 100 on 10^4 rows (the
#: solver's passes grow with C, so the grid stops there), 0.1 leaves most
#: points inside the margin.
SVM_LAM_GRID = tuple(10.0**p for p in range(-6, 0))

#: Solver passes of each ``lam="cv"`` search fit (scikit-learn's default).
CV_MAX_ITER = 1000

#: Decades a ``lam="cv"`` search may add beyond each end of its grid while the best lam stays there.
CV_EDGE_EXTENSIONS = 3


def _gram(X) -> np.ndarray | None:
    """X X^T in float64 for the dense dual solver when X is at least as wide as it is long (D >= n), else None.

    Each coordinate step then reads a row of n Gram entries instead of two
    rows of D features (``dual_cd_ovr(gram=...)``), in either dtype: the n x n
    float64 Gram is at most the size of float64 features, twice that of float32
    ones (spambase's 2000 rows at D = 2048 in float32, one thread: the search
    took 1.0 s with the Gram against 1.4-1.6 s on the rows, as in float64 where
    it took 1.0-1.1 s). One Gram serves the CV's
    folds and the final fit. Only ``lam="cv"`` computes it: its n^2 D flops
    pay for themselves over the search's fits (folds x lams, many of them at
    the pass cap), not for one fit that stops after a few passes (Schleif et
    al.'s Table 1, D = 10000 columns, 13 passes on 8100 checkerboard rows, one
    thread: 12.4 s with the Gram, 0.75 s on the rows).
    """
    if sp.issparse(X) or X.shape[0] > X.shape[1]:
        return None
    X64 = np.asarray(X, dtype=np.float64)
    return X64 @ X64.T


def _liblinear(C: float, loss: str, fit_intercept: bool, intercept_scaling: float, max_iter: int,
               tol: float, random_state=0) -> LinearSVC:
    return LinearSVC(C=C, loss=loss, fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                     dual=True, max_iter=max_iter, tol=tol, random_state=random_state)


def _scores(X, coef: np.ndarray, intercept: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """(n, k) decision values X[rows] @ coef.T + intercept, a dense X in float64 blocks (no full copy)."""
    if sp.issparse(X):
        Xr = X if rows is None else X[rows]
        return np.asarray(Xr @ coef.T) + intercept
    n = X.shape[0] if rows is None else rows.size
    out = np.empty((n, coef.shape[0]))
    for start in range(0, n, _SCORE_BLOCK_ROWS):
        stop = min(start + _SCORE_BLOCK_ROWS, n)
        block = X[start:stop] if rows is None else X[rows[start:stop]]
        np.matmul(block.astype(np.float64, copy=False), coef.T, out=out[start:stop])
    return out + intercept


def _labels(scores: np.ndarray, classes: np.ndarray) -> np.ndarray:
    if scores.shape[1] == 1:
        return classes[(scores[:, 0] > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


class LinearScores:
    """Scores and labels of a fitted linear classifier (``coef_``, ``intercept_``, ``classes_``), one
    column per one-vs-rest problem; dense rows or CSR."""

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        scores = _scores(X, self.coef_, self.intercept_)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return _labels(_scores(X, self.coef_, self.intercept_), self.classes_)


class LinearSVM(LinearScores, ClassifierMixin, BaseEstimator):
    """Linear SVM: liblinear's problem and algorithm (dual coordinate descent), no bias by default.

    Parameters
    ----------
    lam, C : float, or lam "cv"
        Exactly one: ``C`` directly, or ``lam`` giving C = 1 / (lam m).
        ``lam="cv"`` picks lam from ``lam_grid`` by ``cv_folds``-fold
        stratified cross-validation on the training rows (least mean
        misclassification rate; ties to the larger lam, the simpler model),
        then refits on all rows. The search runs down the grid from its
        largest lam, each fold's fit starting from that fold's duals at the
        previous lam (warm starts), and the final fit starts from the chosen
        lam's fold duals (each row's mean over the folds that trained on it,
        scaled to the full set's C): a fit that converges reaches the same
        optimum. Warm starts save passes on small steps in C (a tenth: about
        half); on the grid's decade steps, measured on a checkerboard, they
        take about as many passes as a start from zero. The search is in lam, not C, so a fold's
        choice carries over to the full training set (C = 1 / (lam m) for
        each set's own m). It costs ``cv_folds`` fits per grid value, each
        of at most ``CV_MAX_ITER`` passes (``cv_unconverged_`` counts those
        that stop there; the final fit has ``max_iter``). While the best lam
        is an end of the searched grid (of two or more values), the grid
        grows by one decade beyond that end, at most ``CV_EDGE_EXTENSIONS``
        times per end; ``lam_at_edge_`` says whether the final choice is
        still an end (then the optimum may lie further out, or the error
        curve is flat there).
    lam_grid : sequence of float
        Candidates for ``lam="cv"`` (all > 0).
    cv_folds : int
        Folds of the ``lam="cv"`` search (shuffled with a fixed seed).
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
    random_state : int, RandomState or None
        Seeds the order in which each pass visits the coordinates.

    Attributes
    ----------
    coef_ : ndarray of shape (1, D) for two classes, else (n_classes, D)
    intercept_ : ndarray of shape (1,) or (n_classes,)
        ``intercept_scaling`` times the bias feature's weight (zeros without a bias).
    C_, lam_ : float
    n_iter_ : int
        Passes of the final fit (the most over one-vs-rest problems).
    converged_ : bool
    cv_errors_ : dict
        ``lam="cv"``: the mean validation error of each lam searched.
    cv_unconverged_ : int
    lam_at_edge_ : bool
        ``lam="cv"``: the choice is an end of the searched (extended) grid.

    Notes
    -----
    Solved by the dual coordinate descent of Hsieh et al. (2008) written
    for this package (:mod:`rfrepro.models._dual_cd`), which reads
    C-contiguous dense rows in place, or CSR rows: a fit needs the features
    plus O(n + D) per one-vs-rest problem, where liblinear first copies
    dense features into its sparse node format (about 16 bytes per value).
    It is liblinear's algorithm with liblinear's stopping rule and
    shrinking, so both reach the same optimum to within ``tol`` (their
    random visiting orders differ, so the last digits do); unlike liblinear
    it takes a starting point, for the warm starts of ``lam="cv"``. Its
    one-vs-rest problems run in parallel over numba's threads.

    References
    ----------
    C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan. A dual
    coordinate descent method for large-scale linear SVM. ICML 2008.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> svm = LinearSVM(lam=0.1).fit(X, y)
    >>> svm.predict(X).tolist(), svm.intercept_.tolist()
    ([1, 1, -1, -1], [0.0])
    """

    #: recorded with each run: the C (and lam) used, the solver's passes and whether it stopped before max_iter
    recorded_attributes = ("C_", "lam_", "n_iter_", "converged_", "cv_unconverged_", "lam_at_edge_")

    input_kind = "features"

    _parameter_constraints: dict = {"lam": [None, *POSITIVE_REAL, StrOptions({"cv"})], "C": [None, *POSITIVE_REAL],
        "lam_grid": ["array-like"], "cv_folds": [Interval(Integral, 2, None, closed="left")],
        "loss": [StrOptions({"hinge", "squared_hinge"})], "fit_intercept": ["boolean"],
        "intercept_scaling": POSITIVE_REAL, "max_iter": POSITIVE_INT, "tol": POSITIVE_REAL,
        "random_state": RANDOM_STATE}

    def __init__(self, *, lam=None, C=None, lam_grid=SVM_LAM_GRID, cv_folds=3, loss="hinge",
                 fit_intercept=False, intercept_scaling=1.0, max_iter=100_000, tol=LIBLINEAR_TOL, random_state=0):
        self.lam = lam
        self.C = C
        self.lam_grid = lam_grid
        self.cv_folds = cv_folds
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y):
        # order="C" leaves a C-contiguous array as it is: the dense solver reads its rows in place
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], order="C")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"LinearSVM needs samples of at least 2 classes, got {self.classes_.tolist()}")
        lam, gram, start = self.lam, None, None
        if isinstance(lam, str):
            if lam != "cv":
                raise ValueError(f"lam must be a positive number, 'cv' or None, got {lam!r}")
            if self.C is not None:
                raise ValueError(f"give exactly one of C and lam (got C={self.C!r}, lam='cv')")
            gram = _gram(X)
            lam, start = self._cv_lam(X, codes, gram)
        self.C_ = _resolve_C(self.C, lam, X.shape[0])
        self.lam_ = float(lam) if lam is not None else 1.0 / (self.C_ * X.shape[0])
        self.coef_, self.intercept_, self.n_iter_ = self._solve(X, np.arange(X.shape[0]), codes, self.C_,
                                                                 int(self.max_iter), check_random_state(self.random_state),
                                                                 gram, start)
        self.converged_ = self.n_iter_ < self.max_iter
        if not self.converged_:
            warnings.warn(f"LinearSVM stopped after max_iter={self.max_iter} passes before reaching tol={self.tol}",
                          ConvergenceWarning, stacklevel=2)
        return self

    def _solve(self, X, rows: np.ndarray, codes: np.ndarray, C: float, max_iter: int, rng, gram=None, duals=None):
        """(coef, intercept, passes) of the SVM on rows ``rows`` (classes coded 0..k-1 as in ``classes_``).

        ``gram``: X[rows] X[rows]^T in float64, or None (see :func:`_gram`).
        ``duals``: the (problems, rows) start of the dual solver, overwritten
        with its final duals (None: from zero).
        """
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        W, n_iter = dual_cd_ovr(X, rows, codes[rows], self.classes_.size, C=C, hinge=self.loss == "hinge", bias=bias,
                                tol=float(self.tol), max_iter=max_iter, rng=rng, gram=gram, alpha=duals)
        return W[:, :-1], bias * W[:, -1], int(n_iter.max())

    def _cv_lam(self, X, codes: np.ndarray, gram=None) -> tuple[float, np.ndarray]:
        """The lam with the least ``cv_folds``-fold misclassification rate, the grid grown past a winning end.

        Also the start of the final fit's dual solver: the chosen lam's fold
        duals, each row's mean over the folds that trained on it, scaled to
        the full set's C.
        """
        grid = np.asarray(self.lam_grid, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
            raise ValueError(f"lam_grid must hold finite numbers > 0, got {self.lam_grid!r}")
        folds = list(StratifiedKFold(int(self.cv_folds), shuffle=True, random_state=0).split(X, codes))
        grams = [None if gram is None else gram[np.ix_(tr, tr)] for tr, _ in folds]
        rng = check_random_state(self.random_state)
        self.cv_unconverged_ = 0
        duals: dict[float, list] = {}  # lam -> its fits' duals per fold, the next lam's start
        errors = {lam: self._cv_error(X, codes, folds, lam, rng, grams, duals) for lam in np.unique(grid)[::-1].tolist()}
        extensions = {0: 0, -1: 0}  # decades added above the largest lam, below the smallest
        while True:
            lams = sorted(errors, reverse=True)
            err = [errors[lam] for lam in lams]
            best = int(np.argmin(err))  # lams in decreasing order: the first best is the larger lam
            end = 0 if best == 0 else (-1 if best == len(lams) - 1 else None)
            if end is None or len(lams) < 2 or extensions[end] >= CV_EDGE_EXTENSIONS:
                break
            extensions[end] += 1
            lam = lams[end] * 10.0 if end == 0 else lams[end] / 10.0
            errors[lam] = self._cv_error(X, codes, folds, lam, rng, grams, duals)
        self.cv_errors_ = errors
        self.lam_at_edge_ = best in (0, len(lams) - 1)
        chosen = float(lams[best])
        start, count = np.zeros((duals[chosen][0].shape[0], X.shape[0])), np.zeros(X.shape[0])
        for (tr, _), fold_duals in zip(folds, duals[chosen], strict=True):
            start[:, tr] += fold_duals * (tr.size / X.shape[0])  # C = 1 / (lam m): the full set's C over the fold's
            count[tr] += 1
        return chosen, start / np.maximum(count, 1)

    def _cv_error(self, X, codes: np.ndarray, folds: list, lam: float, rng, grams: list, duals: dict) -> float:
        """Mean validation misclassification rate of ``lam`` over ``folds``.

        Each fold's fit starts from that fold's duals at the nearest lam
        searched before (``duals``; feasible as they are where C grows, and
        clipped to the new bound where it shrinks), and adds its own.
        """
        # The smallest lams (C in the thousands on a few hundred rows) need up to
        # max_iter passes to converge and are the interpolating end of the grid:
        # their error is measured after at most CV_MAX_ITER passes, and the number
        # of such unconverged search fits is kept (cv_unconverged_), not warned about.
        passes = min(int(self.max_iter), CV_MAX_ITER)
        near = min(duals, key=lambda other: abs(np.log(other / lam)), default=None)
        problems = 1 if self.classes_.size == 2 else self.classes_.size
        error, fold_duals = 0.0, []
        for f, ((tr, va), gram) in enumerate(zip(folds, grams, strict=True)):
            start = np.zeros((problems, tr.size)) if near is None else duals[near][f].copy()
            coef, intercept, n_iter = self._solve(X, tr, codes, 1.0 / (lam * tr.size), passes, rng, gram, start)
            fold_duals.append(start)
            self.cv_unconverged_ += int(n_iter >= passes)
            error += np.mean(_labels(_scores(X, coef, intercept, va), np.arange(self.classes_.size)) != codes[va])
        duals[lam] = fold_duals
        return float(error / len(folds))


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

    _parameter_constraints: dict = {"lam": [None, *POSITIVE_REAL], "C": [None, *POSITIVE_REAL], "fit_intercept": ["boolean"],
        "tol": [None, *POSITIVE_REAL], "max_iter": POSITIVE_INT, "cache_size": POSITIVE_REAL}

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
