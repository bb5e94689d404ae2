"""Datasets: generated ones (no download) and downloadable ones (configs in ``conf/dataset/``).

Every dataset is described by a config ``conf/dataset/<name>.yaml``;
:func:`load_dataset` turns one into a :class:`Dataset`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping

import numpy as np

from rfrepro.data.dataset import TASKS, Dataset
from rfrepro.data.download import DatasetUnavailable
from rfrepro.data.preprocess import preprocess
from rfrepro.data.synthetic import BAYES_RULES, GENERATORS, realised_bayes_error

__all__ = ["TASKS", "Dataset", "DatasetUnavailable", "fingerprint", "load_dataset"]


@functools.lru_cache(maxsize=8)
def _generated(cfg_json: str, seed: int) -> Dataset:
    cfg = json.loads(cfg_json)
    name = cfg["generator"]
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; valid generators: {', '.join(GENERATORS)}")
    gen = GENERATORS[name]
    params = dict(cfg.get("params") or {})
    split = cfg.get("split")
    if split:
        return _generated_kfold(cfg, gen, params, split, seed)
    Xtr, ytr = gen(int(cfg["n_train"]), random_state=seed, **params)
    Xte = yte = None
    if int(cfg.get("n_test") or 0) > 0:
        # one fixed test set shared by every run: generated once per process
        Xte, yte = _generated_test(name, json.dumps(params, sort_keys=True), int(cfg["n_test"]),
                                   int(cfg.get("test_seed", 2**31 - 1)))
    Xva = yva = None
    if int(cfg.get("n_val") or 0) > 0:
        # a validation sample of its own, tied to the run seed but never equal to the training one
        Xva, yva = gen(int(cfg["n_val"]), random_state=np.random.RandomState([seed, 1]), **params)
    meta = {"generator": name, "train_seed": seed, "test_seed": cfg.get("test_seed")}
    if Xte is not None and name in BAYES_RULES:
        # the test sample's own label noise: the Bayes classifier's error on exactly these points
        meta["test_bayes_error"] = _test_bayes_error(name, json.dumps(params, sort_keys=True), int(cfg["n_test"]),
                                                     int(cfg.get("test_seed", 2**31 - 1)))
    if cfg.get("bayes_error") is not None:
        meta["bayes_error"] = float(cfg["bayes_error"])
    ds = Dataset(cfg["name"], cfg["task"], Xtr, ytr, Xte, yte, meta, Xva, yva)
    return preprocess(ds, cfg.get("preprocess", "none"))


def _generated_kfold(cfg: dict, gen, params: dict, split: dict, seed: int) -> Dataset:
    """A generated dataset under a k-fold split: one sample of ``n_train`` rows, then fold ``fold``.

    The sample is drawn with ``split.seed`` (not the run seed), so the runs of
    the ``folds`` folds partition one and the same sample; ``n_test`` is not
    used (the held-out fold is the test part). A validation sample (``n_val``)
    is drawn as without a split.
    """
    from rfrepro.data.splits import check_kfold, kfold_indices

    where = f"dataset {cfg['name']!r}"
    if split.get("kind") != "kfold":
        raise ValueError(f"{where}: generated datasets take split.kind=kfold or no split, "
                         f"got split.kind={split.get('kind')!r}")
    folds, fold, split_seed = check_kfold(split, where)
    X, y = gen(int(cfg["n_train"]), random_state=split_seed, **params)
    train, test = kfold_indices(y, cfg["task"], folds, fold, split_seed)
    Xva = yva = None
    if int(cfg.get("n_val") or 0) > 0:
        Xva, yva = gen(int(cfg["n_val"]), random_state=np.random.RandomState([seed, 1]), **params)
    meta = {"generator": cfg["generator"], "train_seed": split_seed, "split": "kfold",
            "folds": folds, "fold": fold, "split_seed": split_seed, "n_rows": int(len(y))}
    if cfg.get("bayes_error") is not None:
        meta["bayes_error"] = float(cfg["bayes_error"])
    ds = Dataset(cfg["name"], cfg["task"], X[train], y[train], X[test], y[test], meta, Xva, yva)
    return preprocess(ds, cfg.get("preprocess", "none"))


@functools.lru_cache(maxsize=4)
def _test_bayes_error(name: str, params_json: str, n: int, seed: int) -> float:
    X, y = _generated_test(name, params_json, n, seed)
    return realised_bayes_error(name, X, y, **json.loads(params_json))


@functools.lru_cache(maxsize=4)
def _generated_test(name: str, params_json: str, n: int, seed: int):
    return GENERATORS[name](n, random_state=seed, **json.loads(params_json))


def load_dataset(
    cfg: Mapping,
    *,
    seed: int = 0,
    data_dir: str = "data",
    mirror: str | None = None,
    data_fingerprint: dict | None = None,
) -> Dataset:
    """Load the dataset a ``conf/dataset`` entry describes.

    Generated datasets draw their training sample with ``seed`` (the run's
    seed) and one fixed test sample (``test_seed``); with a ``split`` of kind
    ``kfold`` they draw one sample of ``n_train`` rows with ``split.seed`` and
    take fold ``split.fold`` of it as the test part. Downloaded datasets are
    fetched into ``data_dir`` (through ``mirror`` when given), parsed once and
    cached; see :mod:`rfrepro.data.registry`. ``data_fingerprint`` (the
    files' sha256, see :func:`fingerprint`) keys the in-process memo, so a
    replaced file is loaded again.
    """
    from rfrepro.data.schema import plain_config

    cfg = plain_config(cfg)
    if "generator" in cfg:
        return _generated(json.dumps(cfg, sort_keys=True), int(seed))
    return _from_files(json.dumps(cfg, sort_keys=True), str(data_dir), mirror,
                       json.dumps(data_fingerprint, sort_keys=True))


@functools.lru_cache(maxsize=2)
def _from_files(cfg_json: str, data_dir: str, mirror: str | None, fingerprint_json: str) -> Dataset:
    # kept in memory so the runs of a sweep in one worker do not re-read the cache
    from rfrepro.data.registry import load_file_dataset

    return load_file_dataset(json.loads(cfg_json), data_dir=data_dir, mirror=mirror)


def fingerprint(cfg: Mapping, *, data_dir: str = "data", mirror: str | None = None) -> dict:
    """What a run reads, for its identity: ``{"generated": name}`` for generated data,
    else the variant that loads and the sha256 of each of its files.

    Remembered per process; an unavailable source raises
    :class:`DatasetUnavailable` (and is tried once per process).
    """
    from rfrepro.data.schema import plain_config

    cfg = plain_config(cfg)
    if "generator" in cfg:
        return {"generated": cfg["generator"]}
    return _fingerprint(json.dumps(cfg, sort_keys=True), str(data_dir), mirror)


_FINGERPRINTS: dict[tuple, tuple[dict | None, BaseException | None, list]] = {}


def _stamps(data_dir: str, fp: dict) -> list:
    import os

    out = []
    for rel in fp.get("files", {}):
        try:
            st = os.stat(os.path.join(data_dir, rel))
            out.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((rel, None, None))
    return out


def _fingerprint(cfg_json: str, data_dir: str, mirror: str | None) -> dict:
    # remembered per process: an unavailable source is tried once; a found one is
    # re-checked by size and mtime, so a changed file gets a new fingerprint
    from rfrepro.data.sources import fingerprint_file_dataset

    key = (cfg_json, data_dir, mirror)
    hit = _FINGERPRINTS.get(key)
    if hit is not None:
        fp, err, stamps = hit
        if err is not None:
            raise err
        if _stamps(data_dir, fp) == stamps:
            return fp
    try:
        fp = fingerprint_file_dataset(json.loads(cfg_json), data_dir=data_dir, mirror=mirror)
    except DatasetUnavailable as e:
        _FINGERPRINTS[key] = (None, e, [])
        raise
    _FINGERPRINTS[key] = (fp, None, _stamps(data_dir, fp))
    return fp
