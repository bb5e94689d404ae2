"""Random binning features (Rahimi & Recht 2007; Wu, Chen, Yen & Yan 2016) as a sparse CSR map."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)

# Bin tuples get 64-bit keys and are numbered in per-grid open-addressing
# tables compiled with numba: no library builds an integer-tuple vocabulary in
# O(n) without sorting (np.unique over rows sorts n x d tuples per grid, which
# is what made a plain numpy version ~4x slower than building the CSR itself).
#
# The key of a tuple b in grid r is the linear form sum_j (b_j - l_j) M_j mod
# 2^64, where l_j .. l_j + s_j - 1 is the range of b_j over the training rows
# (from the column minimum and maximum: floor((x - u) / delta) is monotone in x).
# When the box has fewer than 2^64 cells (prod_j s_j), M_j is the mixed-radix
# stride prod_{k<j} s_k: the key is exact and two bins never share it.
# Otherwise the M_j are random odd 64-bit words drawn from random_state, and
# two distinct training tuples share a key with probability at most
# (S - 1) / 2^63, S = max_j s_j: if 2^v is the largest power of two dividing
# every difference b_j - b'_j, and j one where it divides exactly, the equation
# in M_j = 2t + 1 holds for 2^v of the 2^63 values of t, and 2^v <= |b_j - b'_j|
# <= S - 1. (For 10^5 bins in a grid and S <= 1024 that is < 10^-6 per grid by
# the union bound.) A collision would merge two bins of one grid. A new point
# with any b_j outside the training range is in no training bin; transform
# checks that before the lookup (an exact key would otherwise wrap onto another
# bin's). Keys are computed with rows innermost over a (d, n) copy of X, so
# the loop vectorises; the per-grid numbering that follows is a sequential
# pass over the keys.

#: grids hashed per call of the fitting kernel (bounds its scratch memory to a few x n words)
_GRID_BATCH = 16
#: bytes of X per block of rows in the key computation: a block stays in L2 while a batch of grids is keyed
#: (long enough rows that the per-grid, per-dimension loop overhead is amortised; 256 KiB measured best)
_BLOCK_BYTES = 1 << 18


@numba.njit(cache=True)
def _index_box(x_min, x_max, inv_width, offset):
    """(l, s): the lowest bin index and the number of bin indices of the training rows, per grid and dimension."""
    R, d = inv_width.shape
    low = np.empty((R, d), dtype=np.int64)
    span = np.empty((R, d), dtype=np.int64)
    for r in range(R):
        for j in range(d):
            lo = np.int64(np.floor((np.float64(x_min[j]) - offset[r, j]) * inv_width[r, j]))
            hi = np.int64(np.floor((np.float64(x_max[j]) - offset[r, j]) * inv_width[r, j]))
            low[r, j] = lo
            span[r, j] = hi - lo + 1
    return low, span


def _key_multipliers(span: np.ndarray, rng: np.random.RandomState) -> np.ndarray:
    """M of the module comment: mixed-radix strides where the box has < 2^64 cells, else random odd words."""
    R, d = span.shape
    mult = rng.randint(0, 2**63, size=(R, d), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    exact = np.log2(span.astype(np.float64)).sum(axis=1) < 63.5  # margin for the rounding of the sum
    strides = np.ones((R, d), dtype=np.uint64)
    strides[:, 1:] = np.cumprod(span[:, :-1].astype(np.uint64), axis=1)  # wraps only where not exact
    mult[exact] = strides[exact]
    return mult


@numba.njit(cache=True, inline="always")
def _bin_offset(x, u, w, lo):
    """floor((x - u) / delta) - l as an unsigned word: the tuple's index measured from the training minimum."""
    return np.uint64(np.int64(np.floor((np.float64(x) - u) * w)) - lo)


