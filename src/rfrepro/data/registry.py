"""Registry of downloadable datasets: one YAML config per dataset in ``conf/dataset/``.

Config schema (plain YAML keys; ``null`` where not needed)::

    name: cpusmall                 # = the file name conf/dataset/<name>.yaml
    task: regression               # regression | binary | multiclass
    sources:                       # role -> file; roles: train and test, or all
      train:
        url: https://HOST/PATH     # official URL; cached at <data_dir>/raw/HOST/PATH
        file: null                 # instead of url: a path under <data_dir>/raw/ that
                                   #   the user places by hand (no public URL known)
        format: libsvm             # libsvm | csv | tsv | idx | mat
        sha256: null               # only where the official file's digest is known
        member: null               # zip archives: member name or glob; several
                                   #   matches are read in order and concatenated
        expect: {n_rows: 8192, n_features: 12, n_classes: null}
        # ...format options, see below
    split: {kind: random, test_size: 0.2, seed: 0, stratify: false}
                                   # official: the train/test files as given
                                   # random: pool every row, draw a test part
                                   #   (test_size: a fraction or a row count)
                                   # none: pool every row into the training part
                                   # kfold: {kind: kfold, folds: 10, fold: 0, seed: 0,
                                   #   pool: all}: k-fold cross-validation; the rows
                                   #   of fold `fold` are the test part, the other
                                   #   folds the training part; stratified for
                                   #   classification; pool: all = the union of the
                                   #   files (default), train = the train file only
                                   # (default: official with a test file, else
                                   #   random 0.2, seed 0)
    preprocess: zscore             # zscore | minmax | none, fitted on train only
    subsample: {n_train: null, n_test: null, seed: 0}   # null = all rows
    dtype: float64                 # float32 halves memory for the big sets
    positive: null                 # binary: raw label that becomes +1 (default:
                                   #   the larger of the two sorted raw labels)
    keep_classes: null             # keep only rows with these raw labels
    categorical_fit: train         # one-hot categories from: train | all
    alternatives: []               # other configs (names or inline dicts) tried in
                                   #   order when this one is unavailable; a config
                                   #   without sources is a pure alias
    note: "..."                    # provenance, substitutions, doubts
    mirror: null                   # optional mirror base, used when the caller
                                   #   passes none (then $RFREPRO_MIRROR)

Format options (per source):

- ``libsvm``: ``n_features`` (fixes the width so train and test agree),
  ``zero_based`` (default false: LIBSVM indexes features from 1).
- ``csv`` / ``tsv``: ``delimiter`` ("," / tab by default; "whitespace" for runs of
  blanks), ``header``, ``label`` (position or header name), ``drop``,
  ``categorical`` (columns to one-hot encode), ``na_values``, ``dropna``,
  ``skip_rows``, ``label_strip``.
- ``idx``: ``labels_url`` / ``labels_sha256`` for the label file, ``divide_by``.
- ``mat``: ``x_key``, ``y_key``, ``divide_by``.

``expect`` is checked on each file as parsed (rows after ``dropna``, feature
columns before one-hot encoding, distinct raw labels before ``keep_classes``); a
file that does not match is treated as corrupt: deleted, fetched once more, and
a ``ValueError`` naming it if it still does not match.

When a config is loaded in place of the requested one (an alternative), the
requested config's ``split``, ``subsample`` and ``preprocess`` apply, so an
experiment's overrides carry over; ``Dataset.meta["variant"]`` names the config
that was actually loaded.

Labels: binary -> {-1.0, +1.0}; multiclass -> int64 codes 0..c-1 (sorted raw
labels over all files); regression -> float64.

Parsed arrays are cached at ``<data_dir>/parsed/<name>-<key>.npz``, the key
hashing only what changes the parse (sources, task, dtype, label options), so
different splits or subsamples reuse one parse.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from rfrepro.data import download, formats
from rfrepro.data.dataset import TASKS, Dataset
from rfrepro.data.preprocess import PREPROCESSING, preprocess
from rfrepro.layout import conf_dir

__all__ = [
    "DatasetUnavailable",
    "conf_dir",
    "get_dataset_config",
    "list_datasets",
    "load_file_dataset",
    "check_kfold",
    "kfold_indices",
    "parsed_cache_path",
    "source_files",
    "validate_config",
]

log = logging.getLogger(__name__)

DatasetUnavailable = download.DatasetUnavailable

# Bump when the parsed arrays change for the same config (parser fixes), so that
# stale caches are not reused.
PARSE_VERSION = 1

SOURCE_KEYS = {"url", "file", "format", "sha256", "member", "expect"}
FORMAT_OPTIONS = {
    "libsvm": {"n_features", "zero_based"},
    "csv": {"delimiter", "header", "label", "drop", "categorical", "na_values", "dropna",
            "skip_rows", "label_strip"},
    "idx": {"labels_url", "labels_sha256", "divide_by"},
    "mat": {"x_key", "y_key", "divide_by"},
}
FORMAT_OPTIONS["tsv"] = FORMAT_OPTIONS["csv"]
EXPECT_KEYS = {"n_rows", "n_features", "n_classes"}
SPLIT_KINDS = ("official", "random", "none", "kfold")
#: which files the folds of a kfold split are drawn from
KFOLD_POOLS = ("all", "train")
ROLE_SETS = ({"train"}, {"train", "test"}, {"all"})
# keys of a dataset config that change the parsed arrays (the parsed-cache key)
PARSE_KEYS = ("name", "task", "sources", "dtype", "positive", "keep_classes",
              "categorical_fit")


# ----------------------------------------------------------------------------- configs




def list_datasets() -> list[str]:
    """Names of every dataset config in ``conf/dataset/`` (generated ones included), sorted."""
    folder = conf_dir() / "dataset"
    return sorted(p.stem for p in folder.glob("*.yaml"))


def get_dataset_config(name: str) -> dict:
    """Read ``conf/dataset/<name>.yaml`` as a plain dict.

    Raises
    ------
    ValueError
        ``name`` is not a dataset config; the message lists the valid names.
    """
    import yaml

    path = conf_dir() / "dataset" / f"{name}.yaml"
    if not isinstance(name, str) or "/" in name or not path.is_file():
        raise ValueError(f"unknown dataset {name!r}; valid datasets: {', '.join(list_datasets())}")
    with open(path, encoding="utf-8") as f:
        cfg = yaml.safe_load(f) or {}
    cfg.setdefault("name", name)
    return cfg


def plain_config(cfg) -> dict:
    """A dataset config (a mapping or an OmegaConf node, interpolations resolved) as a plain dict.

    A copy: the callers fill in defaults and variants without changing the
    caller's config.
    """
    try:
        from omegaconf import OmegaConf

        if OmegaConf.is_config(cfg):
            return OmegaConf.to_container(cfg, resolve=True)
    except ImportError:  # pragma: no cover
        pass
    return copy.deepcopy(dict(cfg))


def validate_config(cfg: Mapping) -> None:
    """Check a dataset config's structure; raise ``ValueError`` naming what is wrong.

    Only the keys this module reads are checked strictly (sources and their
    options); other top-level keys (e.g. per-dataset hyper-parameter
    fallbacks) are left to their users.
    """
    name = cfg.get("name")
    if not name or not isinstance(name, str):
        raise ValueError(f"dataset config without a name: {dict(cfg)!r:.200}")
    where = f"dataset {name!r}"
    if cfg.get("task") not in TASKS:
        raise ValueError(f"{where}: task={cfg.get('task')!r}; valid tasks: {', '.join(TASKS)}")
    if cfg.get("preprocess", "none") not in PREPROCESSING:
        raise ValueError(f"{where}: preprocess={cfg.get('preprocess')!r}; "
                         f"valid values: {', '.join(PREPROCESSING)}")
    if str(cfg.get("dtype") or "float64") not in ("float32", "float64"):
        raise ValueError(f"{where}: dtype={cfg.get('dtype')!r}; valid values: float32, float64")
    if cfg.get("categorical_fit", "train") not in ("train", "all"):
        raise ValueError(f"{where}: categorical_fit={cfg.get('categorical_fit')!r}; "
                         "valid values: train, all")
    split = cfg.get("split") or {}
    if split.get("kind", "random") not in SPLIT_KINDS:
        raise ValueError(f"{where}: split.kind={split.get('kind')!r}; "
                         f"valid kinds: {', '.join(SPLIT_KINDS)}")
    if split.get("kind") == "kfold":
        check_kfold(split, where)
    sources = cfg.get("sources")
    if not sources:
        if not cfg.get("alternatives"):
            raise ValueError(f"{where}: needs sources (or alternatives, for an alias)")
        return
    if not isinstance(sources, Mapping) or set(sources) not in ROLE_SETS:
        raise ValueError(f"{where}: sources must have the roles train [+ test] or all, "
                         f"got {sorted(sources) if isinstance(sources, Mapping) else sources!r}")
    if split.get("kind") == "official" and "test" not in sources:
        raise ValueError(f"{where}: split.kind=official needs a test source")
    for role, src in sources.items():
        w = f"{where}, source {role!r}"
        if not isinstance(src, Mapping):
            raise ValueError(f"{w}: must be a mapping, got {src!r}")
        fmt = src.get("format")
        if fmt not in FORMAT_OPTIONS:
            raise ValueError(f"{w}: unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
        unknown = set(src) - SOURCE_KEYS - FORMAT_OPTIONS[fmt]
        if unknown:
            raise ValueError(f"{w}: unknown keys {sorted(unknown)} for format {fmt!r}; "
                             f"valid: {sorted(SOURCE_KEYS | FORMAT_OPTIONS[fmt])}")
        if bool(src.get("url")) == bool(src.get("file")):
            raise ValueError(f"{w}: give exactly one of url (downloadable) or file (placed by hand)")
        if src.get("url"):
            download.cache_path(src["url"], "data")  # raises ValueError on a malformed URL
        if fmt == "idx" and not src.get("labels_url"):
            raise ValueError(f"{w}: format idx needs labels_url")
        bad = set(src.get("expect") or {}) - EXPECT_KEYS
        if bad:
            raise ValueError(f"{w}: unknown expect keys {sorted(bad)}; valid: {sorted(EXPECT_KEYS)}")


FORMATS = formats.FORMATS


# ----------------------------------------------------------------------------- files


def _source_urls(src: Mapping) -> list[tuple[str, str | None]]:
    """(url, sha256) of every file a source reads."""
    out = [(src["url"], src.get("sha256"))]
    if src.get("labels_url"):
        out.append((src["labels_url"], src.get("labels_sha256")))
    return out


def _manual_path(src: Mapping, data_dir: str | os.PathLike) -> Path:
    rel = Path(src["file"])
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"source file {src['file']!r} must be a relative path under raw/")
    return Path(data_dir) / "raw" / rel


def source_files(cfg: Mapping, data_dir: str | os.PathLike = "data") -> dict[str, list[Path]]:
    """Cache paths of every file each source of ``cfg`` reads (whether present or not)."""
    out = {}
    for role, src in cfg["sources"].items():
        if src.get("url"):
            out[role] = [download.cache_path(u, data_dir) for u, _ in _source_urls(src)]
        else:
            out[role] = [_manual_path(src, data_dir)]
    return out


def _fetch_source(src: Mapping, *, data_dir, mirror, fetch_kw) -> list[Path]:
    if not src.get("url"):
        path = _manual_path(src, data_dir)
        if not path.is_file():
            raise DatasetUnavailable(
                f"dataset file unavailable: no public URL is known for {src['file']}\n"
                f"way out: place the file at {path}", urls=[], path=path)
        return [path]
    return [download.fetch(u, data_dir=data_dir, mirror=mirror, sha256=sha, **fetch_kw)
            for u, sha in _source_urls(src)]


# ----------------------------------------------------------------------------- parsing


class _SourceError(Exception):
    def __init__(self, role: str, error: Exception):
        super().__init__(str(error))
        self.role = role
        self.error = error


def _streams(path: Path, member: str | None) -> list:
    if member is None:
        return [download.open_decompressed(path)]
    try:
        names = download.zip_members(path, member)
        if not names:
            raise formats.ParseError(f"zip archive has no member matching {member!r}")
        return [download.open_zip_member(path, n) for n in names]
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise formats.ParseError(f"not a readable zip archive: {e}") from e


def _parse_source(src: Mapping, paths: list[Path], dtype):
    """Features (array, or DataFrame for tables) and raw labels of one source."""
    fmt = src["format"]
    opts = {k: v for k, v in src.items() if k in FORMAT_OPTIONS[fmt]}
    streams = _streams(paths[0], src.get("member"))
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
            with download.open_decompressed(paths[1]) as f:
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


def _parse_all(cfg: Mapping, files: dict[str, list[Path]]) -> dict[str, np.ndarray]:
    dtype = np.dtype(cfg.get("dtype") or "float64").type
    feats, ys = {}, {}
    for role, src in cfg["sources"].items():
        try:
            feats[role], ys[role] = _parse_source(src, files[role], dtype)
        except formats.ParseError as e:
            raise _SourceError(role, e) from e
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


# ----------------------------------------------------------------------------- parsed cache


def parsed_cache_path(cfg: Mapping, data_dir: str | os.PathLike = "data") -> Path:
    """``<data_dir>/parsed/<name>-<key>.npz``; the key hashes what changes the parse."""
    keyed = {k: cfg.get(k) for k in PARSE_KEYS}
    keyed["_version"] = PARSE_VERSION
    blob = json.dumps(keyed, sort_keys=True, default=str).encode()
    return Path(data_dir) / "parsed" / f"{cfg['name']}-{hashlib.sha256(blob).hexdigest()[:12]}.npz"


def _read_npz(path: Path, roles) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    needed = {"classes"} | {f"{p}_{r}" for r in roles for p in ("X", "y")}
    if not needed <= set(arrays):
        raise ValueError(f"lacks arrays {sorted(needed - set(arrays))}")
    return arrays


def _write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    from rfrepro.atomic import atomic_replace

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    atomic_replace(path, write)


def _parsed(cfg: Mapping, *, data_dir, mirror, fetch_kw) -> dict[str, np.ndarray]:
    """The parsed arrays of one (non-alias) config: from the cache, else fetched and parsed.

    The cache holds the sha256 of the files it was parsed from and is used only
    while they are the same bytes (a replaced file is parsed again).
    """
    path = parsed_cache_path(cfg, data_dir)
    roles = list(cfg["sources"])
    files = {role: _fetch_source(src, data_dir=data_dir, mirror=mirror, fetch_kw=fetch_kw)
             for role, src in cfg["sources"].items()}
    shas = [file_sha256(p) for ps in files.values() for p in ps]
    if path.is_file():
        try:
            arrays = _read_npz(path, roles)
            if arrays.pop("sources_sha256", np.array([])).tolist() == shas:
                return arrays
            log.info("parsed cache %s was made from other bytes; parsing again", path)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
            # a crash mid-write cannot leave a partial file (temp + rename), but
            # a disk problem or a manual edit can: parse again rather than fail
            log.warning("parsed cache %s is unreadable (%s); parsing again", path, e)
        path.unlink(missing_ok=True)
    try:
        arrays = _parse_all(cfg, files)
    except _SourceError as first:
        src = cfg["sources"][first.role]
        names = ", ".join(str(p) for p in files[first.role])
        if not src.get("url"):
            raise ValueError(f"dataset {cfg['name']!r}: {names} failed to parse: "
                             f"{first.error}") from first.error
        log.warning("%s failed to parse (%s); fetching it again", names, first.error)
        for p in files[first.role]:
            p.unlink(missing_ok=True)
        try:
            files[first.role] = _fetch_source(src, data_dir=data_dir, mirror=mirror,
                                              fetch_kw=fetch_kw)
        except DatasetUnavailable as e:
            # the bad copy is gone and no good one can be had: the data is unavailable
            raise DatasetUnavailable(
                f"{names} failed to parse ({first.error}) and was deleted; "
                f"fetching it again failed:\n{e}", urls=e.urls, path=e.path) from e
        try:
            arrays = _parse_all(cfg, files)
        except _SourceError as second:
            bad = ", ".join(str(p) for p in files[second.role])
            raise ValueError(
                f"dataset {cfg['name']!r}: {bad} failed to parse after a fresh fetch: "
                f"{second.error} (first attempt: {first.error})") from second.error
        shas = [file_sha256(p) for ps in files.values() for p in ps]
    _write_npz(path, {**arrays, "sources_sha256": np.array(shas)})
    return arrays


# ----------------------------------------------------------------------------- loading


def _variants(cfg: dict, depth: int = 0) -> list[dict]:
    """The configs to try for ``cfg``, in order: itself (if it has sources), then its alternatives."""
    if depth > 5:
        raise ValueError(f"dataset {cfg.get('name')!r}: alternatives nest too deep (a cycle?)")
    out = [cfg] if cfg.get("sources") else []
    for alt in cfg.get("alternatives") or []:
        alt_cfg = get_dataset_config(alt) if isinstance(alt, str) else plain_config(alt)
        validate_config(alt_cfg)
        out += _variants(alt_cfg, depth + 1)
    return out


def _default_split(cfg: Mapping) -> dict:
    if "test" in cfg["sources"]:
        return {"kind": "official"}
    return {"kind": "random", "test_size": 0.2, "seed": 0}


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_kfold(split: Mapping, where: str) -> tuple[int, int, int]:
    """Check a ``kind: kfold`` split; return its (folds, fold, seed).

    ``folds`` and ``fold`` must be given (no default test fold): integers with
    folds >= 2 and 0 <= fold < folds.
    """
    folds, fold, seed = split.get("folds"), split.get("fold"), split.get("seed", 0)
    if not (_is_int(folds) and folds >= 2 and _is_int(fold) and 0 <= fold < folds):
        raise ValueError(f"{where}: split.kind='kfold' needs integers folds >= 2 and "
                         f"0 <= fold < folds, got folds={folds!r}, fold={fold!r}")
    if not _is_int(seed):
        raise ValueError(f"{where}: split.seed must be an integer, got {seed!r}")
    if split.get("pool", "all") not in KFOLD_POOLS:
        raise ValueError(f"{where}: split.pool={split.get('pool')!r}; "
                         f"valid values: {', '.join(KFOLD_POOLS)}")
    return int(folds), int(fold), int(seed)


def kfold_splitter(task: str, folds: int, seed: int):
    """The shuffled k-fold splitter for ``task``: by label for classification, plain for regression.

    Stratified folds keep the class proportions up to one row per class, so
    no fold lacks a class that the others have; regression has no classes.
    One rule for every k-fold split of the project: the dataset split and the
    hyper-parameter search.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    return (KFold if task == "regression" else StratifiedKFold)(n_splits=folds, shuffle=True,
                                                               random_state=seed)


