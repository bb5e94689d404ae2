"""Kernel ridge regression on features (primal) or on a kernel (dual), and the
least-squares classifier built on it."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_solve, eigh, solve
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features._base import NONNEGATIVE_REAL, POSITIVE_INT, RANDOM_STATE
from rfrepro.models._cholesky import cho_factor_guarded


def _check_lam(lam: float) -> float:
    lam = float(lam)
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    return lam


def _spd_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve A X = B for symmetric positive (semi)definite A."""
    try:
        return cho_solve(cho_factor_guarded(A), B, check_finite=False)
    except LinAlgError:  # singular (lam = 0 and rank deficient): least squares
        return solve(A, B, assume_a="sym") if np.linalg.matrix_rank(A) == A.shape[0] else (
            np.linalg.lstsq(A, B, rcond=None)[0]
        )


def _gram(Z, *, rows: bool) -> np.ndarray:
    """Z Z^T (``rows``, n x n) or Z^T Z (D x D) as a dense float64 array; a sparse Z is never densified.

    For a CSR Z the product is taken sparse and only its (small, usually
    dense) result is made dense: random binning's Z has millions of columns
    but a few stored values per row.
    """
    G = Z @ Z.T if rows else Z.T @ Z
    return G.toarray() if sp.issparse(G) else np.asarray(G)


def _loo_squares(T: np.ndarray, yhat: np.ndarray, h: np.ndarray) -> float:
    """Sum of squared leave-one-out residuals (t_i - yhat_i) / (1 - h_i) of ridge's fit."""
    return float(np.sum(((T - yhat) / (1.0 - h)[:, None]) ** 2))


