"""The fast Walsh-Hadamard transform (FWHT) and the subsampled randomized Hadamard transform.

This module is the one place where the project applies a Hadamard matrix:
Fastfood, TEFM-S, the SRHT down-projection of Comp and CRAFTMaps all call it.
A dense Hadamard matrix is never built (only the tests build one to check
against).

The transform is the Sylvester-ordered (natural order) Walsh-Hadamard matrix
``H_d`` with ``H_1 = [1]`` and ``H_2d = [[H_d, H_d], [H_d, -H_d]]``, the same
matrix as :func:`scipy.linalg.hadamard`. Unnormalised, ``H H = d I``; the
normalised form ``H / sqrt(d)`` is orthogonal.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba import uint64 as U
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_parameter_constraints

from rfrepro.features import _cost
from rfrepro.features._base import POSITIVE_INT, row_chunks
from rfrepro.features._trig import PARALLEL_MIN_VALUES
from rfrepro.jit import threaded_and_serial

__all__ = ["SRHT", "fwht", "fwht_gather", "fwht_inplace", "fwht_vector", "is_pow2", "next_pow2"]


def next_pow2(n: int) -> int:
    """Smallest power of two ``>= n`` (``next_pow2(0) == next_pow2(1) == 1``)."""
    n = int(n)
    if n < 0:
        raise ValueError(f"next_pow2 needs a non-negative integer, got {n}")
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def is_pow2(n: int) -> bool:
    """Whether ``n`` is a positive power of two."""
    return n > 0 and (n & (n - 1)) == 0


# --------------------------------------------------------------------------- kernels
# One length-d vector is transformed in place by log2(d) butterfly stages.
# - Stages are done two at a time (radix 4): each element is then loaded and
#   stored once per two stages, half the traffic through L1.
# - The first two stages (h = 1, 2) pair elements inside one SIMD register,
#   which LLVM does not vectorise; they are done together in scalar registers
#   (``_radix4_head``), and callers that copy data into the buffer anyway fuse
#   them into the copy (``fwht_gather``). The later stages run over
#   contiguous runs of length h >= 4, which LLVM vectorises.
# - Indices are unsigned: with signed indices numba emits a negative-index
#   wraparound test per access, which blocks vectorisation (measured 3.5x
#   slower at d = 1024).


@njit(cache=True, inline="always")
def _butterfly4(a, b, c, e):
    s0 = a + b
    d0 = a - b
    s1 = c + e
    d1 = c - e
    return s0 + s1, d0 + d1, s0 - s1, d0 - d1


@njit(cache=True, inline="always")
def _radix4_head(x):
    """Stages h = 1 and 2 of a length >= 4 vector."""
    n = U(x.shape[0])
    i = U(0)
    while i < n:
        x[i], x[i + U(1)], x[i + U(2)], x[i + U(3)] = _butterfly4(
            x[i], x[i + U(1)], x[i + U(2)], x[i + U(3)]
        )
        i += U(4)


@njit(cache=True, inline="always")
def _stages_from4(x):
    """Stages h = 4, 8, ..., n/2 of a length >= 4 vector whose first two stages are done."""
    n = U(x.shape[0])
    h = U(4)
    while U(4) * h <= n:
        h2 = U(2) * h
        h3 = U(3) * h
        i = U(0)
        while i < n:
            for j in range(i, i + h):
                x[j], x[j + h], x[j + h2], x[j + h3] = _butterfly4(
                    x[j], x[j + h], x[j + h2], x[j + h3]
                )
            i += U(4) * h
        h *= U(4)
    if h < n:  # an odd number of stages left: one radix-2 stage
        for j in range(h):
            a = x[j]
            b = x[j + h]
            x[j] = a + b
            x[j + h] = a - b


@njit(cache=True, inline="always")
def _fwht_1d(x):
    """Unnormalised in-place FWHT of one contiguous power-of-two-length vector."""
    n = x.shape[0]
    if n >= 4:
        _radix4_head(x)
        _stages_from4(x)
    elif n == 2:
        a = x[0]
        b = x[1]
        x[0] = a + b
        x[1] = a - b


@njit(cache=True, inline="always")
def fwht_gather(src, perm, gain, dst):
    """``dst = H (gain * src[perm])`` for numba callers (Fastfood's ``H G Pi``).

    The permuted gather is scalar anyway, so the first two butterfly stages
    are done on the gathered values before they are stored.
    """
    n = U(dst.shape[0])
    if n < U(4):
        for j in range(n):
            dst[j] = gain[j] * src[perm[j]]
        _fwht_1d(dst)
        return
    i = U(0)
    while i < n:
        dst[i], dst[i + U(1)], dst[i + U(2)], dst[i + U(3)] = _butterfly4(
            gain[i] * src[perm[i]],
            gain[i + U(1)] * src[perm[i + U(1)]],
            gain[i + U(2)] * src[perm[i + U(2)]],
            gain[i + U(3)] * src[perm[i + U(3)]],
        )
        i += U(4)
    _stages_from4(dst)


@njit(cache=True, inline="always")
def fwht_vector(x):
    """In-place unnormalised FWHT of one contiguous vector, for numba callers."""
    _fwht_1d(x)


def _fwht_rows_body(X, scale):
    for i in prange(X.shape[0]):
        row = X[i]
        _fwht_1d(row)
        if scale != 1:
            for j in range(row.shape[0]):
                row[j] *= scale


def _srht_rows_body(X, signs, index, scale, out):
    """out[i] = scale * (H (signs * pad(X[i])))[index], one row at a time, in cache."""
    n, d = X.shape
    dp = signs.shape[0]
    m = index.shape[0]
    for i in prange(n):
        buf = np.empty(dp, dtype=out.dtype)
        for j in range(d):
            buf[j] = X[i, j] * signs[j]
        for j in range(d, dp):
            buf[j] = 0
        _fwht_1d(buf)
        for k in range(m):
            out[i, k] = scale * buf[index[k]]


# Small inputs (the tests, sklearn's checks, a few rows) run serially: waking
# the thread pool costs more than it saves (same rule as ``_trig``).
_fwht_rows_par, _fwht_rows_ser = threaded_and_serial(_fwht_rows_body)
_srht_rows_par, _srht_rows_ser = threaded_and_serial(_srht_rows_body)


def _parallel(n_values: int) -> bool:
    return n_values >= PARALLEL_MIN_VALUES


# --------------------------------------------------------------------------- public API


def _check_transformable(X: np.ndarray) -> None:
    if not isinstance(X, np.ndarray) or X.dtype not in (np.float32, np.float64):
        raise TypeError("the FWHT works on float32 or float64 numpy arrays")
    if X.ndim not in (1, 2):
        raise ValueError(f"the FWHT transforms a vector or the rows of a matrix, got ndim={X.ndim}")
    if not is_pow2(X.shape[-1]):
        raise ValueError(
            f"the FWHT needs a power-of-two length, got {X.shape[-1]} (zero-pad to next_pow2)"
        )


def fwht_inplace(X: np.ndarray, *, normalized: bool = False) -> None:
    """Walsh-Hadamard transform of a vector or of every row of a matrix, in place.

    Parameters
    ----------
    X : ndarray of shape (d,) or (n, d), float32 or float64, C-contiguous, writeable
        ``d`` must be a power of two.
    normalized : bool, default False
        Apply ``H / sqrt(d)`` (orthogonal) instead of ``H`` (``H H = d I``).

    Notes
    -----
    O(n d log d) work; rows are spread over the cores. Each row is transformed
    start to finish while it sits in L1/L2 cache.
    """
    _check_transformable(X)
    if not X.flags.c_contiguous or not X.flags.writeable:
        raise ValueError("fwht_inplace needs a writeable C-contiguous array")
    rows = X.reshape(1, -1) if X.ndim == 1 else X
    scale = 1.0 / np.sqrt(X.shape[-1]) if normalized else 1.0
    kernel = _fwht_rows_par if _parallel(rows.size) else _fwht_rows_ser
    kernel(rows, X.dtype.type(scale))


def fwht(X: np.ndarray, *, normalized: bool = False) -> np.ndarray:
    """Walsh-Hadamard transform of a vector or of the rows of a matrix, as a new array.

    ``fwht(X) == X @ scipy.linalg.hadamard(d)`` (the matrix is symmetric);
    see :func:`fwht_inplace` for the parameters.
    """
    X = np.array(X, order="C", copy=True)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    fwht_inplace(X, normalized=normalized)
    return X


class SRHT:
    """Subsampled randomized Hadamard transform ``x -> sqrt(D'/E) R (H / sqrt(D')) diag(s) pad(x)``.

    ``pad`` appends zeros up to ``D' = next_pow2(max(D, E))``, ``s`` are random
    signs, ``H / sqrt(D')`` the normalised Walsh-Hadamard matrix and ``R``
    keeps ``E`` of the ``D'`` coordinates, drawn uniformly without
    replacement. Then ``E ||SRHT(x)||^2 = ||x||^2`` and, for ``E`` large
    enough, norms are kept within Johnson-Lindenstrauss bounds. Applied with
    the fast transform in O(D' log D') per vector.

    One object serves as a JL down-projection of feature rows (Comp,
    CRAFTMaps: :meth:`apply` on the rows of a matrix) and as the test matrix
    Theta of TEFM-S, which mixes the *training rows*: ``Theta^T F`` for an
    ``n x d`` matrix F, is :meth:`apply_columns`.

    Parameters
    ----------
    n_features_in : int
        D, the length of the vectors transformed.
    n_components : int
        E, the number of coordinates kept. ``E > D`` is allowed (the vector
        is padded further); it is then an isometric embedding in expectation.
    random_state : int, RandomState or None

    Attributes
    ----------
    n_padded_ : int
        D', the transform length.
    signs_ : ndarray of shape (D',) of +-1.0
    index_ : ndarray of shape (E,) of int64, sorted
        The kept coordinates.
    scale_ : float
        ``1 / sqrt(E)``: ``sqrt(D'/E)`` times the ``1 / sqrt(D')`` of the
        normalised Hadamard matrix, applied once.

    References
    ----------
    J. A. Tropp. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis 3(1-2), 2011.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.RandomState(0).randn(3, 1000)
    >>> SRHT(1000, 256, random_state=0).apply(x).shape
    (3, 256)
    """

    def __init__(self, n_features_in: int, n_components: int, *, random_state=None):
        validate_parameter_constraints(  # not an estimator: its constraints checked here, as fit does
            {"n_features_in": POSITIVE_INT, "n_components": POSITIVE_INT},
            {"n_features_in": n_features_in, "n_components": n_components}, caller_name="SRHT")
        self.n_features_in, self.n_components = int(n_features_in), int(n_components)
        rng = check_random_state(random_state)
        self.n_padded_ = next_pow2(max(self.n_features_in, self.n_components))
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=self.n_padded_)
        self.index_ = np.sort(rng.choice(self.n_padded_, self.n_components, replace=False))
        self.scale_ = 1.0 / np.sqrt(self.n_components)

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of :meth:`apply` on ``n`` rows (see :mod:`rfrepro.features._cost`)."""
        size = _cost.itemsize(dtype)
        flops = n * (self.n_features_in + self.n_components) + _cost.fwht(n, self.n_padded_)
        return _cost.cost(flops, size * (n * self.n_features_in + self.n_padded_ + n * self.n_components)
                          + self.index_.nbytes)

    def apply(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """SRHT of every row of ``X`` (shape (n, D)) -> (n, E), in the dtype of ``X``."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features_in:
            raise ValueError(
                f"SRHT was drawn for rows of length {self.n_features_in}, got shape {X.shape}"
            )
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.dtype(np.float64)
        X = np.ascontiguousarray(X, dtype=dtype)
        if out is None:
            out = np.empty((X.shape[0], self.n_components), dtype=dtype)
        elif out.shape != (X.shape[0], self.n_components) or out.dtype != dtype:
            raise ValueError(
                f"out must have shape {(X.shape[0], self.n_components)} and dtype {dtype}"
            )
        kernel = _srht_rows_par if _parallel(X.shape[0] * self.n_padded_) else _srht_rows_ser
        kernel(X, self.signs_.astype(dtype), self.index_, dtype.type(self.scale_), out)
        return out

    def apply_columns(self, F: np.ndarray) -> np.ndarray:
        """SRHT of every column of ``F`` (shape (D, m)) -> (E, m): ``Theta^T F``.

        The columns are taken in blocks that are copied transposed (so each
        transform runs on contiguous memory), so the extra memory is one
        block, not a second copy of ``F``.
        """
        F = np.asarray(F)
        if F.ndim != 2 or F.shape[0] != self.n_features_in:
            raise ValueError(
                f"SRHT was drawn for columns of length {self.n_features_in}, got shape {F.shape}"
            )
        dtype = F.dtype if F.dtype in (np.float32, np.float64) else np.dtype(np.float64)
        out = np.empty((self.n_components, F.shape[1]), dtype=dtype)
        for cols in row_chunks(F.shape[1], self.n_padded_):
            block = np.ascontiguousarray(F[:, cols].T, dtype=dtype)
            out[:, cols] = self.apply(block).T
        return out
