"""Random binning features (Rahimi & Recht 2007; Wu, Chen, Yen & Yan 2016) as a sparse CSR map."""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features._base import FeatureMap, check_positive_int

# Bin tuples are hashed to 64 bits and looked up in per-grid open-addressing
# tables compiled with numba: no library builds an integer-tuple vocabulary in
# O(n) without sorting (np.unique over rows sorts n x d tuples per grid, which
# is what made a plain numpy version ~4x slower than building the CSR itself).
# The hash is two independent linear forms sum_j b_j K_j mod 2^64 with random
# odd multipliers K (independent products pipeline, unlike a sequential mixing
# chain), then mixed: two distinct bin tuples of a grid collide with
# probability below 2^-88 per pair for the |b_j| < 2^20 that occur; a collision
# would merge two bins of one grid.

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: grids hashed per call of the fitting kernel (bounds its scratch memory to a few x n words)
_GRID_BATCH = 16


def _multipliers(d: int) -> np.ndarray:
    """Fixed random odd 64-bit multipliers, two per input dimension (data and seed independent)."""
    words = np.random.RandomState(20160813).randint(0, 2**62, size=(2, d), dtype=np.int64).astype(np.uint64)
    return (words << np.uint64(2)) | np.uint64(1)


@numba.njit(cache=True, inline="always")
def _splitmix(h):
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _bin_hash(X, i, inv_width, offset, r, mult):
    """64-bit hash of the bin tuple floor((x_ij - u_rj) / delta_rj), j = 1..d, of row i in grid r."""
    a = np.uint64(r) * _GOLDEN
    b = np.uint64(0)
    for j in range(X.shape[1]):
        k = np.uint64(np.int64(np.floor((np.float64(X[i, j]) - offset[r, j]) * inv_width[r, j])))
        a += k * mult[0, j]
        b += k * mult[1, j]
    return _splitmix(a ^ _splitmix(b))


@numba.njit(cache=True, inline="always")
def _table_size(n_keys):
    cap = 16
    while cap < 2 * n_keys:
        cap *= 2
    return cap


@numba.njit(cache=True, inline="always")
def _find_or_insert(table, mask, h, new_id):
    """Open addressing, key and value side by side (one cache line per probe); returns (id, inserted)."""
    slot = np.int64(h & mask)
    while True:
        v = table[2 * slot + 1]
        if v < 0:
            if new_id >= 0:
                table[2 * slot] = np.int64(h)
                table[2 * slot + 1] = new_id
            return v, True
        if np.uint64(table[2 * slot]) == h:
            return v, False
        slot = (slot + 1) & np.int64(mask)


