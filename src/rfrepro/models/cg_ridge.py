"""Ridge regression in the primal by conjugate gradient on Z (Wu et al. 2016, Sec. 3.1)."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from rfrepro.features._base import check_positive_int
from rfrepro.models._task import TaskMixin
from rfrepro.models.ridge import _check_lam


@numba.njit(cache=True, nogil=True)
def _gram_matvec(indptr, indices, data, v, lam, out):  # pragma: no cover - compiled
    """out = Z^T (Z v) + lam v in one pass over the rows of a CSR Z (each row read once, while in cache)."""
    for j in range(v.size):
        out[j] = lam * v[j]
    for i in range(indptr.size - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * v[indices[k]]
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += data[k] * s


@numba.njit(cache=True, nogil=True)
def _gram_matvec_pattern(indptr, indices, scale2, v, lam, out):  # pragma: no cover - compiled
    """As _gram_matvec for a Z whose stored values all equal c (scale2 = c^2): only the indices are read."""
    for j in range(v.size):
        out[j] = lam * v[j]
    for i in range(indptr.size - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += v[indices[k]]
        s *= scale2
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += s


@numba.njit(cache=True, nogil=True)
def _renumber(indptr, indices, data, rows, D):  # pragma: no cover - compiled
    """Rows of a CSR matrix taken in the order ``rows``, columns numbered by first use in that order."""
    label = np.full(D, -1, dtype=np.int64)
    new_indptr = np.empty(rows.size + 1, dtype=np.int64)
    new_indices = np.empty(indices.size, dtype=indices.dtype)
    new_data = np.empty(data.size, dtype=data.dtype)
    new_indptr[0] = 0
    pos = 0
    used = 0
    for r in range(rows.size):
        i = rows[r]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if label[j] < 0:
                label[j] = used
                used += 1
            new_indices[pos] = label[j]
            new_data[pos] = data[k]
            pos += 1
        new_indptr[r + 1] = pos
    for j in range(D):  # columns no row uses: numbered last
        if label[j] < 0:
            label[j] = used
            used += 1
    return new_indptr, new_indices, new_data, label


def _local_layout(Z):
    """Rows and columns of a CSR ``Z`` renumbered for cache locality: (indptr, indices, data, column labels).

    Z^T Z does not depend on the order of Z's rows, and renumbering the columns
    only permutes the product. Rows are sorted by their first column (for
    random binning: points in the same bin of the first grid, hence close, so
    their bins in the other grids mostly coincide) and columns are numbered in
    order of first use in that row order, so consecutive rows read and update
    nearby entries of the D-vectors. O(nnz) besides sorting the n rows.
    Returns the renumbered CSR arrays and ``label``, the new number of each
    original column.
    """
    n, D = Z.shape
    first = np.full(n, D, dtype=np.int64)  # empty rows last
    stored = np.diff(Z.indptr) > 0
    first[stored] = Z.indices[Z.indptr[:-1][stored]]
    rows = np.argsort(first, kind="stable")
    return _renumber(Z.indptr, Z.indices, Z.data, rows, D)


def normal_operator(Z, lam: float) -> LinearOperator:
    """The operator v -> Z^T (Z v) + lam v, never forming Z^T Z (denser than Z for sparse Z).

    For a CSR ``Z`` the product is one compiled pass over the rows: row i's
    values give s = z_i' v and are added back as s z_i while still in cache, so
    Z streams from memory once per product instead of twice (Z v, then Z^T u).
    Rows and columns are first renumbered for locality (see ``_local_layout``),
    and when every stored value of Z is the same c (random binning's training
    features, all 1/sqrt(R)) only the column indices are read, a third of the
    bytes. Duplicate entries need no merging (each adds its share). Other
    inputs use scipy's products.

    >>> Z = sp.random(30, 12, density=0.3, format="csr", random_state=0)
    >>> v = np.arange(12.0)
    >>> bool(np.allclose(normal_operator(Z, 0.5) @ v, Z.T @ (Z @ v) + 0.5 * v))
    True
    """
    D = Z.shape[1]
    if sp.issparse(Z) and Z.format == "csr":
        indptr, indices, data, label = _local_layout(Z)
        data = np.asarray(data, dtype=np.float64)
        constant = data.size > 0 and bool(np.all(data == data[0]))

        def matvec(v):
            v_local = np.empty(D)
            v_local[label] = np.ravel(v)
            out = np.empty(D)
            if constant:
                _gram_matvec_pattern(indptr, indices, data[0] * data[0], v_local, lam, out)
            else:
                _gram_matvec(indptr, indices, data, v_local, lam, out)
            return out[label]
    else:
        ZT = Z.T

        def matvec(v):
            v = np.ravel(v)
            return ZT @ (Z @ v) + lam * v

    return LinearOperator((D, D), matvec=matvec, rmatvec=matvec, dtype=np.float64)


class CGRidge(TaskMixin, BaseEstimator):
    """Ridge in the primal, (Z^T Z + lam I) w = Z^T (y - b), solved by conjugate gradient.

    The solver touches Z only through products Z v and Z^T u, so a sparse
    ``Z`` (random binning) costs O(nnz(Z)) per iteration and is never
    densified. Classification is one-vs-all least squares on +-1 targets;
    multi-column targets are solved one column at a time.

    Parameters
    ----------
    lam : float
        Regularisation of the unnormalised squared loss ||y - Z w - b||^2 + lam ||w||^2.
    task : {"regression", "binary", "multiclass", "classification"}
        Regression predicts real values; the others predict labels.
    tol : float
        Relative residual tolerance of CG (``rtol`` of scipy's ``cg``).
    maxiter : int
        Iteration cap of CG per target column.
    fit_intercept : bool
        Fit an unpenalised intercept b (the targets are centred before the solve).

    Attributes
    ----------
    coef_ : ndarray of shape (D, k)
    intercept_ : ndarray of shape (k,)
    n_iter_ : int
        CG iterations, the most over the target columns.
    converged_ : bool
        Every column reached ``tol`` within ``maxiter``.

    References
    ----------
    L. Wu, J. Chen, I. E.-H. Yen and R. Yan. Revisiting random binning features: fast
    convergence and strong parallelizability. KDD 2016.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> Z = sp.random(50, 20, density=0.2, format="csr", random_state=0)
    >>> y = Z @ np.arange(20.0)
    >>> m = CGRidge(lam=1e-8, tol=1e-12, maxiter=1000, fit_intercept=False).fit(Z, y)
    >>> bool(np.allclose(m.predict(Z), y, atol=1e-4)), m.converged_
    (True, True)
    """

    recorded_attributes = ("n_iter_", "converged_")

    def __init__(self, lam: float = 0.01, *, task: str = "regression", tol: float = 1e-3,
                 maxiter: int = 1000, fit_intercept: bool = True):
        self.lam = lam
        self.task = task
        self.tol = tol
        self.maxiter = maxiter
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=not self._is_classifier())
        lam = _check_lam(self.lam)
        maxiter = check_positive_int(self.maxiter, "maxiter")
        if not (np.isfinite(self.tol) and self.tol > 0):
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")
        # one float64 copy of the values (if float32): mixed-dtype products would upcast per iteration
        Z = X.astype(np.float64, copy=False)
        T = self._encode(y)
        self.intercept_ = T.mean(axis=0) if self.fit_intercept else np.zeros(T.shape[1])
        A = normal_operator(Z, lam)
        self.coef_ = np.empty((Z.shape[1], T.shape[1]))
        iters, ok = [], []
        # sparse Z: every BLAS call of CG is a memory-bound vector operation, where
        # BLAS threads only add synchronisation (the sparse products are serial anyway)
        with threadpool_limits(1 if sp.issparse(Z) else None, user_api="blas"):
            for k in range(T.shape[1]):
                w, n_iter, converged = self._solve(A, Z.T @ (T[:, k] - self.intercept_[k]), maxiter)
                self.coef_[:, k] = w
                iters.append(n_iter)
                ok.append(converged)
        self.n_iter_ = int(max(iters))
        self.converged_ = bool(all(ok))
        return self

    def _solve(self, A, b, maxiter: int) -> tuple[np.ndarray, int, bool]:
        count = [0]

        def tick(_):
            count[0] += 1

        w, info = cg(A, b, rtol=self.tol, atol=0.0, maxiter=maxiter, callback=tick)
        return w, count[0], info == 0

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        scores = X @ self.coef_
        return np.asarray(scores.toarray() if sp.issparse(scores) else scores) + self.intercept_
