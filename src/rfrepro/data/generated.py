"""Loading a generated dataset (a config with a ``generator``): drawn, never downloaded.

The training sample is drawn with the run's seed; the test sample is one fixed
draw (``test_seed``) shared by every run, generated once per process; with a
``split`` of kind ``kfold`` one sample of ``n_train`` rows is drawn with
``split.seed`` and fold ``split.fold`` of it is the test part.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from rfrepro.data.dataset import Dataset
from rfrepro.data.preprocess import preprocess
from rfrepro.data.spec import DatasetSpec
from rfrepro.data.synthetic import BAYES_RULES, GENERATORS, realised_bayes_error

__all__ = ["load_generated"]


@functools.lru_cache(maxsize=8)
def load_generated(spec: DatasetSpec, seed: int) -> Dataset:
    """The generated dataset ``spec`` describes, its training sample drawn with ``seed`` (memoised)."""
    cfg = spec.config
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