def kfold_indices(y: np.ndarray, task: str, folds: int, fold: int, seed: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, test rows) of fold ``fold`` of a shuffled k-fold split (:func:`kfold_splitter`).

    The folds depend on ``seed`` and the labels only, so the ``folds`` runs of
    one seed partition the rows.
    """
    if len(y) < folds:
        raise ValueError(f"kfold split: {folds} folds need at least {folds} rows, got {len(y)}")
    cv = kfold_splitter(task, folds, seed)
    for i, (train, test) in enumerate(cv.split(np.zeros((len(y), 1)), y)):
        if i == fold:
            return train, test
    raise ValueError(f"kfold split: fold={fold} not in [0, {folds})")  # pragma: no cover


def _split(arrays: dict, roles: list[str], split: Mapping, task: str, name: str):
    kind = split.get("kind", "random")
    if kind == "official":
        if "test" not in roles:
            raise ValueError(f"dataset {name!r}: split.kind=official but it has no test file")
        return arrays["X_train"], arrays["y_train"], arrays["X_test"], arrays["y_test"]
    if kind == "kfold":
        folds, fold, seed = check_kfold(split, f"dataset {name!r}")
        if split.get("pool", "all") == "train":
            if "train" not in roles:
                raise ValueError(f"dataset {name!r}: split.pool=train but it has no train file")
            roles = ["train"]
        X = np.concatenate([arrays[f"X_{r}"] for r in roles]) if len(roles) > 1 else arrays[f"X_{roles[0]}"]
        y = np.concatenate([arrays[f"y_{r}"] for r in roles]) if len(roles) > 1 else arrays[f"y_{roles[0]}"]
        train, test = kfold_indices(y, task, folds, fold, seed)
        return X[train], y[train], X[test], y[test]
    X = np.concatenate([arrays[f"X_{r}"] for r in roles]) if len(roles) > 1 else arrays[f"X_{roles[0]}"]
    y = np.concatenate([arrays[f"y_{r}"] for r in roles]) if len(roles) > 1 else arrays[f"y_{roles[0]}"]
    if kind == "none":
        return X, y, None, None
    from sklearn.model_selection import train_test_split

    size = split.get("test_size", 0.2)
    size = int(size) if isinstance(size, int) or (isinstance(size, float) and size >= 1) else float(size)
    strat = y if split.get("stratify") and task != "regression" else None
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=size, random_state=int(split.get("seed", 0)),
                                          stratify=strat)
    return Xtr, ytr, Xte, yte


def _subsample(X, y, n, rng, name: str, part: str):
    if n is None or X is None:
        return X, y
    n = int(n)
    if n > X.shape[0]:
        raise ValueError(f"dataset {name!r}: subsample n_{part}={n} exceeds the "
                         f"{X.shape[0]} rows of the {part} split")
    # sorted, so a subsample keeps the file order (e.g. COIL's rows grouped by object)
    idx = np.sort(rng.permutation(X.shape[0])[:n])
    return X[idx], y[idx]


def _load_variant(var: dict, top: Mapping, *, data_dir, mirror, fetch_kw) -> Dataset:
    arrays = _parsed(var, data_dir=data_dir, mirror=mirror, fetch_kw=fetch_kw)
    roles = list(var["sources"])
    split = top.get("split") or var.get("split") or _default_split(var)
    Xtr, ytr, Xte, yte = _split(arrays, roles, split, var["task"], var["name"])
    sub = top.get("subsample") or var.get("subsample") or {}
    seed = int(sub.get("seed") or 0)
    rng = np.random.default_rng(seed)
    Xtr, ytr = _subsample(Xtr, ytr, sub.get("n_train"), rng, top["name"], "train")
    Xte, yte = _subsample(Xte, yte, sub.get("n_test"), rng, top["name"], "test")
    urls = [u for src in var["sources"].values() if src.get("url") for u, _ in _source_urls(src)]
    files = [str(p.relative_to(data_dir)) for ps in source_files(var, data_dir).values() for p in ps]
    meta = {
        "variant": var["name"],
        "source_urls": " ".join(dict.fromkeys(urls)),
        "files": " ".join(dict.fromkeys(files)),
        "split": str(split.get("kind", "random")),
        "n_train": int(Xtr.shape[0]),
        "n_test": 0 if Xte is None else int(Xte.shape[0]),
        "subsample_seed": seed,
        "dtype": str(Xtr.dtype),
    }
    if split.get("kind") == "kfold":
        meta.update(folds=int(split["folds"]), fold=int(split["fold"]),
                    split_seed=int(split.get("seed", 0)), pool=str(split.get("pool", "all")))
    if var["task"] != "regression":
        meta["n_classes"] = int(len(arrays["classes"]))
        meta["classes"] = ",".join(arrays["classes"].tolist())
    if var.get("note"):
        meta["note"] = " ".join(str(var["note"]).split())
    ds = Dataset(top["name"], var["task"], Xtr, ytr, Xte, yte, meta)
    how = top.get("preprocess") or var.get("preprocess") or "none"
    return preprocess(ds, how)


def load_file_dataset(
    cfg: Mapping,
    *,
    data_dir: str | os.PathLike = "data",
    mirror: str | None = None,
    **fetch_kw,
) -> Dataset:
    """Load a downloadable dataset described by a ``conf/dataset`` config.

    Parameters
    ----------
    cfg : mapping
        The dataset config (schema in this module's docstring).
    data_dir : str or path-like
        Cache root: raw files under ``raw/``, parsed arrays under ``parsed/``.
    mirror : str, optional
        Mirror base URL (``http://`` or ``file://``); else the config's ``mirror``
        key, else ``$RFREPRO_MIRROR``.
    **fetch_kw
        Passed to :func:`rfrepro.data.download.fetch` (timeout, retries, backoff,
        progress).

    Returns
    -------
    Dataset
        Split, subsampled and preprocessed; ``meta`` says which variant loaded,
        from which URLs and files, and the sizes after subsampling.

    Raises
    ------
    DatasetUnavailable
        No variant's files could be had; the message names the URLs tried and
        how to provide the files.
    ValueError
        A bad config, a checksum mismatch, or a file that does not parse even
        after a fresh fetch.
    """
    top = plain_config(cfg)
    if "generator" in top:
        raise ValueError(f"dataset {top.get('name')!r} is generated; load it with "
                         "rfrepro.data.load_dataset")
    validate_config(top)
    mirror = mirror or top.get("mirror")
    return _first_available(top, lambda var: _load_variant(var, top, data_dir=data_dir, mirror=mirror,
                                                            fetch_kw=fetch_kw))


def _first_available(top: Mapping, attempt):
    """``attempt(variant)`` for the first variant of ``top`` whose data can be had."""
    failures = []
    for var in _variants(top):
        try:
            return attempt(var)
        except DatasetUnavailable as e:
            failures.append((var["name"], e))
    if not failures:
        raise ValueError(f"dataset {top['name']!r} has no sources and no alternatives")
    if len(failures) == 1:
        raise failures[0][1]
    text = "\n\n".join(f"[{name}] {e}" for name, e in failures)
    raise DatasetUnavailable(
        f"dataset {top['name']!r}: none of its variants "
        f"({', '.join(n for n, _ in failures)}) is available\n\n{text}",
        urls=[u for _, e in failures for u in e.urls], path=failures[0][1].path)


def file_sha256(path: Path) -> str:
    """sha256 of ``path``, remembered beside it (``<file>.sha256``) while size and mtime hold."""
    path = Path(path)
    st = path.stat()
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    side = path.with_name(path.name + ".sha256")
    try:
        digest, seen = side.read_text().split(" ", 1)
        if seen.strip() == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    digest = download.sha256_file(path)
    try:
        from rfrepro.atomic import atomic_write_text

        atomic_write_text(side, f"{digest} {stamp}\n")
    except OSError:  # a read-only data folder: just do not remember
        pass
    return digest


def fingerprint_file_dataset(cfg: Mapping, *, data_dir: str | os.PathLike = "data",
                             mirror: str | None = None) -> dict:
    """Which variant of ``cfg`` loads and the sha256 of every file it reads.

    Fetches the files when they are not cached yet (the run needs them anyway);
    raises :class:`DatasetUnavailable` as :func:`load_file_dataset` does.
    """
    top = plain_config(cfg)
    validate_config(top)
    mirror = mirror or top.get("mirror")

    def attempt(var):
        paths = [p for src in var["sources"].values()
                 for p in _fetch_source(src, data_dir=data_dir, mirror=mirror, fetch_kw={})]
        return {"variant": var["name"],
                "files": {Path(p).relative_to(data_dir).as_posix(): file_sha256(p) for p in paths}}

    return _first_available(top, attempt)
