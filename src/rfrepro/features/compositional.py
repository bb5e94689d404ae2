"""Compositional maps: random Fourier features followed by a linear down-projection.

``ProjectedRKS`` is the shared shape of Comp (a data-independent projection,
here) and TEFM (a data-dependent one, in :mod:`rfrepro.features.tefm`):
z(x) = down(f(x)) with f a :class:`RandomFourierFeatures` map of
``n_up_components`` frequencies.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
    row_chunks,
)
from rfrepro.features.hadamard import SRHT
from rfrepro.features.rff import VARIANTS, RandomFourierFeatures
from rfrepro.features.sampling import SPECTRAL_KERNELS

PROJECTIONS = ("gaussian", "srht")

#: the default up-projection has this many times n_components features,
#: d = 4 l as in the experiments of Chen et al. (2015)
UP_FACTOR = 4


def _draw_seed(rng: np.random.RandomState) -> int:
    """A seed for a sub-estimator: it stays reproducible and cloneable on its own."""
    return int(rng.randint(np.iinfo(np.int32).max))


class ProjectedRKS(FeatureMap):
    """Base of the maps ``z(x) = down(f(x))``, f random Fourier features.

    Subclasses call :meth:`_fit_rks` in ``_fit`` and implement
    ``_down(F, out)`` (write the projection of the feature rows ``F`` into
    ``out``). ``n_up_components`` counts frequencies of the inner map, as
    ``n_components`` does for :class:`RandomFourierFeatures`; ``None`` means
    ``UP_FACTOR * n_components`` features (4 l frequencies for ``"cos"``,
    2 l for ``"cossin"``).
    """

    def _fit_rks(self, X, rng: np.random.RandomState) -> RandomFourierFeatures:
        n_out = int(self.n_components)
        if self.n_up_components is None:
            n_up = UP_FACTOR * n_out if self.variant == "cos" else UP_FACTOR * n_out // 2
        else:
            n_up = int(self.n_up_components)
        self.sigma_ = self._resolve_sigma(X, self.kernel)
        self.rff_ = RandomFourierFeatures(
            n_components=n_up,
            kernel=self.kernel,
            sigma=self.sigma_,
            variant=self.variant,
            random_state=_draw_seed(rng),
        ).fit(X)
        return self.rff_

    def _transform_chunk(self, X, out):
        # The inner features are wider than the output (d = 4 l by default):
        # sub-chunk so one block of them stays at the base chunk size.
        for rows in row_chunks(X.shape[0], self.rff_.n_features_out_):
            self._down(self.rff_.transform(X[rows]), out[rows])

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: the RKS features, then their down-projection."""
        n_up = self.rff_.n_features_out_
        return _cost.chain(self.rff_.cost(n, dtype), self._down_cost(n, dtype),
                           n * n_up * _cost.itemsize(dtype))

    def _down_cost(self, n: int, dtype) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _down(self, F, out):  # pragma: no cover - abstract
        raise NotImplementedError


class CompRFF(ProjectedRKS):
    """Comp: random Fourier features up-projected, then a Johnson-Lindenstrauss down-projection.

    The CRAFTMaps construction (Hamid et al. 2014) applied to a shift-invariant
    kernel, as in the experiments of Chen et al. (2015): f(x) are RKS features
    with ``n_up_components`` frequencies (d columns), and z(x) = P^T f(x) with
    a data-independent ``P`` of shape (d, n_components):

    - ``projection="gaussian"``: entries N(0, 1 / E), E = n_components;
    - ``projection="srht"``: the subsampled randomized Hadamard transform
      ``sqrt(d'/E) R H D`` (:class:`~rfrepro.features.hadamard.SRHT`),
      applied in O(d' log d') per row.

    Both give E[z(x)^T z(y)] = f(x)^T f(y), so E[Z Z^T] = K.

    Parameters
    ----------
    n_components : int
        E, the output dimension: output columns (``n_components_counts = "columns"``).
    n_up_components : int or None, default None
        Frequencies of the inner RKS map; None: 4 * n_components features.
    projection : {"gaussian", "srht"}
    kernel : {"gaussian", "laplacian"}
    sigma : float or {"median", "mean"}
    variant : {"cos", "cossin"}
        Form of the inner RKS features.
    random_state : int, RandomState or None

    Attributes
    ----------
    rff_ : RandomFourierFeatures
        The fitted up-projection.
    projection_ : ndarray of shape (d, n_components) (``"gaussian"`` only)
    srht_ : SRHT (``"srht"`` only)
    sigma_ : float
    n_features_out_ : int

    References
    ----------
    R. Hamid, Y. Xiao, A. Gittens and D. DeCoste. Compact random feature maps. ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(5, 3)
    >>> CompRFF(n_components=4, projection="srht", random_state=0).fit_transform(X).shape
    (5, 4)
    """

    n_components_counts = "columns"
    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "n_up_components": [None, *POSITIVE_INT],
        "projection": options(PROJECTIONS), "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA,
        "variant": options(VARIANTS), "random_state": RANDOM_STATE}

    def __init__(
        self,
        n_components: int = 100,
        *,
        n_up_components: int | None = None,
        projection: str = "gaussian",
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        variant: str = "cos",
        random_state=None,
    ):
        self.n_components = n_components
        self.n_up_components = n_up_components
        self.projection = projection
        self.kernel = kernel
        self.sigma = sigma
        self.variant = variant
        self.random_state = random_state

    def _fit(self, X):
        if self.projection not in PROJECTIONS:
            raise ValueError(
                f"projection={self.projection!r}; valid projections: {', '.join(PROJECTIONS)}"
            )
        rng = check_random_state(self.random_state)
        n_up = self._fit_rks(X, rng).n_features_out_
        n_out = int(self.n_components)
        if self.projection == "gaussian":
            self.projection_ = rng.standard_normal((n_up, n_out)) / np.sqrt(n_out)
        else:
            self.srht_ = SRHT(n_up, n_out, random_state=_draw_seed(rng))
        self.n_features_out_ = n_out
        return self

    def _down_cost(self, n: int, dtype) -> dict:
        if self.projection == "gaussian":
            return _cost.dense_projection(n, self.rff_.n_features_out_, self.n_features_out_, dtype)
        return self.srht_.cost(n, dtype)

    def _down(self, F, out):
        if self.projection == "gaussian":
            np.matmul(F, self.projection_.astype(F.dtype, copy=False), out=out)
        else:
            self.srht_.apply(F, out=out)
