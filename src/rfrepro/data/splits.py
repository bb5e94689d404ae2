"""Train/test splits and subsamples of parsed arrays, and the project's one k-fold rule.

A dataset config's ``split`` says how its parsed files become a training and a
test part (schema in :mod:`rfrepro.data.schema`): ``official`` (the files as
given), ``random`` (a seeded ``train_test_split`` of every row), ``none`` (every
row trains) or ``kfold`` (fold ``fold`` of a shuffled k-fold split is the test
part). The same k-fold splitter serves the hyper-parameter search.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = [
    "KFOLD_POOLS",
    "SPLIT_KINDS",
    "check_kfold",
    "default_split",
    "kfold_indices",
    "kfold_splitter",
    "split_arrays",
    "subsample",
]

SPLIT_KINDS = ("official", "random", "none", "kfold")
#: which files the folds of a kfold split are drawn from
KFOLD_POOLS = ("all", "train")


def default_split(cfg: Mapping) -> dict:
    """The split of a config that names none: official with a test file, else random 0.2, seed 0."""
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


def _pooled(arrays: Mapping[str, np.ndarray], roles: list[str]) -> tuple[np.ndarray, np.ndarray]:
    if len(roles) == 1:
        return arrays[f"X_{roles[0]}"], arrays[f"y_{roles[0]}"]
    return (np.concatenate([arrays[f"X_{r}"] for r in roles]),
            np.concatenate([arrays[f"y_{r}"] for r in roles]))


def split_arrays(arrays: Mapping[str, np.ndarray], roles: list[str], split: Mapping, task: str,
                 name: str):
    """(X_train, y_train, X_test, y_test) of parsed ``arrays`` (``X_<role>``, ``y_<role>``) under ``split``.

    The test part is ``None`` for ``kind: none``.
    """
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
        X, y = _pooled(arrays, roles)
        train, test = kfold_indices(y, task, folds, fold, seed)
        return X[train], y[train], X[test], y[test]
    X, y = _pooled(arrays, roles)
    if kind == "none":
        return X, y, None, None
    from sklearn.model_selection import train_test_split

    size = split.get("test_size", 0.2)
    size = int(size) if isinstance(size, int) or (isinstance(size, float) and size >= 1) else float(size)
    strat = y if split.get("stratify") and task != "regression" else None
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=size, random_state=int(split.get("seed", 0)),
                                          stratify=strat)
    return Xtr, ytr, Xte, yte


def subsample(X, y, n, rng: np.random.Generator, name: str, part: str):
    """``n`` rows of ``(X, y)`` drawn with ``rng``, in file order; all of them when ``n`` is None."""
    if n is None or X is None:
        return X, y
    n = int(n)
    if n > X.shape[0]:
        raise ValueError(f"dataset {name!r}: subsample n_{part}={n} exceeds the "
                         f"{X.shape[0]} rows of the {part} split")
    # sorted, so a subsample keeps the file order (e.g. COIL's rows grouped by object)
    idx = np.sort(rng.permutation(X.shape[0])[:n])
    return X[idx], y[idx]
