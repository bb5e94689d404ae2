"""Ridge regression in the primal by conjugate gradient on Z (Wu et al. 2016, Sec. 3.1)."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from rfrepro.features._base import (
    NONNEGATIVE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    check_positive_int,
    options,
)
from rfrepro.models._task import TASKS, TaskMixin
from rfrepro.models.ridge import _check_lam


@numba.njit(cache=True, nogil=True)
def _gram_matvec(indptr, indices, data, v, lam, out):  # pragma: no cover - compiled
    """out = Z^T (Z v) + lam v in one pass over the rows of a CSR Z (each row read once, while in cache)."""
    for j in range(v.size):
        out[j] = lam * v[j]
    for i in range(indptr.size - 1):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * v[indices[p]]
        for p in range(indptr[i], indptr[i + 1]):
            out[indices[p]] += data[p] * s


@numba.njit(cache=True, nogil=True)
def _gram_matmat(indptr, indices, data, V, lam, out):  # pragma: no cover - compiled
    """out = Z^T (Z V) + lam V for a (D, k) block V, in one pass over the rows of a CSR Z.

    Row i's values give s = z_i' V (k numbers) and are added back as s z_i while
    still in cache, so Z streams from memory once per product, for all k columns.
    """
    k = V.shape[1]
    s = np.empty(k)
    for j in range(V.shape[0]):
        for c in range(k):
            out[j, c] = lam * V[j, c]
    for i in range(indptr.size - 1):
        s[:] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            for c in range(k):
                s[c] += data[p] * V[j, c]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            for c in range(k):
                out[j, c] += data[p] * s[c]


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
    """The operator V -> Z^T (Z V) + lam V (a vector or a (D, k) block), never forming Z^T Z.

    Z^T Z is denser than a sparse Z. For a CSR ``Z`` each product is one
    compiled pass over the rows (``_gram_matmat``: Z streams from memory once,
    not twice, and once for all k columns of a block). Rows and columns are
    first renumbered for locality (see ``_local_layout``), and when every stored
    value of Z is the same c (random binning's training features, all
    1/sqrt(R)) only the column indices are read, a third of the bytes.
    Duplicate entries need no merging (each adds its share). Other inputs use
    scipy's or BLAS's products.

    >>> Z = sp.random(30, 12, density=0.3, format="csr", random_state=0)
    >>> V = np.arange(24.0).reshape(12, 2)
    >>> A = normal_operator(Z, 0.5)
    >>> bool(np.allclose(A @ V, Z.T @ (Z @ V) + 0.5 * V)), bool(np.allclose(A @ V[:, 0], (A @ V)[:, 0]))
    (True, True)
    """
    matmat, label, _ = _gram_products(Z, lam)
    D = Z.shape[1]
    if label is not None:
        local = matmat

        def matmat(V):
            V_local = np.empty_like(V, dtype=np.float64)
            V_local[label] = V
            return np.take(local(V_local), label, axis=0)

    def matvec(v):
        return matmat(np.reshape(v, (-1, 1)))[:, 0]

    return LinearOperator((D, D), matvec=matvec, rmatvec=matvec, matmat=matmat, dtype=np.float64)


def _gram_products(Z, lam: float):
    """(matmat, label, nbytes): V -> Z^T (Z V) + lam V on (D, k) blocks, in the columns' local numbering ``label``.

    ``label`` is None when the product uses Z's own numbering (dense or CSC Z);
    else V's row j is original column ``argsort(label)[j]`` (see ``_local_layout``).
    ``nbytes`` is what the product holds of Z: for a one-valued CSR Z its
    column indices, row pointers and column labels plus that one value (the
    all-equal values array is never read), else every array of Z.
    """
    if not (sp.issparse(Z) and Z.format == "csr"):
        ZT = Z.T
        held = (Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes) if sp.issparse(Z) else np.asarray(Z).nbytes
        return (lambda V: np.asarray(ZT @ (Z @ V)) + lam * V), None, int(held)
    indptr, indices, data, label = _local_layout(Z)
    data = np.asarray(data, dtype=np.float64)

    if data.size and bool(np.all(data == data[0])):
        # one value c (random binning's training Z): a stride-0 view, so only the indices stream from memory
        data = np.broadcast_to(data[0], data.shape)
    values = 8 if data.strides == (0,) else data.nbytes
    held = int(indptr.nbytes + indices.nbytes + label.nbytes + values)

    def matmat(V):
        V = np.ascontiguousarray(V, dtype=np.float64)
        out = np.empty_like(V)
        if V.shape[1] == 1:  # the one-column kernel: no inner loop over columns
            _gram_matvec(indptr, indices, data, V[:, 0], lam, out[:, 0])
        else:
            _gram_matmat(indptr, indices, data, V, lam, out)
        return out

    return matmat, label, held


@numba.njit(cache=True, nogil=True)
def _cg_step(X, R, P, AP, rr):  # pragma: no cover - compiled
    """One CG step of every column in two passes: X += a P, R -= a AP (a = rr / p'Ap), P = R + (rr_new / rr) P.

    Returns the new r'r per column (rr is left as it was)."""
    D, k = X.shape
    pap = np.zeros(k)
    for j in range(D):
        for c in range(k):
            pap[c] += P[j, c] * AP[j, c]
    alpha = rr / pap
    new = np.zeros(k)
    for j in range(D):
        for c in range(k):
            X[j, c] += alpha[c] * P[j, c]
            R[j, c] -= alpha[c] * AP[j, c]
            new[c] += R[j, c] * R[j, c]
    beta = new / rr
    for j in range(D):
        for c in range(k):
            P[j, c] = R[j, c] + beta[c] * P[j, c]
    return new


def lockstep_cg(matmat, B: np.ndarray, rtol: float,
                maxiter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve A X = B (A symmetric positive definite, given as ``matmat``: V -> A V for (D, k) blocks V) by k
    conjugate-gradient recurrences in lockstep.

    Each column follows exactly the textbook CG of its own right-hand side
    (its own step sizes; stopped once ||r|| <= rtol ||b||, as scipy's ``cg``
    with ``atol=0``), but the columns still running share one product A P per
    iteration. When A's product streams a large Z from memory, k columns cost
    about as much as one. scipy has no multi-right-hand-side CG (``cg`` takes
    one vector), hence this loop; the running columns are kept as one
    contiguous block (a converged column leaves it) and updated by a compiled
    step. Returns X, each column's iteration count and whether it converged
    within ``maxiter``.

    >>> M = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> X, its, ok = lockstep_cg(lambda V: M @ V, np.eye(2), 1e-12, 10)
    >>> bool(np.allclose(X, np.linalg.inv(M))), its.tolist(), ok.tolist()
    (True, [2, 2], [True, True])
    """
    B = np.asarray(B, dtype=np.float64).reshape(B.shape[0], -1)
    k = B.shape[1]
    X = np.zeros_like(B)
    rr = np.einsum("ij,ij->j", B, B)
    stop = (rtol * np.sqrt(rr)) ** 2
    iters = np.zeros(k, dtype=np.int64)
    done = rr <= stop
    cols = np.flatnonzero(~done)  # the running block's columns
    Xa, Ra, Pa, rra = X[:, cols], B[:, cols], B[:, cols], rr[cols]  # fancy indexing: copies
    for _ in range(maxiter):
        if not cols.size:
            break
        rra = _cg_step(Xa, Ra, Pa, np.ascontiguousarray(matmat(Pa)), rra)
        iters[cols] += 1
        keep = rra > stop[cols]
        if not keep.all():  # converged columns leave the block
            X[:, cols[~keep]] = Xa[:, ~keep]
            done[cols[~keep]] = True
            cols, Xa, Ra, Pa, rra = cols[keep], Xa[:, keep], Ra[:, keep], Pa[:, keep], rra[keep]
    X[:, cols] = Xa
    return X, iters, done


class CGRidge(TaskMixin, BaseEstimator):
    """Ridge in the primal, (Z^T Z + lam I) w = Z^T (y - b), solved by conjugate gradient.

    The solver touches Z only through products Z v and Z^T u, so a sparse
    ``Z`` (random binning) costs O(nnz(Z)) per iteration and is never
    densified. Classification is one-vs-all least squares on +-1 targets;
    multi-column targets are solved together (``lockstep_cg``: each column its
    own CG, one product with Z per iteration for all of them).

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
    operator_bytes_ : int
        Bytes of Z as the products read it: for a CSR Z with one stored value
        (random binning's training features) its indices and row pointers
        plus that one value; else all of Z's arrays.
    solver_bytes_ : int
        ``operator_bytes_`` plus CG's four (D, k) float64 blocks (solution,
        residual, direction, product): what the solve holds besides the targets.

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

    recorded_attributes = ("n_iter_", "converged_", "operator_bytes_", "solver_bytes_")

    _parameter_constraints: dict = {"lam": NONNEGATIVE_REAL, "task": options(TASKS), "tol": POSITIVE_REAL, "maxiter": POSITIVE_INT,
        "fit_intercept": ["boolean"]}

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
        # sparse Z: every BLAS call of CG is a memory-bound vector operation, where
        # BLAS threads only add synchronisation (the sparse products are serial anyway)
        with threadpool_limits(1 if sp.issparse(Z) else None, user_api="blas"):
            # all target columns at once: one pass over Z per iteration serves every class;
            # CG runs in the products' own column numbering (no permutation per iteration)
            matmat, label, operator_bytes = _gram_products(Z, lam)
            B = np.asarray(Z.T @ (T - self.intercept_))
            if label is not None:
                B_local = np.empty_like(B)
                B_local[label] = B
                B = B_local
            coef, iters, ok = lockstep_cg(matmat, B, self.tol, maxiter)
            self.coef_ = coef if label is None else np.take(coef, label, axis=0)
        self.n_iter_ = int(iters.max())
        self.converged_ = bool(ok.all())
        self.operator_bytes_ = operator_bytes
        # lockstep CG keeps four (D, k) float64 blocks: solution, residual, direction and their product
        self.solver_bytes_ = operator_bytes + 4 * 8 * int(np.prod(coef.shape))
        return self

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        scores = X @ self.coef_
        return np.asarray(scores.toarray() if sp.issparse(scores) else scores) + self.intercept_
