"""Parse dispatch: a dataset config's cached files to arrays.

Each source is read by its format's parser (:mod:`rfrepro.data.formats`) and
checked against its ``expect``; then what needs every file at once is done
here: ``keep_classes``, one-hot categories shared by the roles, and the label
encoding (binary -> {-1.0, +1.0}, multiclass -> int64 codes, regression ->
float64).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from rfrepro.data import formats
from rfrepro.data.schema import FORMAT_OPTIONS

__all__ = ["SourceError", "parse_all"]


class SourceError(Exception):
    """A source's file did not parse: ``role`` names the source, ``error`` the :class:`~rfrepro.data.formats.ParseError`."""

    def __init__(self, role: str, error: Exception):
        super().__init__(str(error))
        self.role = role
        self.error = error


def _parse_source(src: Mapping, paths: list[Path], dtype):
    """Features (array, or DataFrame for tables) and raw labels of one source."""
    fmt = src["format"]
    opts = {k: v for k, v in src.items() if k in FORMAT_OPTIONS[fmt]}
    streams = formats.open_streams(paths[0], src.get("member"))
    try:
        if fmt == "libsvm":
            if len(streams) != 1:
                raise formats.ParseError(f"member {src.get('member')!r} matches several files")
            X, y = formats.read_libsvm(streams[0], n_features=opts.get("n_features"),
                                       zero_based=bool(opts.get("zero_based", False)), dtype=dtype)
        elif fmt in ("csv", "tsv"):
            opts.setdefault("delimiter", "\t" if fmt == "tsv" else ",")
            X, y = formats.read_table(streams, **opts)
        elif fmt == "idx":
            images = formats.read_idx(streams[0])
            with formats.open_decompressed(paths[1]) as f:
                y = formats.read_idx(f)
            if images.shape[0] != y.shape[0]:
                raise formats.ParseError(f"{images.shape[0]} images but {y.shape[0]} labels")
            X = images.reshape(images.shape[0], -1)
        else:  # mat
            X, y = formats.read_mat(streams[0], x_key=opts.get("x_key", "X"),
                                    y_key=opts.get("y_key", "Y"))
    finally:
        for s in streams:
            s.close()
    if fmt in ("idx", "mat"):
        X = X.astype(dtype)
        if opts.get("divide_by"):
            X /= dtype(opts["divide_by"])
    _check_expect(src, X, y)
    return X, y


def _check_expect(src: Mapping, X, y) -> None:
    exp = {k: v for k, v in (src.get("expect") or {}).items() if v is not None}
    got = {"n_rows": X.shape[0], "n_features": X.shape[1]}
    if "n_classes" in exp:  # np.unique sorts: only pay for it when asked
        got["n_classes"] = len(np.unique(y))
    bad = {k: (v, got[k]) for k, v in exp.items() if int(v) != got[k]}
    if bad:
        detail = ", ".join(f"{k} expected {e}, got {g}" for k, (e, g) in bad.items())
        raise formats.ParseError(f"parsed shape differs from the config: {detail}")


def _encode_labels(cfg: Mapping, ys: dict[str, np.ndarray]) -> tuple[dict, np.ndarray]:
    task = cfg["task"]
    if task == "regression":
        try:
            return {r: np.asarray(y, dtype=np.float64) for r, y in ys.items()}, np.array([], str)
        except ValueError as e:
            raise ValueError(f"dataset {cfg['name']!r}: regression labels are not numbers: {e}") from e
    classes = np.unique(np.concatenate([np.asarray(y) for y in ys.values()]))
    if task == "binary":
        if len(classes) != 2:
            raise ValueError(f"dataset {cfg['name']!r}: binary task but {len(classes)} label "
                             f"values {classes[:10].tolist()}")
        pos = cfg.get("positive")
        if pos is None:
            pos = classes[1]
        elif not np.isin(np.asarray([pos], dtype=classes.dtype), classes).all():
            raise ValueError(f"dataset {cfg['name']!r}: positive={pos!r} is not one of the "
                             f"labels {classes.tolist()}")
        pos = np.asarray(pos, dtype=classes.dtype)
        order = np.array([c for c in classes if c != pos] + [pos])
        return {r: np.where(y == pos, 1.0, -1.0) for r, y in ys.items()}, order
    return {r: np.searchsorted(classes, y).astype(np.int64) for r, y in ys.items()}, classes


def parse_all(cfg: Mapping, files: dict[str, list[Path]]) -> dict[str, np.ndarray]:
    """The arrays of every source of ``cfg`` from its cached ``files`` (role -> paths).

    Returns ``X_<role>`` and ``y_<role>`` per role (labels encoded as the
    schema says, categories one-hot encoded across roles) and ``classes`` (the
    sorted raw labels as strings; empty for regression).

    Raises
    ------
    SourceError
        A file does not parse or does not match its ``expect``.
    ValueError
        The labels do not fit the task or the label options.
    """
    dtype = np.dtype(cfg.get("dtype") or "float64").type
    feats, ys = {}, {}
    for role, src in cfg["sources"].items():
        try:
            feats[role], ys[role] = _parse_source(src, files[role], dtype)
        except formats.ParseError as e:
            raise SourceError(role, e) from e
    keep = cfg.get("keep_classes")
    if keep:
        for role in feats:
            y = ys[role]
            wanted = np.asarray(keep).astype(y.dtype) if y.dtype.kind in "fiu" else np.asarray(
                [str(k) for k in keep])
            mask = np.isin(y, wanted)
            feats[role] = feats[role][mask] if isinstance(feats[role], np.ndarray) else (
                feats[role].loc[mask].reset_index(drop=True))
            ys[role] = y[mask]
    roles = list(feats)
    tables = [f for f in feats.values() if not isinstance(f, np.ndarray)]
    if tables and all(pd.api.types.is_numeric_dtype(t[c]) for t in tables for c in t.columns):
        feats = {r: f if isinstance(f, np.ndarray) else f.to_numpy(dtype=dtype)
                 for r, f in feats.items()}
    elif tables:
        fit_all = cfg.get("categorical_fit", "train") == "all"
        fit = [i for i, r in enumerate(roles) if fit_all or r in ("train", "all")]
        arrays, _ = formats.one_hot([feats[r] for r in roles], fit_on=fit, dtype=dtype)
        feats = dict(zip(roles, arrays))
    labels, classes = _encode_labels(cfg, ys)
    out: dict[str, np.ndarray] = {"classes": np.asarray(classes).astype(str)}
    for role in roles:
        out[f"X_{role}"] = np.ascontiguousarray(feats[role], dtype=dtype)
        out[f"y_{role}"] = labels[role]
    return out
