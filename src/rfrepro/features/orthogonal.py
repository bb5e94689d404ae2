"""Orthogonal random features (ORF) and structured orthogonal random features (SORF).

Both replace the i.i.d. Gaussian frequency matrix of random Fourier features
(Gaussian kernel) by blocks of ``d'`` orthogonal frequencies, stacked and
truncated to ``n_components`` when more are asked for than one block holds.

- ORF: ``W = (1 / sigma) S Q`` per block, ``Q`` a uniformly random ``d x d``
  orthogonal matrix and ``S`` a diagonal of chi(d)-distributed norms, so every
  frequency is marginally N(0, sigma^-2 I) as in RKS. The kernel estimate is
  unbiased (Yu et al., Lemma 1) and its variance is below RKS's (Theorem 1).
- SORF: ``W = (sqrt(d') / sigma) H D1 H D2 H D3`` per block, ``H`` the
  normalised Walsh-Hadamard matrix on ``d'`` = the next power of two >= d
  (inputs are zero-padded) and ``D_i`` random sign diagonals. Nothing dense is
  stored (3 d' signs a block) and a row costs O(D log d) through the shared
  FWHT; the kernel estimate is biased by at most ``6 z / sqrt(d')``, z =
  ||x - y|| / sigma (Theorem 5).

Both output forms of :class:`~rfrepro.features.rff.RandomFourierFeatures`:
``cos`` (``sqrt(2/D) cos(W x + b)``) and ``cossin`` (``sqrt(1/D) [cos W x, sin W x]``).

References
----------
F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice and S. Kumar.
Orthogonal random features. NIPS 2016.
"""

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
    COS,
    COSSIN,
    PARALLEL_MIN_VALUES,
    RAW,
    ROWS_PER_TASK,
    _cos_of,
    _sincos_of,
)
from rfrepro.features.hadamard import fwht_vector, next_pow2
from rfrepro.features.rff import VARIANTS, DenseFourierTransform
from rfrepro.jit import threaded_and_serial


def orthogonal_gaussian_block(d: int, rng: np.random.RandomState) -> np.ndarray:
    """One ``d x d`` block ``S Q``: rows orthogonal, each row marginally N(0, I_d).

    ``Q`` comes from the QR decomposition of a Gaussian matrix with the signs of
    ``diag(R)`` moved into it, which makes it Haar-distributed; the row norms
    are then redrawn from the chi distribution with ``d`` degrees of freedom
    (the norm of a d-dimensional standard Gaussian vector).
    """
    G = rng.standard_normal((d, d))
    Q, R = np.linalg.qr(G)
    Q *= np.sign(np.diag(R))[np.newaxis, :]
    norms = np.sqrt(rng.chisquare(d, size=d))
    return norms[:, np.newaxis] * Q.T