@numba.njit(parallel=True, cache=True)
def _fit_bins(X, inv_width, offset, mult, r0, ids, keys, counts, kappas):
    """Bins of grids r0 .. r0 + len(keys) - 1, numbered per grid in order of first appearance.

    Writes ``ids[r - r0, i]`` (local bin id; grid-major so each thread
    writes contiguously), ``keys[r - r0, :counts[r]]`` (each
    bin's hash), ``counts[r]`` (non-empty bins) and ``kappas[r]`` = n / (rows
    of the fullest bin), the paper's kappa_delta.
    """
    n = X.shape[0]
    for b in numba.prange(keys.shape[0]):
        r = r0 + b
        cap = _table_size(n)
        mask = np.uint64(cap - 1)
        table = np.full(2 * cap, -1, dtype=np.int64)
        occupancy = np.zeros(n, dtype=np.int32)
        # all hashes first, then all inserts: the table probes are then independent
        # loads the CPU can overlap (memory-level parallelism), not each behind a hash
        hashes = np.empty(n, dtype=np.uint64)
        for i in range(n):
            hashes[i] = _bin_hash(X, i, inv_width, offset, r, mult)
        cnt = 0
        for i in range(n):
            h = hashes[i]
            v, new = _find_or_insert(table, mask, h, cnt)
            if new:
                v = cnt
                keys[b, cnt] = h
                cnt += 1
            ids[b, i] = v
            occupancy[v] += 1
        counts[r] = cnt
        kappas[r] = n / occupancy[:cnt].max()


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
def _lookup_bins(X, inv_width, offset, mult, keys, starts, r0, ids):
    """Global column ``ids[r - r0, i]`` of row i in grid r among the training bins, -1 if never seen."""
    n = X.shape[0]
    for b in numba.prange(ids.shape[0]):
        r = r0 + b
        lo, hi = starts[r], starts[r + 1]
        cap = _table_size(hi - lo)
        mask = np.uint64(cap - 1)
        table = np.full(2 * cap, -1, dtype=np.int64)
        for c in range(lo, hi):
            _find_or_insert(table, mask, keys[c], c)
        hashes = np.empty(n, dtype=np.uint64)
        for i in range(n):
            hashes[i] = _bin_hash(X, i, inv_width, offset, r, mult)
        for i in range(n):
            v, new = _find_or_insert(table, mask, hashes[i], -1)
            ids[b, i] = v


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
        R, the number of random grids (non-zeros per training row).
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
    bin_keys_ : ndarray of shape (n_features_out_,), uint64
        The 64-bit hash of each column's bin tuple.
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
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        R = check_positive_int(self.n_components, "n_components")
        if self.kernel != "laplacian":
            raise ValueError(f"kernel={self.kernel!r}; RandomBinning approximates the 'laplacian' kernel only")
        rng = check_random_state(self.random_state)
        self.sigma_ = self._resolve_sigma(X, "laplacian")
        n, d = X.shape
        self.widths_ = rng.gamma(shape=2.0, scale=self.sigma_, size=(R, d))
        self.offsets_ = rng.uniform(0.0, 1.0, size=(R, d)) * self.widths_
        inv_width = 1.0 / self.widths_
        ids = np.empty((n, R), dtype=np.int64 if n * R >= 2**31 else np.int32)
        counts = np.empty(R, dtype=np.int64)
        kappas = np.empty(R, dtype=np.float64)
        B = min(R, _GRID_BATCH)
        scratch_keys = np.empty((B, n), dtype=np.uint64)
        scratch_ids = np.empty((B, n), dtype=ids.dtype)
        # room for the largest possible D; pages never written are never committed
        keys = np.empty(n * R, dtype=np.uint64)
        starts = np.zeros(R + 1, dtype=np.int64)
        for r0 in range(0, R, B):
            b = min(B, R - r0)
            _fit_bins(X, inv_width, self.offsets_, _multipliers(d), r0, scratch_ids[:b], scratch_keys[:b],
                      counts, kappas)
            for k in range(b):
                starts[r0 + k + 1] = starts[r0 + k] + counts[r0 + k]
                keys[starts[r0 + k]: starts[r0 + k + 1]] = scratch_keys[k, : counts[r0 + k]]
            _scatter_columns(scratch_ids[:b], ids, r0, starts[r0: r0 + b].astype(ids.dtype))
        self.grid_starts_ = starts
        D = int(starts[-1])
        self.bin_keys_ = keys[:D].copy() if D < n * R // 2 else keys[:D]
        self.n_features_out_ = int(self.grid_starts_[-1])
        self.bins_per_grid_ = self.n_features_out_ / R
        self.kappa_ = float(kappas.mean())
        # every training row has one bin per grid: the CSR structure is known in advance
        indptr = np.arange(0, n * R + 1, R, dtype=ids.dtype)
        data = np.full(n * R, 1.0 / np.sqrt(R), dtype=X.dtype)
        return sp.csr_matrix((data, ids.ravel(), indptr), shape=(n, self.n_features_out_))

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        n, R = X.shape[0], self.widths_.shape[0]
        ids = np.empty((n, R), dtype=np.int64)
        B = min(R, _GRID_BATCH)
        scratch = np.empty((B, n), dtype=np.int64)
        for r0 in range(0, R, B):
            b = min(B, R - r0)
            _lookup_bins(X, 1.0 / self.widths_, self.offsets_, _multipliers(X.shape[1]), self.bin_keys_, self.grid_starts_, r0, scratch[:b])
            ids[:, r0 : r0 + b] = scratch[:b].T
        seen = ids >= 0
        indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
        data = np.full(int(indptr[-1]), 1.0 / np.sqrt(R), dtype=X.dtype)
        return sp.csr_matrix((data, ids[seen], indptr), shape=(n, self.n_features_out_))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
