"""Sampling of random frequencies from a kernel's spectral density.

Shared by every random-Fourier-type map (RKS, Fastfood, TEFM, Comp, Quasi,
leverage-reweighted maps).
"""

from __future__ import annotations

import numpy as np

SPECTRAL_KERNELS = ("gaussian", "laplacian")


def sample_frequencies(
    kernel: str, n_features_in: int, n_frequencies: int, sigma: float, rng: np.random.RandomState
) -> np.ndarray:
    """Draw a ``(n_features_in, n_frequencies)`` matrix W of frequencies (columns).

    Gaussian kernel exp(-||x-y||^2 / (2 sigma^2)): entries N(0, sigma^-2).
    Laplacian kernel exp(-||x-y||_1 / sigma): entries Cauchy(0, 1 / sigma),
    the spectral density of a product of 1-D Laplacian kernels.
    """
    shape = (n_features_in, n_frequencies)
    if kernel == "gaussian":
        return rng.standard_normal(shape) / sigma
    if kernel == "laplacian":
        return rng.standard_cauchy(shape) / sigma
    raise ValueError(
        f"unknown shift-invariant kernel {kernel!r}; valid kernels: {', '.join(SPECTRAL_KERNELS)}"
    )


def sample_offsets(n_frequencies: int, rng: np.random.RandomState) -> np.ndarray:
    """Phase offsets b ~ U[0, 2 pi) of the cos(Wx + b) variant."""
    return rng.uniform(0.0, 2.0 * np.pi, size=n_frequencies)
