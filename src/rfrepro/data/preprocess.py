"""Preprocessing fitted on the training split only, then applied to both splits."""

from __future__ import annotations

import numpy as np

from rfrepro.data.dataset import Dataset

PREPROCESSING = ("none", "zscore", "minmax")


def preprocess(ds: Dataset, how: str) -> Dataset:
    """Return ``ds`` with features scaled by ``how``.

    ``zscore``: zero mean, unit variance per feature (constant features left at 0).
    ``minmax``: each feature scaled to [-1, 1] on the training split.
    ``none``: unchanged.
    """
    if how not in PREPROCESSING:
        raise ValueError(f"preprocess={how!r}; valid values: {', '.join(PREPROCESSING)}")
    if how == "none":
        return ds
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
