"""Shared machinery of every feature map: validation, dtype handling, row chunking."""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.kernels import BANDWIDTH_RULES, resolve_bandwidth

# Parameter constraints in scikit-learn's language (``_parameter_constraints`` of each map and
# model): the harness checks a run's parameters against them before anything runs
# (rfrepro.harness.validate), so a bad value is one line naming the key, not a failed record.
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
NONNEGATIVE_INT = [Interval(Integral, 0, None, closed="left")]
POSITIVE_REAL = [Interval(Real, 0, None, closed="neither")]
NONNEGATIVE_REAL = [Interval(Real, 0, None, closed="left")]
#: a bandwidth: a positive number, or a rule computed on the training rows
SIGMA = [Interval(Real, 0, None, closed="neither"), StrOptions(set(BANDWIDTH_RULES))]
RANDOM_STATE = ["random_state"]


def options(values) -> list:
    """The constraint "one of ``values``" (strings)."""
    return [StrOptions(set(values))]

#: Rows of output produced per chunk are chosen so one chunk holds about this
#: many values (32 MiB in float64): big enough for an efficient GEMM, small
#: enough that the elementwise pass after it runs on cached data.
CHUNK_VALUES = 1 << 22
#: The same for a map's own ``transform`` into its preallocated output (each
#: chunk is a view of the output), where a larger chunk lets a GEMM run at its
#: full rate. A map whose chunks need no temporary of their own transforms all
#: rows as one chunk (:meth:`FeatureMap._transform_chunk_values`).
TRANSFORM_CHUNK_VALUES = 1 << 24


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int, or raise ValueError naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def row_chunks(n_rows: int, n_cols_out: int, chunk_values: int | None = None):
    """Yield slices of at most ``chunk_values / n_cols_out`` rows covering ``n_rows``."""
    if chunk_values is None:  # read at call time, so the module setting can be tuned
        chunk_values = CHUNK_VALUES
    step = max(64, chunk_values // max(1, n_cols_out))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def fitted_summary(fmap) -> dict:
    """The fitted facts a run records about ``fmap``: its ``recorded_attributes``.

    Each map class lists the fitted attributes worth recording (e.g. the
    selected D* of an RFF selection) in a class attribute
    ``recorded_attributes``; the runner does not need to know them.
    """
    names = getattr(fmap, "recorded_attributes", ("n_features_out_",))
    return {a.rstrip("_"): getattr(fmap, a) for a in names if hasattr(fmap, a)}


class FeatureMap(TransformerMixin, BaseEstimator):
    """Base class of the random feature maps.

    Subclasses implement ``_fit(X, rng)`` (draw the random parameters, set
    ``n_features_out_``) and ``_transform_chunk(X_chunk, out)`` (write the
    features of a block of rows into ``out``). This class validates input,
    keeps float32 as float32, and transforms in row chunks so the memory used
    beyond the output stays bounded.
    """

    #: the sparse formats a subclass accepts (none by default)
    _accept_sparse: bool | str | list[str] = False
    #: fitted attributes a run records (see :func:`fitted_summary`)
    recorded_attributes: tuple[str, ...] = ("n_features_out_",)

    def fit(self, X, y=None):
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], accept_sparse=self._accept_sparse, reset=True
        )
        self._fit(X)
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], accept_sparse=self._accept_sparse, reset=False
        )
        out = np.empty((X.shape[0], self.n_features_out_), dtype=X.dtype)
        chunk_values = self._transform_chunk_values()
        if chunk_values is None:
            self._transform_chunk(X, out)
            return out
        for rows in row_chunks(X.shape[0], self.n_features_out_, chunk_values):
            self._transform_chunk(X[rows], out[rows])
        return out

    def _transform_chunk_values(self) -> int | None:
        """Output values per chunk of :meth:`transform`, or None for all rows in one chunk.

        Chunks bound what ``_transform_chunk`` allocates beyond the output.
        A map that writes straight into ``out`` with nothing of its own (RKS:
        GEMMs into ``out``, then the cosine in place) returns None: chunks
        would bound nothing, and it splits its rows over the cores itself
        (:func:`rfrepro.features._trig.project_cos_bias_into`).
        """
        return TRANSFORM_CHUNK_VALUES

    def cost(self, n: int, dtype=np.float64) -> dict:  # pragma: no cover - abstract
        """``{"flops", "bytes"}`` of transforming ``n`` rows of ``dtype`` once fitted.

        Every map declares it from the helpers of :mod:`rfrepro.features._cost`
        (which states the counting conventions); a run sets it against the
        host's peak rates (its record's ``roofline``).
        """
        raise NotImplementedError(f"{type(self).__name__} does not declare its cost")

    def _fit(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform_chunk(self, X, out):  # pragma: no cover - abstract
        raise NotImplementedError

    def _resolve_sigma(self, X, kernel: str = "gaussian") -> float:
        return resolve_bandwidth(X, self.sigma, kernel=kernel, random_state=self.random_state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
