"""Quasi-Monte Carlo random Fourier features: low-discrepancy frequencies."""

from __future__ import annotations

import inspect

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from rfrepro.features._base import options
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.features.sampling import SPECTRAL_KERNELS

SEQUENCES = ("sobol", "halton")

# The inverse CDFs are infinite at 0 and 1 (a scrambled point can be exactly 0):
# clip to the nearest representable interior points, i.e. |ndtri| <= 8.2.
_EDGE = 2.0**-53

# scipy >= 1.15 seeds the QMC engines with ``rng``; older releases with ``seed``.
_SEED_KW = "rng" if "rng" in inspect.signature(qmc.Sobol.__init__).parameters else "seed"


def low_discrepancy_points(
    sequence: str, dimension: int, n_points: int, rng: np.random.RandomState
) -> np.ndarray:
    """The first ``n_points`` of a scrambled Sobol or Halton sequence in (0, 1)^dimension.

    Sobol points are drawn in a power-of-two batch (the size at which they
    are balanced) and the first ``n_points`` kept, so scipy's balance warning
    does not fire.
    """
    if sequence not in SEQUENCES:
        raise ValueError(f"sequence={sequence!r}; valid sequences: {', '.join(SEQUENCES)}")
    seed = int(rng.randint(np.iinfo(np.int32).max))
    if sequence == "sobol":
        engine = qmc.Sobol(dimension, scramble=True, **{_SEED_KW: seed})
        points = engine.random_base2(max(0, int(n_points - 1).bit_length()))[:n_points]
    else:
        points = qmc.Halton(dimension, scramble=True, **{_SEED_KW: seed}).random(n_points)
    return np.clip(points, _EDGE, 1.0 - _EDGE)


def spectral_inverse_cdf(kernel: str, u: np.ndarray) -> np.ndarray:
    """Map uniforms to frequencies (sigma = 1) of a kernel's product spectral density.

    Gaussian: the standard normal quantile; Laplacian: the standard Cauchy
    quantile tan(pi (u - 1/2)), the same densities as
    :func:`~rfrepro.features.sampling.sample_frequencies`.
    """
    if kernel == "gaussian":
        return ndtri(u)
    if kernel == "laplacian":
        return np.tan(np.pi * (u - 0.5))
    raise ValueError(
        f"unknown shift-invariant kernel {kernel!r}; valid kernels: {', '.join(SPECTRAL_KERNELS)}"
    )


class QuasiRandomFourierFeatures(RandomFourierFeatures):
    """Quasi-Monte Carlo random Fourier features.

    As :class:`RandomFourierFeatures`, but the frequencies (and, for
    ``variant="cos"``, the phases) are a scrambled low-discrepancy sequence
    pushed through the inverse CDF of the kernel's spectral density instead of
    independent draws: point ``t`` of a sequence in ``[0, 1]^(d + 1)`` gives
    frequency ``w_t = Phi^-1(u_t[:d]) / sigma`` and phase ``b_t = 2 pi u_t[d]``
    (the phase is one more integration variable of the same integral). The
    scrambling is seeded by ``random_state``: the map is deterministic under a
    seed and the seed gives independent randomised QMC replicates.

    Yang et al. use a digital net (Halton, Sobol and lattice rules are
    compared in their paper); we offer scipy's scrambled Sobol and Halton
    sequences.

    Parameters
    ----------
    n_components : int
        Number of frequencies (sequence points; ``n_components_counts =
        "frequencies"``): ``2 * n_components`` output columns for ``"cossin"``.
    kernel : {"gaussian", "laplacian"}
    sigma : float or {"median", "mean"}
    variant : {"cos", "cossin"}
    sequence : {"sobol", "halton"}
    random_state : int, RandomState or None

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features_in_, n_components)
    random_offset_ : ndarray of shape (n_components,) (``"cos"`` only)
    sigma_ : float
    n_features_out_ : int

    References
    ----------
    J. Yang, V. Sindhwani, H. Avron and M. Mahoney. Quasi-Monte Carlo feature
    maps for shift-invariant kernels. ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(5, 3)
    >>> QuasiRandomFourierFeatures(n_components=8, random_state=0).fit_transform(X).shape
    (5, 8)
    """

    _parameter_constraints: dict = {**RandomFourierFeatures._parameter_constraints, "sequence": options(SEQUENCES)}

    def __init__(
        self,
        n_components: int = 100,
        *,
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        variant: str = "cos",
        sequence: str = "sobol",
        random_state=None,
    ):
        super().__init__(
            n_components, kernel=kernel, sigma=sigma, variant=variant, random_state=random_state
        )
        self.sequence = sequence

    def _fit(self, X):
        n_freq = int(self.n_components)
        rng = self._rng_and_sigma(X, self.kernel)
        d = X.shape[1]
        with_phase = self.variant == "cos"
        u = low_discrepancy_points(self.sequence, d + 1 if with_phase else d, n_freq, rng)
        W = spectral_inverse_cdf(self.kernel, u[:, :d]).T / self.sigma_
        self.random_weights_ = np.ascontiguousarray(W, dtype=X.dtype)
        self._fourier_outputs(n_freq, X.dtype, offset=2.0 * np.pi * u[:, d] if with_phase else None)
        return self
