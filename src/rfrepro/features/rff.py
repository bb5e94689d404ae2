"""Random Kitchen Sinks: random Fourier features for shift-invariant kernels."""

from __future__ import annotations

import numpy as np

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)
from rfrepro.features._trig import project_fourier_into
from rfrepro.features.sampling import SPECTRAL_KERNELS, sample_frequencies

VARIANTS = ("cos", "cossin")


class DenseFourierTransform:
    """The transform of a map whose features are cos(X W + b) or [cos(X W), sin(X W)] with a dense W.

    RKS, ORF and RFF selection differ in how they draw ``random_weights_``
    (and ``random_offset_`` for ``variant="cos"``), not in how they apply
    them: all rows in one chunk, GEMMs into ``out`` and the cosine in place
    (:func:`rfrepro.features._trig.project_fourier_into`), so there is no
    temporary for chunks to bound.
    """

    def _transform_chunk_values(self) -> None:
        return None

    def _transform_chunk(self, X, out):
        project_fourier_into(X, self.random_weights_, getattr(self, "random_offset_", None), out, self.variant)


class RandomFourierFeatures(DenseFourierTransform, FeatureMap):
    """Random Fourier features (Random Kitchen Sinks) in both of their forms.

    ``variant="cos"``: z(x) = sqrt(2 / D) cos(W^T x + b), b ~ U[0, 2 pi), D = n_components.
    ``variant="cossin"``: z(x) = sqrt(1 / D) [cos(W^T x), sin(W^T x)], 2 D outputs.

    ``n_components`` always counts random frequencies (columns of W), so the
    output has ``n_components`` columns for ``"cos"`` and ``2 * n_components``
    for ``"cossin"`` (``n_features_out_`` says which). In both forms
    E[z(x)^T z(y)] = k(x, y).

    Parameters
    ----------
    n_components : int
        Number of random frequencies (``n_components_counts = "frequencies"``):
        the output has ``n_components`` columns for ``"cos"``, ``2 * n_components``
        for ``"cossin"``.
    kernel : {"gaussian", "laplacian"}
        Shift-invariant kernel whose spectral density the frequencies follow.
    sigma : float or {"median", "mean"}
        Bandwidth, or a rule to compute it from the training rows.
    variant : {"cos", "cossin"}
    random_state : int, RandomState or None

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features_in_, n_components)
    random_offset_ : ndarray of shape (n_components,) (``"cos"`` only)
    sigma_ : float
    n_features_out_ : int

    References
    ----------
    A. Rahimi and B. Recht. Random features for large-scale kernel machines. NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(5, 3)
    >>> RandomFourierFeatures(n_components=8, sigma=1.0, random_state=0).fit_transform(X).shape
    (5, 8)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA,
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
        W = sample_frequencies(self.kernel, X.shape[1], n_freq, self.sigma_, rng)
        self.random_weights_ = np.ascontiguousarray(W, dtype=X.dtype)
        self._fourier_outputs(n_freq, X.dtype, rng)
        return self

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: one GEMM, one cosine per output."""
        return _cost.dense_fourier(n, self.n_features_in_, self.n_components, self.variant, dtype)
