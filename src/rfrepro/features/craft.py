"""CRAFTMaps: a random up-projection followed by a Johnson-Lindenstrauss down-projection."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    FeatureMap,
    options,
    row_chunks,
)
from rfrepro.features.compositional import PROJECTIONS, UP_FACTOR, _draw_seed
from rfrepro.features.hadamard import SRHT
from rfrepro.features.maclaurin import RandomMaclaurin


class CraftMap(FeatureMap):
    """Compact random feature map z(x) = P^T f(x), f a wide random feature map.

    The up-projection ``up`` (e.g. :class:`RandomMaclaurin` or
    :class:`TensorSketch`) is refitted with ``n_up_components`` = D output
    features; P is a data-independent (D, E) Johnson-Lindenstrauss map,
    E = ``n_components``:

    - ``projection="gaussian"``: entries N(0, 1 / E), applied by a GEMM;
    - ``projection="srht"``: the subsampled randomized Hadamard transform
      ``sqrt(D'/E) R H D`` (:class:`~rfrepro.features.hadamard.SRHT`),
      O(D' log D') per row.

    Both give E[z(x)^T z(y)] = f(x)^T f(y), so the estimate of the kernel stays
    unbiased, and z(x)^T z(y) concentrates around f(x)^T f(y) at the JL rate.
    With the SRHT and E = D' (a power of two) P is orthogonal and z keeps f's
    inner products exactly.

    Parameters
    ----------
    up : estimator or None
        The up-projection, a feature map with an ``n_components`` parameter;
        None means ``RandomMaclaurin()``. It is cloned, never fitted in place.
    n_components : int
        E, the output dimension: output columns (``n_components_counts = "columns"``).
    n_up_components : int or None, default None
        D, the up-projection's output dimension; None means 4 E.
    projection : {"gaussian", "srht"}
    random_state : int, RandomState or None
        Seeds the up-projection (overriding its own ``random_state``) and P.

    Attributes
    ----------
    up_ : estimator
        The fitted up-projection.
    projection_ : ndarray of shape (D, E) (``"gaussian"`` only)
    srht_ : SRHT (``"srht"`` only)
    n_up_components_ : int
        D, the up-projection's output dimension.
    n_features_out_ : int

    References
    ----------
    R. Hamid, Y. Xiao, A. Gittens and D. DeCoste. Compact random feature maps. ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from rfrepro.features import TensorSketch
    >>> X = np.random.RandomState(0).randn(5, 3)
    >>> craft = CraftMap(TensorSketch(degree=3), n_components=8, projection="srht", random_state=0)
    >>> craft.fit_transform(X).shape
    (5, 8)
    """

    recorded_attributes = ("n_features_out_", "n_up_components_")
    n_components_counts = "columns"

    _parameter_constraints: dict = {"up": [None, HasMethods(["fit", "transform"])], "n_components": POSITIVE_INT,
        "n_up_components": [None, *POSITIVE_INT], "projection": options(PROJECTIONS), "random_state": RANDOM_STATE}

    def __init__(
        self,
        up=None,
        *,
        n_components: int = 100,
        n_up_components: int | None = None,
        projection: str = "gaussian",
        random_state=None,
    ):
        self.up = up
        self.n_components = n_components
        self.n_up_components = n_up_components
        self.projection = projection
        self.random_state = random_state

    def _fit(self, X):
        E = int(self.n_components)
        D = UP_FACTOR * E if self.n_up_components is None else int(self.n_up_components)
        rng = check_random_state(self.random_state)
        up = RandomMaclaurin() if self.up is None else clone(self.up)
        up.set_params(n_components=D, random_state=_draw_seed(rng))
        self.up_ = up.fit(X)
        D = self.up_.n_features_out_
        if self.projection == "gaussian":
            self.projection_ = rng.standard_normal((D, E)) / np.sqrt(E)
            self.srht_ = None
        else:
            self.srht_ = SRHT(D, E, random_state=_draw_seed(rng))
            self.projection_ = None
        self._cast = {}
        self.n_features_out_ = E
        self.n_up_components_ = int(D)
        return self

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: the up-projection's, then P (a GEMM or the SRHT)."""
        D, E = self.n_up_components_, self.n_features_out_
        down = (self.srht_.cost(n, dtype) if self.srht_ is not None
                else _cost.dense_projection(n, D, E, dtype))
        return _cost.chain(self.up_.cost(n, dtype), down, n * D * _cost.itemsize(dtype))

    def _transform_chunk(self, X, out):
        # the up-projected rows are D / E (4 by default) times wider than the output
        for rows in row_chunks(X.shape[0], self.up_.n_features_out_):
            F = self.up_.transform(X[rows])
            if self.srht_ is not None:
                self.srht_.apply(F, out=out[rows])
            else:
                if F.dtype not in self._cast:
                    self._cast[F.dtype] = self.projection_.astype(F.dtype)
                np.matmul(F, self._cast[F.dtype], out=out[rows])