def _loo_primal(Z: np.ndarray, T: np.ndarray, grid: np.ndarray, chunk: int = 2048,
                rows: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """(lam, coef) of the least mean squared leave-one-out error over ``grid``, for n > D rows, no intercept.

    One eigendecomposition Z^T Z = V diag(s) V^T serves every lam: the
    hat matrix's diagonal is h_i = sum_j (Z V)_ij^2 / (s_j + lam) and the
    leave-one-out residual is (t_i - yhat_i) / (1 - h_i). Z V is formed a
    block of rows at a time, so the extra memory is D x D plus a block, where
    scikit-learn's SVD route (``RidgeClassifierCV``) holds an n x D U besides
    Z: on 54000 x 10000 features that is 4.3 GB more per fit. Ties go to the
    first (smallest) lam of the sorted ``grid``, as there. A CSR Z stays
    sparse: Z^T Z, Z^T T and each block Z V are sparse-times-dense products.

    ``rows``: average the leave-one-out errors over these rows only (each is
    still left out of a fit on all the others): Z V is then formed for them
    alone, which on 54000 x 10000 features is 45% of the search's time.
    """
    # LAPACK's divide and conquer (syevd) writes the eigenvectors over Z^T Z (passed as its
    # transpose, the same symmetric matrix in the column order LAPACK overwrites): numpy's eigh
    # would first copy it and keep LAPACK's 2 D^2 workspace outside numpy's view (at
    # D = 10000 that is 2.4 GB more at the peak, 8.8 GB resident in all with the features)
    s, V = eigh(_gram(Z, rows=False).T, driver="evd", overwrite_a=True, check_finite=False)
    s = np.maximum(s, 0.0)  # rounding can leave the smallest eigenvalues slightly negative
    A = V.T @ np.asarray(Z.T @ T)  # D x k
    inv = 1.0 / (s[None, :] + grid[:, None])  # lams x D
    sq = np.zeros(grid.size)
    n = Z.shape[0] if rows is None else rows.size
    for start in range(0, n, chunk):
        part = slice(start, start + chunk) if rows is None else rows[start:start + chunk]
        Q = np.asarray(Z[part] @ V)
        Q2 = Q * Q
        t = T[part]
        for g in range(grid.size):
            h = Q2 @ inv[g]
            yhat = Q @ (A * inv[g][:, None])
            sq[g] += _loo_squares(t, yhat, h)
    best = int(np.argmin(sq))
    return float(grid[best]), V @ (A * inv[best][:, None])


def _loo_dual(Z: np.ndarray, T: np.ndarray, grid: np.ndarray) -> tuple[float, np.ndarray]:
    """(lam, coef) as :func:`_loo_primal`, for n <= D rows: through Z Z^T = U diag(s) U^T.

    The hat matrix is U diag(s / (s + lam)) U^T, so h_i = sum_j U_ij^2 s_j / (s_j + lam)
    and every lam costs O(n^2 k) once U is known. The same computation as
    scikit-learn's ``RidgeClassifierCV`` without intercept (its "eigen" mode),
    with LAPACK's divide-and-conquer eigensolver (``syevd``), which is about 15%
    faster than scipy's default MRRR driver on the n = 8000 kernels of
    Schleif et al.'s Table 1; the n x n eigenvectors overwrite the kernel. A
    CSR Z (any number of columns) enters only through Z Z^T and Z^T applied to
    an n x k block.
    """
    s, U = eigh(_gram(Z, rows=True).T, driver="evd", overwrite_a=True, check_finite=False)
    s = np.maximum(s, 0.0)
    UtT = U.T @ T  # n x k
    U2 = U * U
    sq = np.empty(grid.size)
    for g, lam in enumerate(grid):
        w = s / (s + lam)
        h = U2 @ w
        yhat = U @ (UtT * w[:, None])
        sq[g] = _loo_squares(T, yhat, h)
    best = int(np.argmin(sq))
    return float(grid[best]), np.asarray(Z.T @ (U @ (UtT / (s + grid[best])[:, None])))


def _check_grid(lam_grid) -> np.ndarray:
    """``lam_grid`` as a sorted float array (sorted: a tie, first best kept, goes to the smaller lam)."""
    grid = np.asarray(lam_grid, dtype=np.float64).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError(f"lam_grid must hold finite numbers > 0, got {lam_grid!r}")
    return np.sort(grid)


def _loo_choose(Z, T: np.ndarray, lam_grid, rows: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """(lam, coef) of the least leave-one-out error over ``lam_grid``: the primal or dual route by shape."""
    grid = _check_grid(lam_grid)
    # the coefficients at the chosen lam come from the same eigendecomposition: no second solve
    if Z.shape[0] > Z.shape[1]:
        return _loo_primal(Z, T, grid, rows=rows)
    return _loo_dual(Z, T, grid)


#: Default grid of ``lam="cv"``: one value per decade. The features' Gram
#: Z Z^T approximates a kernel with unit diagonal, so its eigenvalues lie
#: between ~0 and n: 1e-6 is interpolation, 1e3 shrinks all but the leading
#: few directions.
LAM_GRID = tuple(10.0**p for p in range(-6, 4))


class RidgeRegression(RegressorMixin, BaseEstimator):
    """Ridge regression min_w ||y - Z w||^2 + lam ||w||^2, i.e. KRR with kernel Z Z^T.

    Solved in the primal, (Z^T Z + lam I) w = Z^T y, when the number of
    features D is at most the number of rows n, else in the dual,
    (Z Z^T + lam I) a = y, w = Z^T a: either way the system is
    min(n, D) square. Z may be a scipy.sparse matrix (random binning's CSR
    output): the Gram is then a sparse product with a dense result, and Z is
    never densified, so a Z with millions of columns takes the dual route
    at the cost of an n x n kernel. With ``precomputed=True``, X is a kernel
    block K(rows, training rows) and the dual (K + lam I) a = y is solved:
    exact KRR with the same ``lam`` has the same training predictions as
    ridge on any Z with Z Z^T = K.

    Parameters
    ----------
    lam : float or "cv"
        Regularisation on the unnormalised squared loss. ``"cv"`` picks it
        from ``lam_grid`` by leave-one-out cross-validation on the training
        rows (least mean squared leave-one-out residual, summed over the
        targets; ties to the smaller lam). Every lam shares one
        eigendecomposition, of Z^T Z when n > D, else of Z Z^T, so the search
        costs about one eigendecomposition. Features only.
    lam_grid : sequence of float
        Candidates for ``lam="cv"`` (all > 0).
    precomputed : bool
        X is a precomputed kernel (as given by ``ExactKernel``).

    Attributes
    ----------
    lam_ : float
        The lam used: ``lam`` itself, or the cross-validated choice.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.randn(60, 40)
    >>> y = Z[:, 0] + 0.5 * rng.randn(60)
    >>> RidgeRegression(lam="cv", lam_grid=[1e-3, 1.0, 10.0, 1e3]).fit(Z, y).lam_
    10.0
    """

    #: recorded with each run: the lam used (the cross-validated choice with lam='cv')
    recorded_attributes = ("lam_",)

    _parameter_constraints: dict = {"lam": [*NONNEGATIVE_REAL, StrOptions({"cv"})], "lam_grid": ["array-like"],
        "precomputed": ["boolean"]}

    def __init__(self, lam: float | str = 1e-3, *, lam_grid=LAM_GRID, precomputed: bool = False):
        self.lam = lam
        self.lam_grid = lam_grid
        self.precomputed = precomputed

    @property
    def input_kind(self) -> str:
        return "kernel" if self.precomputed else "features"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse=self._accept_sparse, dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=True)
        Y = np.asarray(y, dtype=np.float64)
        Xd = X.astype(np.float64, copy=False)
        n, D = Xd.shape
        if isinstance(self.lam, str):
            if self.lam != "cv":
                raise ValueError(f"lam must be a number >= 0 or 'cv', got {self.lam!r}")
            if self.precomputed:
                raise ValueError("lam='cv' needs features, not a precomputed kernel")
            T = Y.reshape(n, -1)
            self.lam_, coef = _loo_choose(Xd, T, self.lam_grid)
            self.coef_ = coef if Y.ndim == 2 else coef[:, 0]
            return self
        lam = self.lam_ = _check_lam(self.lam)
        if self.precomputed:
            if n != D:
                raise ValueError(f"precomputed kernel must be square at fit, got {X.shape}")
            self.dual_coef_ = _spd_solve(Xd + lam * np.eye(n), Y)
        elif D <= n:
            G = _gram(Xd, rows=False)
            G[np.diag_indices(D)] += lam
            self.coef_ = _spd_solve(G, np.asarray(Xd.T @ Y))
        else:
            G = _gram(Xd, rows=True)
            G[np.diag_indices(n)] += lam
            self.coef_ = np.asarray(Xd.T @ _spd_solve(G, Y))
        return self

    @property
    def _accept_sparse(self):
        # features may be CSR (random binning); a precomputed kernel is a dense block
        return False if self.precomputed else "csr"

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=self._accept_sparse, dtype=[np.float64, np.float32], reset=False)
        W = self.dual_coef_ if self.precomputed else self.coef_
        return np.asarray(X.astype(np.float64, copy=False) @ W)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.input_tags.sparse = not self.precomputed
        return tags