class _OrthogonalBase(FeatureMap):
    """What ORF and SORF share: parameters, the two output forms, stacked blocks."""

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "sigma": SIGMA, "variant": options(VARIANTS),
        "random_state": RANDOM_STATE}
    n_components_counts = "frequencies"

    def __init__(
        self,
        n_components: int = 100,
        *,
        sigma: float | str = 1.0,
        variant: str = "cos",
        random_state=None,
    ):
        self.n_components = n_components
        self.sigma = sigma
        self.variant = variant
        self.random_state = random_state

    def _fit(self, X):
        n_freq = int(self.n_components)
        rng = self._rng_and_sigma(X, "gaussian")
        self._draw(X, n_freq, rng)
        self._fourier_outputs(n_freq, X.dtype, rng)
        return self

    def _draw(self, X, n_freq: int, rng) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class OrthogonalRandomFeatures(DenseFourierTransform, _OrthogonalBase):
    """Orthogonal random features (ORF) for the Gaussian kernel.

    Frequencies come in blocks of ``d`` (the input dimension) mutually
    orthogonal vectors with chi(d) norms, independent across blocks; the last
    block is truncated to ``n_components``. The transform is one GEMM, as RKS.

    Parameters
    ----------
    n_components : int
        Number of random frequencies (``n_components_counts = "frequencies"``):
        ``cossin`` outputs twice as many columns.
    sigma : float or {"median", "mean"}
        Bandwidth of exp(-||x - y||^2 / (2 sigma^2)), or a rule computed on the training rows.
    variant : {"cos", "cossin"}
    random_state : int, RandomState or None

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features_in_, n_components)
    random_offset_ : ndarray of shape (n_components,) (``"cos"`` only)
    sigma_ : float
    n_features_out_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(6, 4)
    >>> orf = OrthogonalRandomFeatures(n_components=8, sigma=1.0, random_state=0).fit(X)
    >>> orf.transform(X).shape
    (6, 8)
    >>> W = orf.random_weights_[:, :4]          # the first block: orthogonal columns
    >>> bool(np.allclose(np.triu(W.T @ W, 1), 0))
    True
    """

    def _draw(self, X, n_freq: int, rng) -> None:
        d = X.shape[1]
        blocks = [orthogonal_gaussian_block(d, rng) for _ in range(-(-n_freq // d))]
        W = np.vstack(blocks)[:n_freq].T / self.sigma_
        self.random_weights_ = np.ascontiguousarray(W, dtype=X.dtype)

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: one GEMM, one cosine per output (as RKS)."""
        return _cost.dense_fourier(n, self.n_features_in_, self.n_components, self.variant, dtype)


def _sorf_body(X, signs, inv, scale, offset, amplitude, mode, out):
    """Features of the rows of X from ``scale * (H D1 H D2 H D3 pad(x))``, block by block.

    ``H`` is applied as the unnormalised FWHT followed by ``inv`` = 1 / sqrt(d')
    (the normalised transform, as :func:`~rfrepro.features.hadamard.fwht_inplace`
    computes it), and each sign diagonal is fused into the pass that follows a
    transform. A row goes through all three transforms of every block while its
    work vector stays in L1, and the cosine is fused into the store, so the
    output is written once and nothing of size n x d' goes through memory. The
    values are those of three whole-array passes in the same order (pad, then
    per diagonal: multiply by its signs, FWHT, multiply by ``inv``; then
    ``scale``, then the cosine): the same operations on the same operands.
    """
    n, d = X.shape
    n_blocks, _, dp = signs.shape
    n_freq = out.shape[1] // 2 if mode == COSSIN else out.shape[1]
    n_tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    for t in prange(n_tasks):
        buf = np.empty(dp, dtype=out.dtype)
        for i in range(t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK)):
            x = X[i]
            o = out[i]
            for k in range(n_blocks):
                s1 = signs[k, 0]
                s2 = signs[k, 1]
                s3 = signs[k, 2]
                for j in range(d):  # D3 first
                    buf[j] = x[j] * s3[j]
                for j in range(d, dp):
                    buf[j] = 0
                fwht_vector(buf)
                for j in range(dp):
                    buf[j] = (buf[j] * inv) * s2[j]
                fwht_vector(buf)
                for j in range(dp):
                    buf[j] = (buf[j] * inv) * s1[j]
                fwht_vector(buf)
                base = k * dp
                m = min(dp, n_freq - base)
                if mode == RAW:
                    for j in range(m):
                        o[base + j] = (buf[j] * inv) * scale
                elif mode == COS:
                    for j in range(m):
                        o[base + j] = amplitude * _cos_of((buf[j] * inv) * scale + offset[base + j])
                else:
                    for j in range(m):
                        sin_v, cos_v = _sincos_of((buf[j] * inv) * scale)
                        o[base + j] = amplitude * cos_v
                        o[n_freq + base + j] = amplitude * sin_v


# Small inputs run serially: waking the thread pool costs more than it saves.
_sorf_par, _sorf_ser = threaded_and_serial(_sorf_body)


class StructuredOrthogonalRandomFeatures(_OrthogonalBase):
    """Structured orthogonal random features (SORF) for the Gaussian kernel.

    Each block of ``d'`` frequencies (``d'`` = next power of two >= d, inputs
    zero-padded) is ``sqrt(d') / sigma * H D1 H D2 H D3`` with ``H`` the
    normalised Walsh-Hadamard matrix and ``D_i`` random signs; blocks are
    independent and the last is truncated to ``n_components``. Only the signs
    are stored (``signs_``, 3 d' per block); a row costs O(D log d).

    Parameters
    ----------
    n_components : int
        Number of random frequencies (``n_components_counts = "frequencies"``):
        ``cossin`` outputs twice as many columns.
    sigma : float or {"median", "mean"}
        Bandwidth of exp(-||x - y||^2 / (2 sigma^2)), or a rule computed on the training rows.
    variant : {"cos", "cossin"}
    random_state : int, RandomState or None

    Attributes
    ----------
    signs_ : ndarray of shape (n_blocks, 3, d')
        The diagonals D1, D2, D3 of each block.
    random_offset_ : ndarray of shape (n_components,) (``"cos"`` only)
    sigma_ : float
    n_features_out_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(6, 5)   # d = 5 is padded to d' = 8
    >>> sorf = StructuredOrthogonalRandomFeatures(n_components=12, variant="cossin",
    ...                                           sigma=1.0, random_state=0).fit(X)
    >>> sorf.signs_.shape, sorf.transform(X).shape
    ((2, 3, 8), (6, 24))
    """

    def _draw(self, X, n_freq: int, rng) -> None:
        dp = next_pow2(X.shape[1])
        n_blocks = -(-n_freq // dp)
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, 3, dp)).astype(X.dtype)

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: per block 3 (signs, FWHT, 1/sqrt(d')) and a scale."""
        n_blocks, _, dp = self.signs_.shape
        project = n_blocks * (3 * _cost.fwht(n, dp) + 7 * n * dp)
        return _cost.fourier(n, self.n_features_in_, self.n_components, self.variant, project,
                             self.signs_.size * _cost.itemsize(dtype), dtype)

    def _features(self, X, out, mode: int) -> None:
        dtype = out.dtype
        X = np.ascontiguousarray(X, dtype=dtype)
        dp = self.signs_.shape[2]
        if mode == COS:
            offset, amplitude = self.random_offset_.astype(dtype, copy=False), np.sqrt(2.0 / self.n_components)
        else:
            offset = np.empty(0, dtype=dtype)
            amplitude = np.sqrt(1.0 / self.n_components) if mode == COSSIN else 1.0
        kernel = _sorf_par if out.size >= PARALLEL_MIN_VALUES else _sorf_ser
        kernel(X, self.signs_.astype(dtype, copy=False), dtype.type(1.0 / np.sqrt(dp)),
               dtype.type(np.sqrt(dp) / self.sigma_), offset, dtype.type(amplitude), mode, out)

    def _transform_chunk(self, X, out):
        self._features(X, out, COS if self.variant == "cos" else COSSIN)

    def _project(self, X, out) -> None:
        self._features(X, out, RAW)

    def dense_weights(self) -> np.ndarray:
        """The ``(n_features_in_, n_components)`` frequency matrix the blocks stand for (tests, small d)."""
        out = np.empty((self.n_features_in_, self.n_components))
        self._project(np.eye(self.n_features_in_), out)  # row i of the output is e_i^T W
        return out
