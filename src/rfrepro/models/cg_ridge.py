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
    options,
)
from rfrepro.jit import threaded_and_serial
from rfrepro.models._task import TASKS, TaskMixin
from rfrepro.models.ridge import _check_lam

#: Column ranges (of about equal stored values) whose products Z V are summed
#: separately and then added in a fixed order: the threads share the work, and
#: the rounding does not depend on how many threads there are.
GRAM_PARTS = 8


@numba.njit(cache=True)
def _column_major(indptr, indices, data, D, row_of):  # pragma: no cover - compiled
    """Z's CSC arrays (column pointers, renumbered rows, values) by a counting sort, O(nnz + D).

    Row i is stored as ``row_of[i]``; within a column the rows keep their CSR
    order. ``data`` of size 1 is the one value of every entry and is not copied.
    """
    colptr = np.zeros(D + 1, dtype=np.int64)
    for p in range(indices.size):
        colptr[indices[p] + 1] += 1
    for j in range(D):
        colptr[j + 1] += colptr[j]
    fill = colptr[:-1].copy()
    rows = np.empty(indices.size, dtype=np.int32)
    values = np.empty(indices.size if data.size > 1 else 1, dtype=np.float64)
    if data.size == 1:
        values[0] = data[0]
    for i in range(indptr.size - 1):
        for p in range(indptr[i], indptr[i + 1]):
            q = fill[indices[p]]
            rows[q] = row_of[i]
            if data.size > 1:
                values[q] = data[p]
            fill[indices[p]] += 1
    return colptr, rows, values


@numba.njit(cache=True, parallel=True)
def _scatter_parts(colptr, rows, values, V, bounds, parts):  # pragma: no cover - compiled
    """parts[t] = the rows' sums s_i = sum_j z_ij V_j over the columns bounds[t]:bounds[t+1].

    V is read in order, once; the random accesses go to the (n, k) partial
    sums, which stay in cache where V (D x k, D in the millions) would not.
    """
    k = V.shape[1]
    one = values.size == 1
    for t in numba.prange(parts.shape[0]):
        part = parts[t]
        part[:] = 0.0
        for j in range(bounds[t], bounds[t + 1]):
            for p in range(colptr[j], colptr[j + 1]):
                i = rows[p]
                w = values[0] if one else values[p]
                for c in range(k):
                    part[i, c] += w * V[j, c]


@numba.njit(cache=True, parallel=True)
def _sum_parts(parts, S):  # pragma: no cover - compiled
    """S = parts[0] + parts[1] + ... in that order, rows in parallel."""
    for i in numba.prange(S.shape[0]):
        for c in range(S.shape[1]):
            s = 0.0
            for t in range(parts.shape[0]):
                s += parts[t, i, c]
            S[i, c] = s


@numba.njit(cache=True, parallel=True)
def _gather_columns(colptr, rows, values, S, V, lam, out):  # pragma: no cover - compiled
    """out = Z^T S + lam V, a column of Z per row of out, columns in parallel (no shared writes)."""
    k = S.shape[1]
    one = values.size == 1
    for j in numba.prange(colptr.size - 1):
        for c in range(k):
            out[j, c] = lam * V[j, c]
        for p in range(colptr[j], colptr[j + 1]):
            i = rows[p]
            w = values[0] if one else values[p]
            for c in range(k):
                out[j, c] += w * S[i, c]


def _row_order(Z) -> np.ndarray:
    """New number of each row of a CSR Z: rows sorted by their first column.

    For random binning, rows in one bin of the first grid are close points,
    whose bins in the other grids mostly coincide: numbered together, the
    rows a column touches sit together in the (n, k) partial sums.
    """
    n, D = Z.shape
    first = np.full(n, D, dtype=np.int64)  # empty rows last
    stored = np.diff(Z.indptr) > 0
    first[stored] = Z.indices[Z.indptr[:-1][stored]]
    row_of = np.empty(n, dtype=np.int64)
    row_of[np.argsort(first, kind="stable")] = np.arange(n)
    return row_of