class LeastSquaresClassifier(ClassifierMixin, BaseEstimator):
    """Least-squares classification on +-1 targets, one-vs-rest for multiclass.

    Binary: one ridge regression on y in {-1, +1}, predict its sign.
    Multiclass: one +-1 column per class, predict the argmax. All columns share
    one factorisation of the system matrix. Features may be a CSR matrix, as
    for :class:`RidgeRegression`.

    Parameters
    ----------
    lam : float or "cv"
        Ridge regularisation (see :class:`RidgeRegression`). ``"cv"`` picks it
        from ``lam_grid`` by leave-one-out cross-validation on the training
        rows: the lam with the least mean squared leave-one-out error of the
        +-1 targets (summed over the one-vs-rest columns), ties to the smaller
        lam. All lams share one eigendecomposition, of Z Z^T when D >= n, else
        of Z^T Z, so the search costs about one eigendecomposition
        (scikit-learn's ``RidgeClassifierCV`` without intercept). Features only.
    lam_grid : sequence of float
        Candidates for ``lam="cv"`` (all > 0).
    loo_rows : int or None
        With ``lam="cv"`` and more rows than features: average the
        leave-one-out error over at most this many rows drawn at random
        (``random_state``), each left out of a fit on all the others. None:
        every row. The error of a decade-spaced grid's lams differ by far more
        than such an average's sampling error on 10000 rows, and the search's
        row-by-row part (Z V) shrinks in proportion.
    random_state : int, RandomState or None
        Draws the ``loo_rows`` rows.
    precomputed : bool
        X is a precomputed kernel block.

    Attributes
    ----------
    lam_ : float
        The lam used: ``lam`` itself, or the cross-validated choice.
    classes_ : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.randn(80, 5)
    >>> y = (Z[:, 0] + 0.1 * rng.randn(80) > 0).astype(int)
    >>> clf = LeastSquaresClassifier(lam="cv").fit(Z, y)
    >>> bool(clf.lam_ in LAM_GRID), clf.score(Z, y) > 0.9
    (True, True)
    """

    #: recorded with each run: the lam used (the cross-validated choice with lam='cv')
    recorded_attributes = ("lam_",)

    _parameter_constraints: dict = {"lam": [*NONNEGATIVE_REAL, StrOptions({"cv"})], "lam_grid": ["array-like"],
        "loo_rows": [None, *POSITIVE_INT], "random_state": RANDOM_STATE, "precomputed": ["boolean"]}

    def __init__(self, lam: float | str = 1e-6, *, lam_grid=LAM_GRID, loo_rows: int | None = None,
                 random_state=0, precomputed: bool = False):
        self.lam = lam
        self.lam_grid = lam_grid
        self.loo_rows = loo_rows
        self.random_state = random_state
        self.precomputed = precomputed

    @property
    def input_kind(self) -> str:
        return "kernel" if self.precomputed else "features"

    _accept_sparse = RidgeRegression._accept_sparse

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse=self._accept_sparse, dtype=[np.float64, np.float32])
        self._binarizer = LabelBinarizer(neg_label=-1, pos_label=1)
        T = self._binarizer.fit_transform(y).astype(np.float64)
        self.classes_ = self._binarizer.classes_
        if len(self.classes_) < 2:
            raise ValueError("LeastSquaresClassifier needs at least 2 classes in y")
        if isinstance(self.lam, str):
            if self.lam != "cv":
                raise ValueError(f"lam must be a number >= 0 or 'cv', got {self.lam!r}")
            if self.precomputed:
                raise ValueError("lam='cv' needs features, not a precomputed kernel")
            self._fit_loo(X, y)
        else:
            self.lam_ = _check_lam(self.lam)
            self.ridge_ = RidgeRegression(self.lam_, precomputed=self.precomputed).fit(X, T)
        return self

    def _fit_loo(self, X, y) -> None:
        ridge = RidgeRegression()
        T = self._binarizer.transform(y).astype(np.float64)
        Z = X.astype(np.float64, copy=False)
        rows = self._loo_subset(X.shape[0]) if X.shape[0] > X.shape[1] else None
        ridge.lam, ridge.coef_ = _loo_choose(Z, T, self.lam_grid, rows=rows)
        self.lam_ = ridge.lam_ = float(ridge.lam)
        ridge.n_features_in_ = X.shape[1]
        self.ridge_ = ridge

    def _loo_subset(self, n: int) -> np.ndarray | None:
        if self.loo_rows is None:
            return None
        if isinstance(self.loo_rows, bool) or not isinstance(self.loo_rows, numbers.Integral) \
                or self.loo_rows < 1:
            raise ValueError(f"loo_rows must be an integer >= 1 or None, got {self.loo_rows!r}")
        if self.loo_rows >= n:
            return None
        return np.sort(check_random_state(self.random_state).choice(n, int(self.loo_rows), replace=False))

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=self._accept_sparse, dtype=[np.float64, np.float32], reset=False)
        scores = self.ridge_.predict(X)
        # binary: one column of scores, returned 1-D as scikit-learn classifiers do
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self.precomputed
        return tags