@numba.njit(cache=True, inline="always")
def _block_rows(d, itemsize):
    return max(64, _BLOCK_BYTES // (8 * d * itemsize) * 8)


@numba.njit(parallel=True, cache=True)
def _grid_keys(XT, inv_width, offset, low, mult, r0, keys):
    """``keys[b, i]``: the key of row i in grid r0 + b.

    Rows are split across threads in blocks that stay in L2 while every grid
    of the batch is computed from them, so X is read from memory once per
    batch; within a block the rows are innermost and the loop vectorises.
    """
    d, n = XT.shape
    rows = _block_rows(d, XT.itemsize)
    for c in numba.prange((n + rows - 1) // rows):
        i0 = c * rows
        m = min(rows, n - i0)
        for b in range(keys.shape[0]):
            r = r0 + b
            out = keys[b, i0: i0 + m]
            out[:] = 0
            for j in range(XT.shape[0]):
                x = XT[j, i0: i0 + m]
                u, w, lo, M = offset[r, j], inv_width[r, j], low[r, j], mult[r, j]
                for t in range(m):
                    out[t] += _bin_offset(x[t], u, w, lo) * M


@numba.njit(parallel=True, cache=True)
def _grid_outside(XT, inv_width, offset, low, span, r0, outside):
    """``outside[b, i]``: row i has a bin index of grid r0 + b beyond the training range, so no training bin."""
    d, n = XT.shape
    rows = _block_rows(d, XT.itemsize)
    for c in numba.prange((n + rows - 1) // rows):
        i0 = c * rows
        m = min(rows, n - i0)
        for b in range(outside.shape[0]):
            r = r0 + b
            out = outside[b, i0: i0 + m]
            out[:] = False
            for j in range(XT.shape[0]):
                x = XT[j, i0: i0 + m]
                u, w, lo, s = offset[r, j], inv_width[r, j], low[r, j], np.uint64(span[r, j])
                for t in range(m):
                    out[t] |= _bin_offset(x[t], u, w, lo) >= s


# Indices below are unsigned where they can be: numba then skips its negative-index
# wraparound code, which measured ~15% of the numbering loop.


@numba.njit(cache=True, inline="always")
def _slot(key, shift):
    """Table slot of a key: the top bits of a multiplicative mix (the low bits of an exact key are not spread)."""
    return ((key ^ (key >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)) >> shift


@numba.njit(cache=True, inline="always")
def _probe(table, mask, slot, keys, key):
    """Linear probing: the slot holding ``key`` (table values index ``keys``) or the empty slot where it goes."""
    while True:
        v = table[slot]
        if v < 0 or keys[np.uint64(v)] == key:
            return slot
        slot = (slot + np.uint64(1)) & mask


@numba.njit(cache=True, inline="always")
def _table_bits(n_keys):
    bits = 4
    while (1 << bits) < 2 * n_keys:
        bits += 1
    return bits


@numba.njit(parallel=True, cache=True)
def _number_bins(keys, r0, ids, counts, kappas):
    """Number the bins of each grid r0 + b in order of first appearance, from the row keys ``keys[b]``.

    Writes ``ids[b, i]`` (local bin id; grid-major so each thread writes
    contiguously) and compacts ``keys[b]`` in place to ``keys[b, :counts[r]]``
    (each bin's key; the write position never passes the read position),
    ``counts[r]`` (non-empty bins) and ``kappas[r]`` = n / (rows of the
    fullest bin), the paper's kappa_delta. The table holds 32-bit bin ids and
    compares keys in the compacted list, so it is a quarter of a (key, id) table.
    """
    n = keys.shape[1]
    bits = _table_bits(n)
    mask, shift = np.uint64((1 << bits) - 1), np.uint64(64 - bits)
    for b in numba.prange(keys.shape[0]):
        table = np.full(1 << bits, -1, dtype=np.int32)
        occupancy = np.zeros(n, dtype=np.int32)
        grid_keys = keys[b]
        grid_ids = ids[b]
        cnt = 0
        for i in range(n):
            u = np.uint64(i)
            key = grid_keys[u]
            slot = _probe(table, mask, _slot(key, shift), grid_keys, key)
            v = table[slot]
            if v < 0:
                table[slot] = cnt
                grid_keys[np.uint64(cnt)] = key
                occupancy[np.uint64(cnt)] = 1
                grid_ids[u] = cnt
                cnt += 1
            else:
                occupancy[np.uint64(v)] += 1
                grid_ids[u] = v
        counts[r0 + b] = cnt
        kappas[r0 + b] = n / occupancy[:cnt].max()


@numba.njit(parallel=True, cache=True)
def _scatter_columns(block, out, r0, offsets):
    """out[i, r0 + b] = block[b, i] + offsets[b], rows split across threads (a blocked transpose)."""
    n = block.shape[1]
    step = 4096
    for start in numba.prange((n + step - 1) // step):
        for i in range(start * step, min(n, (start + 1) * step)):
            for b in range(block.shape[0]):
                out[i, r0 + b] = block[b, i] + offsets[b]


@numba.njit(parallel=True, cache=True)
def _gather_keys(block, counts, starts, out):
    """out[starts[b]: starts[b] + counts[b]] = block[b, :counts[b]], grids split across threads."""
    for b in numba.prange(block.shape[0]):
        out[starts[b]: starts[b] + counts[b]] = block[b, : counts[b]]


@numba.njit(parallel=True, cache=True)
def _fill(out, value):
    """out[:] = value with the (first-touch, page-faulting) writes split across threads."""
    n = len(out)
    step = 1 << 16
    for c in numba.prange((n + step - 1) // step):
        out[c * step: min(n, (c + 1) * step)] = value


@numba.njit(parallel=True, cache=True)
def _lookup_bins(row_keys, outside, bin_keys, starts, r0, ids):
    """Global column ``ids[b, i]`` of row i in grid r0 + b among the training bins, -1 if never seen."""
    n = row_keys.shape[1]
    for b in numba.prange(ids.shape[0]):
        lo = starts[r0 + b]
        grid_keys = bin_keys[lo: starts[r0 + b + 1]]
        bits = _table_bits(len(grid_keys))
        mask, shift = np.uint64((1 << bits) - 1), np.uint64(64 - bits)
        table = np.full(1 << bits, -1, dtype=np.int32)
        for c in range(len(grid_keys)):
            table[_probe(table, mask, _slot(grid_keys[c], shift), grid_keys, grid_keys[c])] = c
        for i in range(n):
            v = -1
            if not outside[b, i]:
                key = row_keys[b, i]
                v = table[_probe(table, mask, _slot(key, shift), grid_keys, key)]
            ids[b, i] = v + lo if v >= 0 else -1


class RandomBinning(FeatureMap):
    """Random binning features of the Laplacian kernel exp(-||x - y||_1 / sigma), sparse.

    Each of ``n_components`` = R random grids has, per input dimension j, a
    bin width delta_j ~ Gamma(shape 2, scale sigma) (the density proportional
    to delta k''(delta) of the one-dimensional Laplacian kernel) and an offset
    u_j ~ U[0, delta_j]. A point falls in exactly one bin of each grid, the
    tuple floor((x_j - u_j) / delta_j); two points share it with probability
    prod_j max(0, 1 - |x_j - y_j| / delta_j), whose mean over the grid is
    k(x, y). The columns of Z are the non-empty bins of the training rows
    (D of them, R <= D <= n R), each training row has exactly R non-zeros of
    value 1/sqrt(R), so (Z Z^T)_{xy} is the fraction of grids where x and y
    collide: an unbiased estimate of k(x, y). A new point in a bin never seen
    in training gets no feature for that grid (fewer than R non-zeros).

    ``transform`` returns a ``scipy.sparse.csr_matrix`` in the input's float
    dtype; nothing dense of size n x D is ever formed.

    Parameters
    ----------
    n_components : int
        R, the number of random grids (non-zeros per training row): the map's
        random draws, as an RFF's frequencies (``n_components_counts =
        "frequencies"``); the output columns are the occupied bins of all grids
        (``n_features_out_``, known only after the fit).
    kernel : {"laplacian"}
        The kernel approximated (random binning here is for the Laplacian).
    sigma : float or {"median", "mean"}
        Bandwidth; a rule is resolved on the training rows with the L1 distance.
    random_state : int, RandomState or None

    Attributes
    ----------
    widths_ : ndarray of shape (n_components, n_features_in_)
        Bin widths delta_rj.
    offsets_ : ndarray of shape (n_components, n_features_in_)
        Bin offsets u_rj.
    bin_low_ : ndarray of shape (n_components, n_features_in_), int64
        The lowest bin index floor((x_j - u_rj) / delta_rj) over the training rows.
    bin_span_ : ndarray of shape (n_components, n_features_in_), int64
        The number of bin indices from ``bin_low_`` to the highest over the training rows.
    bin_multipliers_ : ndarray of shape (n_components, n_features_in_), uint64
        The key of a bin tuple b is sum_j (b_j - bin_low_[r, j]) bin_multipliers_[r, j]
        mod 2^64: mixed-radix strides (exact) where a grid's index box has
        fewer than 2^64 cells, random odd words (hashing) elsewhere.
    bin_keys_ : ndarray of shape (n_features_out_,), uint64
        The 64-bit key of each column's bin tuple.
    grid_starts_ : ndarray of shape (n_components + 1,)
        The columns of grid r are ``grid_starts_[r]:grid_starts_[r + 1]``.
    n_features_out_ : int
        D, the number of non-empty training bins over all grids.
    bins_per_grid_ : float
        D / R, the mean number of non-empty bins per grid (the paper's kappa-bar).
    kappa_ : float
        The paper's kappa = E[1 / nu_delta]: mean over grids of n / (training
        rows in the grid's fullest bin).

    Notes
    -----
    Algorithm 1 of Wu et al. prints the scale 1/sqrt(D) and calls Z binary;
    1/sqrt(R) is the scale for which Z Z^T estimates the kernel (each of the
    R grids contributes 1/R to a collision), so that is what is used here.

    References
    ----------
    A. Rahimi and B. Recht. Random features for large-scale kernel machines. NIPS 2007.
    L. Wu, J. Chen, I. E.-H. Yen and R. Yan. Revisiting random binning features: fast
    convergence and strong parallelizability. KDD 2016.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(200, 3)
    >>> rb = RandomBinning(n_components=64, sigma=1.0, random_state=0)
    >>> Z = rb.fit_transform(X)
    >>> Z.shape[0], sorted(set(Z.getnnz(axis=1).tolist()))
    (200, [64])
    >>> bool(rb.n_features_out_ >= 64)
    True
    """

    recorded_attributes = ("n_features_out_", "bins_per_grid_", "kappa_")
    n_components_counts = "frequencies"

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "kernel": options(["laplacian"]), "sigma": SIGMA,
        "random_state": RANDOM_STATE}

    def __init__(self, n_components: int = 100, *, kernel: str = "laplacian", sigma=1.0, random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, X, y=None):
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit the grids on X and return its features, from the same single pass over the data."""
        self._validate_params()  # as FeatureMap.fit, which this replaces
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        R = int(self.n_components)
        rng = self._rng_and_sigma(X, "laplacian")
        n, d = X.shape
        self.widths_ = rng.gamma(shape=2.0, scale=self.sigma_, size=(R, d))
        self.offsets_ = rng.uniform(0.0, 1.0, size=(R, d)) * self.widths_
        inv_width = 1.0 / self.widths_
        XT = np.ascontiguousarray(X.T)
        self.bin_low_, self.bin_span_ = _index_box(XT.min(axis=1), XT.max(axis=1), inv_width, self.offsets_)
        self.bin_multipliers_ = _key_multipliers(self.bin_span_, rng)
        ids = np.empty((n, R), dtype=np.int64 if n * R >= 2**31 else np.int32)
        counts = np.empty(R, dtype=np.int64)
        kappas = np.empty(R, dtype=np.float64)
        B = min(R, _GRID_BATCH)
        scratch_keys = np.empty((B, n), dtype=np.uint64)
        scratch_ids = np.empty((B, n), dtype=ids.dtype)
        # room for the largest possible D; pages never written are never committed
        keys = np.empty(n * R, dtype=np.uint64)
        starts = np.zeros(R + 1, dtype=np.int64)
        # parallel loops hand out one iteration at a time (a grid, a block of rows), so a
        # thread slowed by other load on its core does not hold the other one up
        with numba.parallel_chunksize(1):
            for r0 in range(0, R, B):
                b = min(B, R - r0)
                _grid_keys(XT, inv_width, self.offsets_, self.bin_low_, self.bin_multipliers_, r0, scratch_keys[:b])
                _number_bins(scratch_keys[:b], r0, scratch_ids[:b], counts, kappas)
                starts[r0 + 1: r0 + b + 1] = starts[r0] + np.cumsum(counts[r0: r0 + b])
                _gather_keys(scratch_keys[:b], counts[r0: r0 + b], starts[r0: r0 + b], keys)
                _scatter_columns(scratch_ids[:b], ids, r0, starts[r0: r0 + b].astype(ids.dtype))
            data = np.empty(n * R, dtype=X.dtype)  # numpy's allocator, which asks for huge pages
            _fill(data, 1.0 / np.sqrt(R))
        self.grid_starts_ = starts
        D = int(starts[-1])
        self.bin_keys_ = keys[:D].copy() if D < n * R // 2 else keys[:D]
        self.n_features_out_ = int(self.grid_starts_[-1])
        self.bins_per_grid_ = self.n_features_out_ / R
        self.kappa_ = float(kappas.mean())
        # every training row has one bin per grid: the CSR structure is known in advance
        indptr = np.arange(0, n * R + 1, R, dtype=ids.dtype)
        return sp.csr_matrix((data, ids.ravel(), indptr), shape=(n, self.n_features_out_))

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: a bin index per (row, grid, coordinate), 4 flops
        each (subtract the offset, scale, floor, multiply-add into the key); the output is sparse,
        one value and one column index per (row, grid)."""
        R, d = self.widths_.shape
        size = _cost.itemsize(dtype)
        index = 4 if self.n_features_out_ < 2**31 else 8  # scipy keeps int32 indices when they fit
        params = 5 * R * d * 8 + self.bin_keys_.nbytes + self.grid_starts_.nbytes
        out = n * R * (size + index) + (n + 1) * index
        return _cost.cost(4 * n * R * d, n * d * size + params + out)

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        n, R = X.shape[0], self.widths_.shape[0]
        XT = np.ascontiguousarray(X.T)
        ids = np.empty((n, R), dtype=np.int64)
        B = min(R, _GRID_BATCH)
        scratch = np.empty((B, n), dtype=np.int64)
        row_keys = np.empty((B, n), dtype=np.uint64)
        outside = np.empty((B, n), dtype=np.bool_)
        inv_width = 1.0 / self.widths_
        with numba.parallel_chunksize(1):
            for r0 in range(0, R, B):
                b = min(B, R - r0)
                _grid_keys(XT, inv_width, self.offsets_, self.bin_low_, self.bin_multipliers_, r0, row_keys[:b])
                _grid_outside(XT, inv_width, self.offsets_, self.bin_low_, self.bin_span_, r0, outside[:b])
                _lookup_bins(row_keys[:b], outside[:b], self.bin_keys_, self.grid_starts_, r0, scratch[:b])
                ids[:, r0 : r0 + b] = scratch[:b].T
        seen = ids >= 0
        indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
        data = np.full(int(indptr[-1]), 1.0 / np.sqrt(R), dtype=X.dtype)
        return sp.csr_matrix((data, ids[seen], indptr), shape=(n, self.n_features_out_))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
