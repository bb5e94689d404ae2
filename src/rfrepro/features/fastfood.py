"""Fastfood: random Fourier features with structured (Hadamard) frequency matrices."""

from __future__ import annotations

import numpy as np
from numba import prange

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)
from rfrepro.features._trig import (
    _HALF_PI,
    COS,
    COSSIN,
    PARALLEL_MIN_VALUES,
    RAW,
    ROWS_PER_TASK,
    _cos,
)
from rfrepro.features.hadamard import fwht_gather, fwht_vector, next_pow2
from rfrepro.features.rff import VARIANTS
from rfrepro.jit import threaded_and_serial


def _fastfood_body(X, signs, perm, gauss, scale, offset, amplitude, mode, out):
    """Features of the rows of X from v = S_k H G_k Pi_k H B_k pad(x), block by block.

    Each row goes through all blocks while its two work vectors stay in L1;
    B is fused into the zero-padded copy, Pi and G into the second transform
    (``fwht_gather``), S (with the 1 / (sigma sqrt(d')) factor) and the
    cosine into the store, so the output is written once.
    """
    n, d = X.shape
    n_blocks, dp = signs.shape
    n_freq = out.shape[1] // 2 if mode == COSSIN else out.shape[1]
    n_tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    for t in prange(n_tasks):
        a = np.empty(dp, dtype=out.dtype)
        b = np.empty(dp, dtype=out.dtype)
        for i in range(t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK)):
            x = X[i]
            o = out[i]
            for k in range(n_blocks):
                sk = signs[k]
                for j in range(d):
                    a[j] = x[j] * sk[j]
                for j in range(d, dp):
                    a[j] = 0
                fwht_vector(a)
                fwht_gather(a, perm[k], gauss[k], b)
                base = k * dp
                sc = scale[k]
                m = min(dp, n_freq - base)
                if mode == RAW:
                    for j in range(m):
                        o[base + j] = b[j] * sc[j]
                elif mode == COS:
                    for j in range(m):
                        o[base + j] = amplitude * _cos(b[j] * sc[j] + offset[base + j])
                else:
                    for j in range(m):
                        v = b[j] * sc[j]
                        o[base + j] = amplitude * _cos(v)
                        o[n_freq + base + j] = amplitude * _cos(v - _HALF_PI)


# Small inputs run serially: waking the thread pool costs more than it saves.
_fastfood_par, _fastfood_ser = threaded_and_serial(_fastfood_body)


