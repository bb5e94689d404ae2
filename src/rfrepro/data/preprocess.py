"""Preprocessing fitted on the training split only, then applied to both splits."""

from __future__ import annotations

import numpy as np

from rfrepro.data.dataset import Dataset

PREPROCESSING = ("none", "zscore", "minmax", "unit_norm", "zscore_unit_norm")


def preprocess(ds: Dataset, how: str) -> Dataset:
    """Return ``ds`` with features scaled by ``how``.

    ``zscore``: zero mean, unit variance per feature (constant features left at 0).
    ``minmax``: each feature scaled to [-1, 1] on the training split.
    ``none``: unchanged.
    ``unit_norm``: every row (of every split) divided by its L2 norm (zero rows
    left at 0): the points lie on the unit sphere, as the analysis of
    dot-product kernel maps assumes (Kar and Karnick 2012; Hamid et al. 2014).
    ``zscore_unit_norm``: ``zscore``, then ``unit_norm`` (for features whose
    raw scales differ by orders of magnitude).
    """
    if how not in PREPROCESSING:
        raise ValueError(f"preprocess={how!r}; valid values: {', '.join(PREPROCESSING)}")
    if how == "none":
        return ds
    if how.endswith("unit_norm"):
        base = preprocess(ds, "zscore") if how == "zscore_unit_norm" else ds
        return _with_features(base, _unit_rows, how)
    Xtr = ds.X_train
    if how == "zscore":
        shift = Xtr.mean(axis=0)
        scale = Xtr.std(axis=0)
    else:
        lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
        shift = (hi + lo) / 2.0
        scale = (hi - lo) / 2.0
    scale = np.where(scale > 0, scale, 1.0)

    def apply(X):
        if X is None:
            return None
        # integer features (pixels, counts) become floats: scaling them must not truncate
        dtype = X.dtype if X.dtype.kind == "f" else np.float64
        return ((X - shift) / scale).astype(dtype, copy=False)

    return _with_features(ds, apply, how)


def _unit_rows(X: np.ndarray | None) -> np.ndarray | None:
    """Rows scaled to unit L2 norm; a row depends on nothing but itself, so no fitting."""
    if X is None:
        return None
    dtype = X.dtype if X.dtype.kind == "f" else np.float64
    X = X.astype(dtype, copy=False)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0).astype(dtype)


def _with_features(ds: Dataset, apply, how: str) -> Dataset:
    return Dataset(
        ds.name,
        ds.task,
        apply(ds.X_train),
        ds.y_train,
        apply(ds.X_test),
        ds.y_test,
        {**ds.meta, "preprocess": how},
        apply(ds.X_val),
        ds.y_val,
    )
