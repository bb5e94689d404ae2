"""Dual coordinate descent for the L2-regularised linear SVM on dense or CSR rows (Hsieh et al. 2008).

For labels y_i in {-1, +1} and rows x_i (extended by a constant feature of
value ``bias`` when ``bias > 0``, whose weight is then penalised like the
others), the dual of

    min_w 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w'x_i)^p,   p = 1 (hinge) or 2 (squared hinge)

is min_a 1/2 a'(Q + Diag(d)) a - sum_i a_i, 0 <= a_i <= U, with
Q_ij = y_i y_j x_i'x_j, and d = 0, U = C for the hinge, d = 1/(2C),
U = inf for the squared hinge. Each step minimises over one a_i exactly
while w = sum_i a_i y_i x_i is kept up to date, so it reads one row.
This is liblinear's ``solve_l2r_l1l2_svc`` step for step: a random
permutation of the active coordinates per pass, shrinking of those whose
projected gradient pushes them against a bound harder than the last pass's
extremes, and a stop when the projected gradients of a full pass span less
than ``tol`` (after a last full pass over every coordinate, should any be
shrunk); ``max_iter`` bounds the passes. Unlike liblinear, a solve can
start from given duals (a warm start: the previous solution along a path of
C, clipped to the new bound).

Hand-written because liblinear converts a dense array into its own sparse
node list (16 bytes per value, outside numpy) before it starts, so a fit
needs about three times the memory of the features, and neither it nor
scikit-learn's LinearSVC takes a starting point; no maintained library
solves this dual on a dense array in place. Rows are read where they lie
(float32 stays float32, sums are float64; CSR rows through their nonzeros)
and one-vs-rest problems, which share nothing but the rows, run in
parallel over numba's threads.

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan. A dual
coordinate descent method for large-scale linear SVM. ICML 2008.
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin. LIBLINEAR: a
library for large linear classification. JMLR 9, 2008.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from rfrepro.models.rcd import _draw, _xorshift


@numba.njit(cache=True, nogil=True, fastmath=True)
def _row_dot(X, csr, i, w):  # pragma: no cover - compiled
    """x_i'w for row i of X, or of the CSR arrays ``csr`` = (data, indices, indptr) when not None.

    ``csr`` is None for dense rows, so that dense and CSR rows compile
    apart and a step tests nothing at run time: a test per step made a
    pass on rows of two features 2.4x as long (numba's branch pruning
    drops the ``is None`` branch by the argument's type). CSR column
    indices are read as unsigned, which spares each gathered read numba's
    test for a negative index (a CSR pass then took 0.83 of the time it
    took with signed indices).
    """
    acc = 0.0
    if csr is None:
        for j in range(X.shape[1]):
            acc += X[i, j] * w[j]
        return acc
    data, indices, indptr = csr
    for k in range(indptr[i], indptr[i + 1]):
        acc += data[k] * w[np.uint64(indices[k])]
    return acc


@numba.njit(cache=True, nogil=True)
def _row_axpy(X, csr, i, a, w):  # pragma: no cover - compiled
    """w += a x_i, the rows as in :func:`_row_dot`."""
    if csr is None:
        for j in range(X.shape[1]):
            w[j] += a * X[i, j]
        return
    data, indices, indptr = csr
    for k in range(indptr[i], indptr[i + 1]):
        w[np.uint64(indices[k])] += a * data[k]


@numba.njit(parallel=True, cache=True, nogil=True)
def _squared_norms(X, rows, bias, out):  # pragma: no cover - compiled
    for t in numba.prange(rows.size):
        i = rows[t]
        acc = bias * bias
        for j in range(X.shape[1]):
            acc += np.float64(X[i, j]) * X[i, j]
        out[t] = acc


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _solve_one(X, csr, rows, codes, positive, sqnorm, C, hinge, bias, tol, max_iter, seed, w, alpha, index,
               gram, warm):  # pragma: no cover - compiled
    """One binary problem (y_t = +1 where codes[t] == positive); returns the passes run.

    ``w`` has D + 1 entries, the last the weight of the bias feature
    (0 when ``bias == 0``). The rows are X's, or the CSR matrix ``csr`` =
    (data, indices, indptr)'s when it is not None (X is then a
    placeholder). A row of zeros without a bias has Q_tt = 0 under
    the hinge: its step is then a_t = C (liblinear's arithmetic, hence
    ``error_model="numpy"``) and moves nothing.

    ``gram``: X is the rows' Gram matrix (bias included, ``rows`` = 0..n-1,
    ``bias`` = 0) and ``w`` holds a_t y_t: the gradient's y_t w'x_t is then
    y_t sum_s Q_ts a_s y_s, the same dot over a row of n, and a step changes
    one entry of ``w`` instead of adding a row of D to it.
    """
    n = rows.size
    D = w.size - 1
    diag = 0.0 if hinge else 0.5 / C
    upper = C if hinge else np.inf
    w[:] = 0.0
    for t in range(n):
        index[t] = t
        if not warm:
            alpha[t] = 0.0
        elif alpha[t] != 0.0:
            alpha[t] = min(alpha[t], upper)
            d = alpha[t] if codes[t] == positive else -alpha[t]
            if gram:
                w[t] = d
            else:
                _row_axpy(X, csr, rows[t], d, w)
                w[D] += d * bias
    active = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    state = np.uint64(seed)
    it = 0
    while it < max_iter:
        pg_max_new = -np.inf
        pg_min_new = np.inf
        for s in range(active):
            state = _xorshift(state)
            r = s + _draw(state, active - s)
            index[s], index[r] = index[r], index[s]
        s = 0
        while s < active:
            t = index[s]
            i = rows[t]
            yt = 1.0 if codes[t] == positive else -1.0
            G = yt * (_row_dot(X, csr, i, w) + bias * w[D]) - 1.0 + alpha[t] * diag
            pg = 0.0
            if alpha[t] == 0.0:
                if G > pg_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G < 0.0:
                    pg = G
            elif alpha[t] == upper:
                if G < pg_min_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G > 0.0:
                    pg = G
            else:
                pg = G
            pg_max_new = max(pg_max_new, pg)
            pg_min_new = min(pg_min_new, pg)
            if abs(pg) > 1e-12:
                old = alpha[t]
                alpha[t] = min(max(old - G / (sqnorm[t] + diag), 0.0), upper)
                d = (alpha[t] - old) * yt
                if gram:
                    w[t] += d
                else:
                    _row_axpy(X, csr, i, d, w)
                    w[D] += d * bias
            s += 1
        it += 1
        if pg_max_new - pg_min_new <= tol:
            if active == n:
                break
            active = n  # shrunk coordinates get one more look before stopping
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max_new if pg_max_new > 0.0 else np.inf
        pg_min_old = pg_min_new if pg_min_new < 0.0 else -np.inf
    return it


@numba.njit(parallel=True, cache=True, nogil=True)
def _combine_rows(X, csr, rows, AY, bias, W):  # pragma: no cover - compiled
    """W[k] = sum_t AY[k, t] (x_rows[t], bias): the primal weights of the duals."""
    D = W.shape[1] - 1
    for k in numba.prange(AY.shape[0]):
        for t in range(rows.size):
            _row_axpy(X, csr, rows[t], AY[k, t], W[k])
            W[k, D] += AY[k, t] * bias


@numba.njit(parallel=True, cache=True, nogil=True)
def _solve_problems(X, csr, rows, codes, positives, sqnorm, C, hinge, bias, tol, max_iter, seeds, W, alpha, index,
                    n_iter, gram, warm):  # pragma: no cover - compiled
    for k in numba.prange(positives.size):
        n_iter[k] = _solve_one(X, csr, rows, codes, positives[k], sqnorm, C, hinge, bias, tol, max_iter, seeds[k],
                               W[k], alpha[k], index[k], gram, warm)


def dual_cd_ovr(X: np.ndarray, rows: np.ndarray, codes: np.ndarray, n_classes: int, *, C: float, hinge: bool,
                bias: float, tol: float, max_iter: int, rng: np.random.RandomState,
                gram: np.ndarray | None = None, alpha: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One-vs-rest linear SVMs on the rows ``rows`` of a C-contiguous or CSR ``X``, as liblinear trains them.

    ``codes[t]`` in 0..n_classes-1 is the class of row ``rows[t]``. Two
    classes give one problem (class 1 positive, scikit-learn's
    convention); more give one per class. Returns ``W`` of shape
    (problems, D + 1), whose last column is the bias feature's weight (0
    when ``bias == 0``), and the passes each problem ran. Besides ``X``
    (never copied), the work memory is O(problems * (n + D)), allocated
    here so that numpy's allocation tracing sees it.

    ``gram``: the float64 Gram matrix X[rows] X[rows]^T (bias not
    included), when the caller has it. The same steps then run on it
    (:func:`_solve_one` with ``gram``: n per step instead of 2 D, the same iterates
    up to round-off), and W is formed from the duals at the end. Worth it
    when D > n, as for a few thousand rows of wide features.

    ``alpha``: the duals to start from, a C-contiguous float64 array of
    shape (problems, rows) (entries above a bound are clipped to it), which
    is overwritten with the final duals; None starts every problem from
    zero, as liblinear does.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    >>> W, n_iter = dual_cd_ovr(X, np.arange(4), np.array([1, 1, 0, 0]), 2, C=10.0, hinge=True, bias=0.0,
    ...                         tol=1e-8, max_iter=1000, rng=np.random.RandomState(0))
    >>> np.round(W, 6).tolist()
    [[1.0, 1.0, 0.0]]
    """
    if sp.issparse(X):
        if X.format != "csr" or X.dtype not in (np.float32, np.float64):
            raise ValueError("dual_cd_ovr needs a float32 or float64 CSR matrix")
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        csr = (X.data, X.indices, X.indptr)
        rows_of = np.empty((0, X.shape[1]), dtype=X.dtype)  # a placeholder: the rows are csr's
    elif X.ndim == 2 and X.flags.c_contiguous and X.dtype in (np.float32, np.float64):
        csr = None
        rows_of = X
    else:
        raise ValueError("dual_cd_ovr needs a C-contiguous float32 or float64 array or a CSR matrix")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    positives = np.array([1] if n_classes == 2 else range(n_classes), dtype=np.int64)
    K, n = positives.size, rows.size
    seeds = rng.randint(1, 2**62, size=K, dtype=np.int64).astype(np.uint64)
    if alpha is not None and not (alpha.shape == (K, n) and alpha.dtype == np.float64 and alpha.flags.c_contiguous):
        raise ValueError(f"alpha must be a C-contiguous float64 array of shape {(K, n)}, got {alpha.shape}")
    warm = alpha is not None  # else every problem starts from zero duals
    alpha = alpha if warm else np.empty((K, n))
    index = np.empty((K, n), dtype=np.int64)
    n_iter = np.zeros(K, dtype=np.int64)
    W = np.zeros((K, X.shape[1] + 1))
    if gram is not None:
        if gram.shape != (n, n) or gram.dtype != np.float64 or not gram.flags.c_contiguous:
            raise ValueError(f"gram must be the C-contiguous float64 Gram matrix of the {n} rows, got {gram.shape}")
        Q = gram + float(bias) ** 2 if bias else gram
        AY = np.zeros((K, n + 1))  # a_t y_t (the last entry unused: the bias is in Q)
        _solve_problems(Q, None, np.arange(n), codes, positives, np.ascontiguousarray(np.diag(Q)), float(C),
                        bool(hinge), 0.0, float(tol), int(max_iter), seeds, AY, alpha, index, n_iter, True, warm)
        _combine_rows(rows_of, csr, rows, AY, float(bias), W)
        return W, n_iter
    if sp.issparse(X):
        sqnorm = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()[rows] + float(bias) ** 2
    else:
        sqnorm = np.empty(n)
        _squared_norms(X, rows, float(bias), sqnorm)
    _solve_problems(rows_of, csr, rows, codes, positives, sqnorm, float(C), bool(hinge), float(bias), float(tol),
                    int(max_iter), seeds, W, alpha, index, n_iter, False, warm)
    return W, n_iter