def normal_operator(Z, lam: float) -> LinearOperator:
    """The operator V -> Z^T (Z V) + lam V (a vector or a (D, k) block), never forming Z^T Z.

    Z^T Z is denser than a sparse Z. For a CSR ``Z`` each product is two
    compiled passes over Z's columns (see :func:`_gram_products`). Duplicate
    entries need no merging (each adds its share). Other inputs use scipy's or
    BLAS's products.

    >>> Z = sp.random(30, 12, density=0.3, format="csr", random_state=0)
    >>> V = np.arange(24.0).reshape(12, 2)
    >>> A = normal_operator(Z, 0.5)
    >>> bool(np.allclose(A @ V, Z.T @ (Z @ V) + 0.5 * V)), bool(np.allclose(A @ V[:, 0], (A @ V)[:, 0]))
    (True, True)
    """
    matmat, _ = _gram_products(Z, lam)

    def matvec(v):
        return matmat(np.reshape(v, (-1, 1)))[:, 0]

    return LinearOperator((Z.shape[1], Z.shape[1]), matvec=matvec, rmatvec=matvec, matmat=matmat,
                          dtype=np.float64)


def _gram_products(Z, lam: float):
    """(matmat, nbytes): V -> Z^T (Z V) + lam V on (D, k) blocks, and what the product holds of Z.

    ``matmat(V, out=None)`` writes into ``out`` (a C-contiguous (D, k) float64
    array not overlapping V) when given, so that an iterative solver reuses
    one result block: at random binning's D = 7.7 million columns a fresh
    block is 60 MB a column to page in on every product.

    A CSR ``Z`` is first laid out by columns (CSC, rows renumbered for locality
    by :func:`_row_order`; the CSR arrays are not kept). Each product is then
    S = Z V, summed over :data:`GRAM_PARTS` column ranges in parallel into
    (n, k) partial sums, and Z^T S + lam V, columns in parallel: V and the
    result are read and written in order, and only the small (n, k) sums are
    accessed at random. When every stored value of Z is the same c (random
    binning's training features, all 1/sqrt(R)) only the row numbers are
    stored and read. ``nbytes``: column pointers, row numbers and the values (8
    bytes when all equal); the partial sums, (GRAM_PARTS + 1) n k float64, are
    kept between products of one width (:attr:`CGRidge.solver_bytes_` counts them). Dense or CSC
    ``Z``: scipy's or BLAS's products, holding Z's own arrays.

    Compiled and in parallel, as the BLAS products of the dense maps it is
    compared with are (Wu et al. 2016, Sec. 5.2, call RB's own sparse
    products "not yet optimized"); with the fixed column ranges the result
    is the same for any number of threads.
    """
    if not (sp.issparse(Z) and Z.format == "csr"):
        ZT = Z.T
        held = (Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes) if sp.issparse(Z) else np.asarray(Z).nbytes

        def dense(V, out=None):
            return np.add(np.asarray(ZT @ (Z @ V)), lam * V, out=out)

        return dense, int(held)
    n, D = Z.shape
    data = np.asarray(Z.data, dtype=np.float64)
    if data.size and bool(np.all(data == data[0])):
        data = data[:1]  # one value c: random binning's training Z
    colptr, rows, values = _column_major(Z.indptr, Z.indices, data, D, _row_order(Z))
    # column ranges of about equal numbers of stored values
    bounds = np.searchsorted(colptr, np.linspace(0, colptr[-1], GRAM_PARTS + 1), side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, D
    held = int(colptr.nbytes + rows.nbytes + values.nbytes)

    scratch = {}  # the (n, k) partial sums, kept between products of one width

    def matmat(V, out=None):
        V = np.ascontiguousarray(V, dtype=np.float64)
        k = V.shape[1]
        if scratch.get("k") != k:
            scratch.update(k=k, parts=np.empty((GRAM_PARTS, n, k)), S=np.empty((n, k)))
        out = np.empty_like(V) if out is None else out
        _scatter_parts(colptr, rows, values, V, bounds, scratch["parts"])
        _sum_parts(scratch["parts"], scratch["S"])
        _gather_columns(colptr, rows, values, scratch["S"], V, lam, out)
        return out

    return matmat, held


#: Row ranges of CG's (D, k) blocks whose sums (p'Ap and r'r) are taken
#: separately and then added in a fixed order: the step's passes run on every
#: core, and they round the same for any number of threads.
STEP_PARTS = 64


#: Below this many values in a (D, k) block the step runs serially: waking
#: the threads three times an iteration costs more than it saves, and after a
#: BLAS product (dense Z) BLAS's idle threads still spin while numba's work
#: (ridge on 16000 x 128 dense rows: 8 ms an iteration against 1 ms)
STEP_PARALLEL_MIN_VALUES = 1 << 16


def _cg_step_body(X, R, P, AP, rr, bounds):  # pragma: no cover - compiled
    """One CG step of every column in three passes: X += a P, R -= a AP (a = rr / p'Ap), P = R + (rr_new / rr) P.

    Each pass runs over the row ranges ``bounds`` (in parallel in the
    threaded build); each sum is taken per range, then over the ranges in
    order, so both builds give the same bits. Returns the new r'r per column
    (rr is left as it was)."""
    k = X.shape[1]
    m = bounds.size - 1
    part = np.zeros((m, k))
    for t in numba.prange(m):
        for j in range(bounds[t], bounds[t + 1]):
            for c in range(k):
                part[t, c] += P[j, c] * AP[j, c]
    pap = np.zeros(k)
    for t in range(m):
        for c in range(k):
            pap[c] += part[t, c]
    alpha = rr / pap
    part[:] = 0.0
    for t in numba.prange(m):
        for j in range(bounds[t], bounds[t + 1]):
            for c in range(k):
                X[j, c] += alpha[c] * P[j, c]
                R[j, c] -= alpha[c] * AP[j, c]
                part[t, c] += R[j, c] * R[j, c]
    new = np.zeros(k)
    for t in range(m):
        for c in range(k):
            new[c] += part[t, c]
    beta = new / rr
    for t in numba.prange(m):
        for j in range(bounds[t], bounds[t + 1]):
            for c in range(k):
                P[j, c] = R[j, c] + beta[c] * P[j, c]
    return new


_cg_step_par, _cg_step_ser = threaded_and_serial(_cg_step_body)


@numba.njit(cache=True, nogil=True)
def _take_columns(A, cols):  # pragma: no cover - compiled
    """A[:, cols] as a new C-ordered array: one pass over A's rows (``np.take`` along axis 1 is
    about five times slower on a (7.7 million, 2) block)."""
    out = np.empty((A.shape[0], cols.size))
    for j in range(A.shape[0]):
        for c in range(cols.size):
            out[j, c] = A[j, cols[c]]
    return out


def lockstep_cg(matmat, B: np.ndarray, rtol: float, maxiter: int, *, into: bool = False,
                threaded_step: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    within ``maxiter``. ``into``: ``matmat`` takes ``out=``, and one product
    block is reused while the running block keeps its width.
    ``threaded_step``: the step's passes run on numba's threads where the
    block holds at least :data:`STEP_PARALLEL_MIN_VALUES` values (the same
    bits as the serial step: fixed row ranges, :data:`STEP_PARTS`); for
    products that are numba's own, not BLAS's.

    The columns are coupled only by sharing the product: no step size,
    stopping test or iteration count of one column reads another's. So
    solving the columns in groups (:class:`CGRidge` does, see
    :data:`CG_BLOCK_BYTES`) runs the same recurrences; only the rounding of
    the products may differ with the block's width (the compiled kernels and
    BLAS vectorise across columns), as it already does when a converged
    column leaves the block.

    >>> M = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> X, its, ok = lockstep_cg(lambda V: M @ V, np.eye(2), 1e-12, 10)
    >>> bool(np.allclose(X, np.linalg.inv(M))), its.tolist(), ok.tolist()
    (True, [2, 2], [True, True])
    """
    B = np.asarray(B, dtype=np.float64).reshape(B.shape[0], -1)
    k = B.shape[1]
    X = np.zeros_like(B)  # written only where a column leaves the block early (zeros cost no pages until then)
    rr = np.einsum("ij,ij->j", B, B)
    stop = (rtol * np.sqrt(rr)) ** 2
    iters = np.zeros(k, dtype=np.int64)
    done = rr <= stop
    cols = np.flatnonzero(~done)  # the running block's columns
    # C-ordered copies (X[:, cols] would be Fortran-ordered): the compiled step walks rows,
    # and the CSR product takes its block as it is instead of copying it every iteration
    Xa, Ra, rra = np.zeros((B.shape[0], cols.size)), _take_columns(B, cols), rr[cols]
    Pa, AP = Ra.copy(), None
    bounds = np.linspace(0, B.shape[0], STEP_PARTS + 1).round().astype(np.int64)
    for _ in range(maxiter):
        if not cols.size:
            break
        if into:
            AP = np.empty_like(Pa) if AP is None or AP.shape != Pa.shape else AP
            matmat(Pa, out=AP)
        else:
            AP = np.ascontiguousarray(matmat(Pa))
        step = _cg_step_par if threaded_step and Pa.size >= STEP_PARALLEL_MIN_VALUES else _cg_step_ser
        rra = step(Xa, Ra, Pa, AP, rra, bounds)
        iters[cols] += 1
        keep = rra > stop[cols]
        if not keep.all():  # converged columns leave the block
            # the product block is freed first, then one copy at a time: never more blocks than while running
            AP = None
            X[:, cols[~keep]] = Xa[:, ~keep]
            done[cols[~keep]] = True
            cols, rra, kept = cols[keep], rra[keep], np.flatnonzero(keep)
            Xa = _take_columns(Xa, kept)
            Ra = _take_columns(Ra, kept)
            Pa = _take_columns(Pa, kept)
    if cols.size == k:  # every column ran to the end: the running block is the solution
        return Xa, iters, done
    X[:, cols] = Xa
    return X, iters, done


def lockstep_cg_rows(K, T: np.ndarray, lam: float, rtol: float,
                     maxiter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The iterates of :func:`lockstep_cg` on (Z^T Z + lam I) w = Z^T T, kept in the row space: w = Z^T A.

    ``K`` is Z Z^T (n x n, sparse or dense). Every primal CG vector lies in
    the span of Z's rows (w_0 = 0, b = Z^T t), so CG's solution, residual and
    direction are Z^T a, Z^T rho and Z^T pi, with rho_0 = pi_0 = t, and each
    scalar of the recurrence is a form in K: r'r = rho' K rho and
    p'(Z^T Z + lam I)p = ||K pi||^2 + lam pi' K pi; the updates are
    a += alpha pi, rho -= alpha (K pi + lam pi), pi = rho + beta pi. These are
    the primal iterates, step sizes and stopping test (||r|| <= rtol ||b||)
    in exact arithmetic, at two products with K per iteration on (n, k)
    blocks instead of one with Z^T Z on (D, k) blocks: far cheaper when D is
    much larger than n and K is sparse (random binning at small sigma, where
    nearly every point has bins of its own). Returns A (n x k), each
    column's iteration count and whether it converged within ``maxiter``.

    >>> Z = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    >>> A, its, ok = lockstep_cg_rows(Z @ Z.T, np.array([[1.0], [2.0]]), 0.5, 1e-12, 10)
    >>> w = np.linalg.solve(Z.T @ Z + 0.5 * np.eye(3), Z.T @ [1.0, 2.0])
    >>> bool(np.allclose(Z.T @ A[:, 0], w)), its.tolist()
    (True, [2])
    """
    T = np.asarray(T, dtype=np.float64).reshape(T.shape[0], -1)
    k = T.shape[1]
    A = np.zeros_like(T)
    KT = np.asarray(K @ T)
    rr = np.einsum("ij,ij->j", T, KT)  # ||Z^T t||^2 = ||b||^2
    stop = rtol * rtol * rr
    iters = np.zeros(k, dtype=np.int64)
    done = rr <= stop
    cols = np.flatnonzero(~done)
    Aa, Rho, Pi, rra = np.zeros((T.shape[0], cols.size)), T[:, cols], T[:, cols].copy(), rr[cols]
    for _ in range(maxiter):
        if not cols.size:
            break
        KPi = np.asarray(K @ Pi)
        alpha = rra / (np.einsum("ij,ij->j", KPi, KPi) + lam * np.einsum("ij,ij->j", Pi, KPi))
        Aa += alpha * Pi
        Rho = Rho - alpha * (KPi + lam * Pi)
        new = np.einsum("ij,ij->j", Rho, np.asarray(K @ Rho))
        Pi = Rho + (new / rra) * Pi
        rra = new
        iters[cols] += 1
        keep = rra > stop[cols]
        if not keep.all():
            A[:, cols[~keep]] = Aa[:, ~keep]
            done[cols[~keep]] = True
            cols, rra, Aa, Rho, Pi = cols[keep], rra[keep], Aa[:, keep], Rho[:, keep], Pi[:, keep]
    A[:, cols] = Aa
    return A, iters, done


#: ``solve_in="auto"`` runs CG in the row space (:func:`lockstep_cg_rows`) when
#: sum_j c_j^2 (c_j the stored values of column j: a bound on the stored values
#: of Z Z^T) is at most nnz(Z) + ROW_SPACE_MARGIN * D. A primal iteration reads Z
#: twice and about ten (D, k) blocks; a row-space one reads K twice. Measured on
#: 10500 random-binning rows with 26 targets: 28x faster with every point in
#: bins of its own (K diagonal), 14x slower where K held 40 times nnz(Z).
ROW_SPACE_MARGIN = 5


def row_space_cheaper(Z) -> bool:
    """Whether CG on a CSR ``Z`` is cheaper in the row space (see :data:`ROW_SPACE_MARGIN`); False for other inputs."""
    if not (sp.issparse(Z) and Z.format == "csr") or Z.shape[1] <= Z.shape[0]:
        return False
    counts = np.bincount(Z.indices, minlength=Z.shape[1]).astype(np.float64)
    return float(counts @ counts) <= Z.nnz + ROW_SPACE_MARGIN * Z.shape[1]


#: Bytes one group of target columns may hold in CG's (D, g) float64 blocks, all
#: :data:`CG_GROUP_BLOCKS` of them together. :class:`CGRidge` solves the k
#: target columns in consecutive groups of g = CG_BLOCK_BYTES // (8 D CG_GROUP_BLOCKS)
#: columns (at least one): random binning with D = 7.8 million columns and
#: k = 26 classes held 1.6 GB per (D, k) block, 11.9 GB at its peak in one group;
#: 1 GiB gives groups of 2 columns there. Read at each fit, so it can be tuned.
CG_BLOCK_BYTES = 1 << 30
#: (D, g) float64 blocks a group's solve holds at once: its right-hand side, the
#: solution, and :func:`lockstep_cg`'s running solution, residual, direction and product
CG_GROUP_BLOCKS = 6


def column_groups(D: int, k: int, block_bytes: int | None = None) -> list[slice]:
    """Consecutive groups of the k target columns whose CG blocks fit ``block_bytes`` (default :data:`CG_BLOCK_BYTES`).

    Each group holds :data:`CG_GROUP_BLOCKS` (D, g) float64 blocks; a group
    has at least one column, even when one column's blocks exceed the budget.

    >>> column_groups(1000, 5, block_bytes=6 * 8 * 1000 * 2)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    budget = CG_BLOCK_BYTES if block_bytes is None else block_bytes
    g = max(1, int(budget) // (8 * CG_GROUP_BLOCKS * max(D, 1)))
    return [slice(start, min(start + g, k)) for start in range(0, k, g)]


class CGRidge(TaskMixin, BaseEstimator):
    """Ridge in the primal, (Z^T Z + lam I) w = Z^T (y - b), solved by conjugate gradient.

    The solver touches Z only through products Z v and Z^T u, so a sparse
    ``Z`` (random binning) costs O(nnz(Z)) per iteration and is never
    densified. Where nearly every row has columns of its own (random binning
    at small sigma: D near n R), the same iterates are computed in the row
    space through K = Z Z^T (``solve_in``). Classification is one-vs-all least squares on +-1 targets;
    multi-column targets are solved together (``lockstep_cg``: each column its
    own CG, one product with Z per iteration for all of them), in groups of
    columns whose CG blocks fit :data:`CG_BLOCK_BYTES` (one group unless D k is
    large: random binning's millions of columns times many classes).

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
    solve_in : {"auto", "primal", "rows"}
        Where CG's vectors live: "primal" (D-sized, Wu et al.'s algorithm),
        "rows" (n-sized, through K = Z Z^T: :func:`lockstep_cg_rows`, the
        same iterates in exact arithmetic), or "auto": the row space where
        :func:`row_space_cheaper` says so (a CSR Z with far more columns than
        rows and nearly no two rows in one column), else the primal.

    Attributes
    ----------
    coef_ : ndarray of shape (D, k)
    intercept_ : ndarray of shape (k,)
    n_iter_ : int
        CG iterations, the most over the target columns (of every group).
    n_groups_ : int
        Groups of target columns solved one after the other (:func:`column_groups`; 1 in the row space).
    solved_in_ : str
        "primal" or "rows": where CG ran.
    converged_ : bool
        Every column reached ``tol`` within ``maxiter``.
    operator_bytes_ : int
        Bytes of Z as the products read it: for a CSR Z its column-major
        copy (column pointers, row numbers and values; one value when all are
        equal, as for random binning's training features), else all of Z's
        arrays; in the row space, K's arrays.
    solver_bytes_ : int
        ``operator_bytes_`` plus the (D, k) coefficients plus one group's
        :data:`CG_GROUP_BLOCKS` (D, g) float64 blocks (right-hand side,
        solution, running solution, residual, direction, product), plus,
        for a CSR Z, the products' (n, g) partial sums (``GRAM_PARTS`` + 1 of
        them): what the solve holds besides the targets. In the row space:
        K, the (D, k) coefficients and five (n, k) blocks.

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

    recorded_attributes = ("n_iter_", "converged_", "n_groups_", "solved_in_", "operator_bytes_", "solver_bytes_")

    _parameter_constraints: dict = {"lam": NONNEGATIVE_REAL, "task": options(TASKS), "tol": POSITIVE_REAL, "maxiter": POSITIVE_INT,
        "fit_intercept": ["boolean"], "solve_in": options(("auto", "primal", "rows"))}

    def __init__(self, lam: float = 0.01, *, task: str = "regression", tol: float = 1e-3,
                 maxiter: int = 1000, fit_intercept: bool = True, solve_in: str = "auto"):
        self.lam = lam
        self.task = task
        self.tol = tol
        self.maxiter = maxiter
        self.fit_intercept = fit_intercept
        self.solve_in = solve_in

    def fit(self, X, y):
        self._validate_params()  # the declared _parameter_constraints, one line naming the parameter
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=not self._is_classifier())
        lam = _check_lam(self.lam)
        maxiter = int(self.maxiter)
        if not np.isfinite(self.tol):  # the declared constraint says > 0 and lets inf through
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")
        # one float64 copy of the values (if float32): mixed-dtype products would upcast per iteration
        Z = X.astype(np.float64, copy=False)
        T = self._encode(y)
        self.intercept_ = T.mean(axis=0) if self.fit_intercept else np.zeros(T.shape[1])
        T = T - self.intercept_
        rows = self.solve_in == "rows" or (self.solve_in == "auto" and row_space_cheaper(Z))
        solve = self._solve_rows if rows else self._solve_primal
        self.coef_, iters, ok, self.n_groups_, self.operator_bytes_, self.solver_bytes_ = solve(Z, T, lam, maxiter)
        self.solved_in_ = "rows" if rows else "primal"
        self.n_iter_ = int(iters.max())
        self.converged_ = bool(ok.all())
        return self

    def _solve_primal(self, Z, T: np.ndarray, lam: float, maxiter: int):
        """(coef, iterations, converged, groups, operator bytes, solver bytes) of CG on D-sized vectors."""
        D, k = Z.shape[1], T.shape[1]
        # sparse Z: every BLAS call of CG is a memory-bound vector operation, where
        # BLAS threads only add synchronisation (the sparse products use numba's threads)
        with threadpool_limits(1 if sp.issparse(Z) else None, user_api="blas"):
            # all target columns of a group at once: one pass over Z per iteration serves them all
            matmat, operator_bytes = _gram_products(Z, lam)
            compiled = sp.issparse(Z) and Z.format == "csr"  # numba's products: the step may use its threads
            groups = column_groups(D, k)
            # only the coefficients are (D, k); each group's right-hand side and CG blocks are (D, g)
            coef = np.empty((D, k))
            iters, ok = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=bool)
            for cols in groups:
                B = np.asarray(Z.T @ T[:, cols])
                coef[:, cols], iters[cols], ok[cols] = lockstep_cg(matmat, B, self.tol, maxiter, into=True,
                                                                   threaded_step=compiled)
                del B
        widest = max(c.stop - c.start for c in groups)
        scratch = (GRAM_PARTS + 1) * 8 * Z.shape[0] * widest if compiled else 0
        solver_bytes = operator_bytes + 8 * D * k + CG_GROUP_BLOCKS * 8 * D * widest + scratch
        return coef, iters, ok, len(groups), operator_bytes, solver_bytes

    def _solve_rows(self, Z, T: np.ndarray, lam: float, maxiter: int):
        """As :meth:`_solve_primal`, in the row space (:func:`lockstep_cg_rows`, every column at once): coef = Z^T A."""
        K = Z @ Z.T
        K = K.tocsr() if sp.issparse(K) else np.asarray(K)
        A, iters, ok = lockstep_cg_rows(K, T, lam, self.tol, maxiter)
        operator_bytes = int(K.data.nbytes + K.indices.nbytes + K.indptr.nbytes) if sp.issparse(K) else K.nbytes
        solver_bytes = operator_bytes + 8 * Z.shape[1] * T.shape[1] + 5 * 8 * T.size
        return np.asarray(Z.T @ A), iters, ok, 1, operator_bytes, solver_bytes

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        scores = X @ self.coef_
        return np.asarray(scores.toarray() if sp.issparse(scores) else scores) + self.intercept_