class Fastfood(FeatureMap):
    """Fastfood random Fourier features for the Gaussian kernel (Hadamard variant).

    The dense Gaussian frequency matrix of random Fourier features is replaced
    by stacked blocks ``V = 1 / (sigma sqrt(d')) S H G Pi H B`` of size
    ``d' x d'``, ``d'`` the next power of two ``>= d`` (inputs are zero-padded):
    ``B`` random signs, ``H`` the Walsh-Hadamard matrix (applied with the fast
    transform, never formed), ``Pi`` a random permutation, ``G`` a Gaussian
    diagonal and ``S`` the row-norm correction ``S_ii = s_i / ||G||_F`` with
    ``s_i ~ chi(d')``, so that every row of ``V`` has the length distribution of
    a ``N(0, sigma^-2 I)`` vector. Blocks are stacked until ``n_components``
    frequencies exist; the last block is truncated. Projecting costs
    O(d' log d') per block and row instead of O(d d').

    The features are those of :class:`RandomFourierFeatures` with the
    projections ``V x`` in place of ``W^T x``: ``variant="cos"`` gives
    ``sqrt(2 / D) cos(V x + b)`` (D = n_components outputs), ``"cossin"``
    gives ``sqrt(1 / D) [cos(V x), sin(V x)]`` (2 D outputs).

    Parameters
    ----------
    n_components : int
        Number of random frequencies D (``n_components_counts = "frequencies"``):
        D output columns for ``"cos"``, 2 D for ``"cossin"``.
    kernel : {"gaussian"}
        Only the Gaussian kernel (the Hadamard construction draws Gaussian rows).
    sigma : float or {"median", "mean"}
        Bandwidth, or a rule to compute it from the training rows.
    variant : {"cos", "cossin"}
    random_state : int, RandomState or None

    Attributes
    ----------
    n_padded_ : int
        d', the block size.
    signs_ : ndarray of shape (n_blocks, d')
        Diagonals of B (+-1).
    permutation_ : ndarray of shape (n_blocks, d') of int64
        The permutations Pi.
    gaussian_ : ndarray of shape (n_blocks, d')
        Diagonals of G.
    scaling_ : ndarray of shape (n_blocks, d')
        Diagonals of S times ``1 / (sigma sqrt(d'))``.
    random_offset_ : ndarray of shape (n_components,) (``"cos"`` only)
    sigma_ : float
    n_features_out_ : int

    Notes
    -----
    One compiled pass per row does both transforms of every block and the
    cosine, so the output is written once; transform memory beyond the output
    is two length-d' vectors per thread. The last block is computed whole and
    truncated, so D a multiple of d' wastes nothing.

    References
    ----------
    Q. Le, T. Sarlos and A. Smola. Fastfood - approximating kernel expansions
    in loglinear time. ICML 2013.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(5, 3)
    >>> Fastfood(n_components=8, sigma=1.0, random_state=0).fit_transform(X).shape
    (5, 8)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "kernel": options(["gaussian"]), "sigma": SIGMA,
        "variant": options(VARIANTS), "random_state": RANDOM_STATE}
    n_components_counts = "frequencies"

    def __init__(
        self,
        n_components: int = 100,
        *,
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        variant: str = "cos",
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.variant = variant
        self.random_state = random_state

    def _fit(self, X):
        n_freq = int(self.n_components)
        rng = self._rng_and_sigma(X, self.kernel)
        dp = next_pow2(X.shape[1])
        n_blocks = -(-n_freq // dp)
        self.n_padded_ = dp
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, dp))
        self.permutation_ = np.stack([rng.permutation(dp) for _ in range(n_blocks)]).astype(
            np.int64
        )
        self.gaussian_ = rng.standard_normal((n_blocks, dp))
        chi = np.sqrt(rng.chisquare(dp, size=(n_blocks, dp)))
        g_norm = np.linalg.norm(self.gaussian_, axis=1, keepdims=True)
        self.scaling_ = chi / g_norm / (self.sigma_ * np.sqrt(dp))
        self._fourier_outputs(n_freq, X.dtype, rng)
        return self

    def _features(self, X: np.ndarray, out: np.ndarray, mode: int) -> np.ndarray:
        dtype = out.dtype
        kernel = _fastfood_par if out.size >= PARALLEL_MIN_VALUES else _fastfood_ser
        offset = self.random_offset_ if mode == COS else np.zeros(1)
        kernel(
            np.ascontiguousarray(X, dtype=dtype),
            self.signs_.astype(dtype),
            self.permutation_,
            self.gaussian_.astype(dtype),
            self.scaling_.astype(dtype),
            offset.astype(dtype),
            dtype.type(np.sqrt((2.0 if mode == COS else 1.0) / self.n_components)),
            mode,
            out,
        )
        return out

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: per block B, two FWHTs, G Pi and S (whole blocks)."""
        n_blocks, dp = self.signs_.shape
        project = n_blocks * (2 * _cost.fwht(n, dp) + n * (self.n_features_in_ + 2 * dp))
        params = 3 * n_blocks * dp * _cost.itemsize(dtype) + self.permutation_.nbytes
        return _cost.fourier(n, self.n_features_in_, self.n_components, self.variant, project, params, dtype)

    def _project(self, X: np.ndarray) -> np.ndarray:
        """The projections ``V x`` of the rows of X: shape (n, n_components)."""
        out = np.empty((X.shape[0], self.n_components), dtype=X.dtype)
        return self._features(X, out, RAW)

    def _transform_chunk(self, X, out):
        self._features(X, out, COS if self.variant == "cos" else COSSIN)
