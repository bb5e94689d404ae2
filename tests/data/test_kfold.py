"""k-fold cross-validation splits: file datasets (union of the files) and generated ones."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.data import load_dataset
from rfrepro.data.registry import load_file_dataset
from rfrepro.data.splits import kfold_indices, kfold_splitter

FOLDS = 5
# 60 training + 25 test rows; feature 1 is the row id, feature 2 a per-row value;
# 3 classes with 50 / 25 / 10 rows in all
N_TRAIN, N_TEST = 60, 25


def _label(i: int) -> int:
    return 0 if i < 50 else (1 if i < 75 else 2)


def _rows(ids) -> str:
    return "".join(f"{_label(i)} 1:{i} 2:{(i * 7) % 13 + 0.5}\n" for i in ids)


@pytest.fixture
def toy(data_dir):
    """A multiclass dataset with an official train/test split, as files placed under raw/."""
    rng = np.random.RandomState(0)
    ids = rng.permutation(N_TRAIN + N_TEST)  # the files do not list the rows in class order
    raw = data_dir / "raw" / "toy"
    raw.mkdir(parents=True)
    (raw / "train").write_text(_rows(ids[:N_TRAIN]))
    (raw / "test").write_text(_rows(ids[N_TRAIN:]))

    def cfg(fold: int, *, seed: int = 0, preprocess: str = "none", **split) -> dict:
        return {
            "name": "toy", "task": "multiclass",
            "sources": {role: {"file": f"toy/{role}", "format": "libsvm", "n_features": 2}
                        for role in ("train", "test")},
            "split": {"kind": "kfold", "folds": FOLDS, "fold": fold, "seed": seed, **split},
            "preprocess": preprocess,
        }

    return cfg, ids


def _load(cfg, data_dir):
    return load_file_dataset(cfg, data_dir=data_dir)


def test_folds_partition_the_union_of_the_files(toy, data_dir):
    cfg, _ = toy
    tests = []
    for fold in range(FOLDS):
        ds = _load(cfg(fold), data_dir)
        tr, te = ds.X_train[:, 0].astype(int), ds.X_test[:, 0].astype(int)
        # the training part is exactly the other folds
        assert len(tr) + len(te) == N_TRAIN + N_TEST
        assert set(tr).isdisjoint(te)
        assert len(set(tr)) == len(tr)
        tests.append(te)
        assert ds.meta["split"] == "kfold" and ds.meta["fold"] == fold and ds.meta["folds"] == FOLDS
    everything = np.concatenate(tests)
    assert sorted(everything.tolist()) == list(range(N_TRAIN + N_TEST))  # every row tested once
    assert [len(t) for t in tests] == [17] * FOLDS                       # 85 / 5


def test_folds_are_stratified(toy, data_dir):
    cfg, _ = toy
    for fold in range(FOLDS):
        ds = _load(cfg(fold), data_dir)
        counts = np.bincount(ds.y_test, minlength=3)
        # 50 / 25 / 10 rows over 5 folds: 10 / 5 / 2 per fold
        np.testing.assert_array_equal(counts, [10, 5, 2])
        # labels stay attached to their rows
        np.testing.assert_array_equal(ds.y_test, [_label(i) for i in ds.X_test[:, 0].astype(int)])


def test_folds_are_deterministic_under_the_seed(toy, data_dir):
    cfg, _ = toy
    a = _load(cfg(2, seed=7), data_dir).X_test[:, 0]
    b = _load(cfg(2, seed=7), data_dir).X_test[:, 0]
    c = _load(cfg(2, seed=8), data_dir).X_test[:, 0]
    np.testing.assert_array_equal(a, b)
    assert set(a.tolist()) != set(c.tolist())


def test_pool_train_uses_the_train_file_only(toy, data_dir):
    cfg, ids = toy
    seen = []
    for fold in range(FOLDS):
        ds = _load(cfg(fold, pool="train"), data_dir)
        assert ds.X_train.shape[0] + ds.X_test.shape[0] == N_TRAIN
        seen.append(ds.X_test[:, 0].astype(int))
        assert ds.meta["pool"] == "train"
    assert sorted(np.concatenate(seen).tolist()) == sorted(ids[:N_TRAIN].tolist())


def test_zscore_is_fitted_on_the_training_folds_only(toy, data_dir):
    cfg, _ = toy
    raw = _load(cfg(1), data_dir)
    ds = _load(cfg(1, preprocess="zscore"), data_dir)
    mean, std = raw.X_train.mean(0), raw.X_train.std(0)
    np.testing.assert_allclose(ds.X_train.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(ds.X_train.std(0), 1.0, atol=1e-12)
    np.testing.assert_allclose(ds.X_test, (raw.X_test - mean) / std, atol=1e-12)
    # the held-out fold is not centred by its own statistics
    assert np.abs(ds.X_test.mean(0)).max() > 1e-3


@pytest.mark.parametrize(("split", "message"), [
    ({"kind": "kfold", "fold": 0}, "split.kind='kfold' needs integers folds >= 2"),
    ({"kind": "kfold", "folds": 10}, "split.kind='kfold' needs integers folds >= 2"),
    ({"kind": "kfold", "folds": 1, "fold": 0}, "folds=1"),
    ({"kind": "kfold", "folds": 10, "fold": 10}, "fold=10"),
    ({"kind": "kfold", "folds": 10, "fold": -1}, "fold=-1"),
    ({"kind": "kfold", "folds": 10, "fold": 0, "pool": "test"}, "split.pool='test'; valid values: all, train"),
])
def test_bad_kfold_splits(toy, data_dir, split, message):
    cfg, _ = toy
    bad = {**cfg(0), "split": split}
    with pytest.raises(ValueError, match=message):
        _load(bad, data_dir)


def test_kfold_indices_regression_and_too_few_rows():
    y = np.linspace(0.0, 1.0, 23)
    parts = [kfold_indices(y, "regression", 4, f, 0) for f in range(4)]
    np.testing.assert_array_equal(np.sort(np.concatenate([te for _, te in parts])), np.arange(23))
    for tr, te in parts:
        assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 23
    with pytest.raises(ValueError, match="10 folds need at least 10 rows"):
        kfold_indices(np.arange(5.0), "regression", 10, 0, 0)


# ----------------------------------------------------------------------------- generated data


def checker(fold: int, *, split_seed: int = 3, n: int = 900, preprocess: str = "none") -> dict:
    return {"name": "checkerboard", "task": "binary", "generator": "checkerboard",
            "params": {"size": 3}, "n_train": n, "n_test": 500, "test_seed": 99,
            "preprocess": preprocess,
            "split": {"kind": "kfold", "folds": 10, "fold": fold, "seed": split_seed}}


def _key(X: np.ndarray) -> set:
    return {tuple(r) for r in np.round(X, 12)}


def test_generated_folds_partition_one_sample():
    tests, first = [], None
    for fold in range(10):
        # the run seed (here = the fold) does not change the sample, only split.seed does
        ds = load_dataset(checker(fold), seed=fold)
        assert ds.X_train.shape == (810, 2) and ds.X_test.shape == (90, 2)
        assert _key(ds.X_train).isdisjoint(_key(ds.X_test))
        assert ds.meta["fold"] == fold and ds.meta["train_seed"] == 3
        # stratified: the classes of the sample keep their proportion in every fold
        assert abs((ds.y_test > 0).mean() - (ds.y_train > 0).mean()) < 0.02
        tests.append(ds.X_test)
        if first is None:
            first = np.vstack([ds.X_train, ds.X_test])
    union = np.vstack(tests)
    assert len(_key(union)) == 900 and _key(union) == _key(first)
    other = load_dataset(checker(0, split_seed=4), seed=0)
    assert _key(other.X_test).isdisjoint(_key(union))


def test_generated_kfold_zscore_on_training_folds():
    raw = load_dataset(checker(4), seed=0)
    ds = load_dataset(checker(4, preprocess="zscore"), seed=0)
    np.testing.assert_allclose(ds.X_train.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(ds.X_test, (raw.X_test - raw.X_train.mean(0)) / raw.X_train.std(0),
                               atol=1e-12)


def test_generated_without_split_is_unchanged():
    cfg = {k: v for k, v in checker(0).items() if k != "split"}
    ds = load_dataset(cfg, seed=5)
    assert ds.X_train.shape == (900, 2) and ds.X_test.shape == (500, 2)
    assert ds.meta["train_seed"] == 5 and "fold" not in ds.meta


def test_generated_rejects_other_split_kinds():
    cfg = {**checker(0), "split": {"kind": "random", "test_size": 0.2}}
    with pytest.raises(ValueError, match="generated datasets take split.kind=kfold"):
        load_dataset(cfg, seed=0)


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_one_splitter_rule_stratifies_classes_only(task):
    y = np.array([_label(i) for i in range(N_TRAIN + N_TEST)], dtype=float)
    splitter = kfold_splitter(task, FOLDS, seed=3)
    assert type(splitter).__name__ == ("KFold" if task == "regression" else "StratifiedKFold")
    test = [t for _, t in splitter.split(np.zeros((len(y), 1)), y)]
    assert all(np.array_equal(kfold_indices(y, task, FOLDS, k, 3)[1], t) for k, t in enumerate(test))
    if task != "regression":  # every fold keeps each class's share, up to one row
        counts = np.array([np.bincount(y[t].astype(int), minlength=3) for t in test])
        assert np.ptp(counts, axis=0).max() <= 1
