"""Shared machinery of every feature map: validation, dtype handling, row chunking.

Parameters are validated on one path: each class declares ``_parameter_constraints``
(in scikit-learn's constraint language, from the constants below) and
:meth:`FeatureMap.fit` checks them with scikit-learn's ``_validate_params`` before
``_fit`` runs, so ``_fit`` only checks what a constraint cannot say (a relation
between two parameters, a parameter against the data).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features.sampling import sample_offsets
from rfrepro.kernels import BANDWIDTH_RULES, resolve_bandwidth


# Parameter constraints in scikit-learn's language (``_parameter_constraints`` of each map and
# model). They are checked twice over one declaration: by the estimator's ``fit``
# (scikit-learn's ``_validate_params``: FeatureMap.fit below, and the models' fit), and by
# the harness for a whole run config before anything runs
# (rfrepro.harness.run.validate.check_run_config), so a bad value in a run is one line
# naming the config key, not a failed record.
class NumberInterval(Interval):
    """scikit-learn's ``Interval`` that refuses bools: ``True`` is an Integral to Python, never a count here."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


POSITIVE_INT = [NumberInterval(Integral, 1, None, closed="left")]
NONNEGATIVE_INT = [NumberInterval(Integral, 0, None, closed="left")]
POSITIVE_REAL = [NumberInterval(Real, 0, None, closed="neither")]
NONNEGATIVE_REAL = [NumberInterval(Real, 0, None, closed="left")]
#: >= 0 and finite (NONNEGATIVE_REAL lets inf through), e.g. a polynomial kernel's offset
FINITE_NONNEGATIVE_REAL = [NumberInterval(Real, 0, np.inf, closed="left")]


class OrderedStrOptions(StrOptions):
    """scikit-learn's ``StrOptions`` that lists its options in the order given (a set's order
    varies from run to run with the string hash), so a message is the same every time."""

    def __init__(self, values):
        self.order = tuple(values)
        super().__init__(set(self.order))

    def __str__(self):
        return f"a str among {{{', '.join(repr(v) for v in self.order)}}}"


#: a bandwidth: a positive number, or a rule computed on the training rows
SIGMA = [NumberInterval(Real, 0, None, closed="neither"), OrderedStrOptions(BANDWIDTH_RULES)]
RANDOM_STATE = ["random_state"]


def options(values) -> list:
    """The constraint "one of ``values``" (strings), listed in their order in a message."""
    return [OrderedStrOptions(values)]

#: Rows of output produced per chunk are chosen so one chunk holds about this
#: many values (32 MiB in float64): big enough for an efficient GEMM, small
#: enough that the elementwise pass after it runs on cached data.
CHUNK_VALUES = 1 << 22
#: The same for a map's own ``transform`` into its preallocated output (each
#: chunk is a view of the output), where a larger chunk lets a GEMM run at its
#: full rate. A map whose chunks need no temporary of their own transforms all
#: rows as one chunk (:meth:`FeatureMap._transform_chunk_values`).
TRANSFORM_CHUNK_VALUES = 1 << 24


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
    ``recorded_attributes``; the runner does not need to know them. Every map
    records ``n_features_out`` (the output columns) and, for a map with an
    ``n_components``, ``n_components_counts``: whether ``n_components`` counts
    ``"columns"`` of the output or random ``"frequencies"`` (a ``cossin``
    map's output has two columns per frequency).
    """
    names = getattr(fmap, "recorded_attributes", ())
    if "n_features_out_" not in names:
        names = ("n_features_out_", *names)
    out = {a.rstrip("_"): getattr(fmap, a) for a in names if hasattr(fmap, a)}
    counts = getattr(fmap, "n_components_counts", None)
    if counts is not None:
        out["n_components_counts"] = counts
    return out


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
    #: what ``n_components`` counts: ``"columns"`` of the output or random ``"frequencies"``
    #: (None: the map has no ``n_components``); recorded by :func:`fitted_summary`
    n_components_counts: str | None = None

    def fit(self, X, y=None):
        self._validate_params()  # the declared _parameter_constraints, one line naming the parameter
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

    def _rng_and_sigma(self, X, kernel: str = "gaussian") -> np.random.RandomState:
        """The start of a Fourier map's ``_fit``: the random state, and ``sigma_`` resolved on ``X``."""
        rng = check_random_state(self.random_state)
        self.sigma_ = self._resolve_sigma(X, kernel)
        return rng

    def _fourier_outputs(self, n_freq: int, dtype, rng=None, offset=None) -> None:
        """The end of a Fourier map's ``_fit`` with ``n_freq`` frequencies, by ``variant``.

        ``"cos"``: ``n_freq`` columns and the phases ``random_offset_`` (``offset``,
        or drawn from ``rng`` as U[0, 2 pi) after the frequencies); ``"cossin"``:
        ``2 * n_freq`` columns and no phases.
        """
        if self.variant == "cos":
            if offset is None:
                offset = sample_offsets(n_freq, rng)
            self.random_offset_ = offset.astype(dtype)
            self.n_features_out_ = n_freq
        else:
            self.n_features_out_ = 2 * n_freq

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
