"""The dataset config schema, its validation, and where configs are found: ``conf/dataset/<name>.yaml``.

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

Who does what with a config: :mod:`rfrepro.data.sources` (the files it needs,
fetching them, alternatives, fingerprints), :mod:`rfrepro.data.parse` (files to
arrays), :mod:`rfrepro.data.cache` (the parsed arrays, keyed by what changes the
parse, so different splits or subsamples reuse one parse),
:mod:`rfrepro.data.splits` (splits and subsamples) and
:mod:`rfrepro.data.registry` (all of it: a config to a ``Dataset``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from rfrepro.data import download, formats
from rfrepro.data.dataset import TASKS
from rfrepro.data.preprocess import PREPROCESSING
from rfrepro.data.splits import SPLIT_KINDS, check_kfold
from rfrepro.layout import conf_dir

__all__ = [
    "FORMAT_OPTIONS",
    "get_dataset_config",
    "list_datasets",
    "plain_config",
    "validate_config",
]

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
ROLE_SETS = ({"train"}, {"train", "test"}, {"all"})


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
            raise ValueError(f"{w}: unknown format {fmt!r}; valid formats: {', '.join(formats.FORMATS)}")
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
