"""Tests of preprocessing fitted on the training split only."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.data.dataset import Dataset
from rfrepro.data.preprocess import PREPROCESSING, preprocess


def _dataset(dtype=np.float64, with_test: bool = True) -> Dataset:
    rng = np.random.RandomState(0)
    X_train = (rng.standard_normal((50, 4)) * [1.0, 3.0, 0.5, 2.0] + [0.0, 5.0, -2.0, 1.0]).astype(dtype)
    X_train[:, 3] = 7.0  # a constant feature
    X_test = (rng.standard_normal((20, 4)) * 2.0 + 1.0).astype(dtype)
    y_train, y_test = rng.standard_normal(50), rng.standard_normal(20)
    if not with_test:
        X_test = y_test = None
    return Dataset("toy", "regression", X_train, y_train, X_test, y_test, {"source": "generated"})


def test_zscore_fitted_on_train_only():
    ds = _dataset()
    out = preprocess(ds, "zscore")
    mu, sd = ds.X_train.mean(axis=0), ds.X_train.std(axis=0)
    np.testing.assert_allclose(out.X_train[:, :3].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(out.X_train[:, :3].std(axis=0), 1.0, rtol=1e-12)
    # the constant feature is centred and left unscaled
    np.testing.assert_array_equal(out.X_train[:, 3], 0.0)
    sd_safe = np.where(sd > 0, sd, 1.0)
    np.testing.assert_allclose(out.X_test, (ds.X_test - mu) / sd_safe, rtol=1e-12)
    # test statistics are not refitted: the test split is not standardised
    assert np.abs(out.X_test.mean(axis=0)).max() > 0.1
    assert np.abs(out.X_test[:, :3].std(axis=0) - 1.0).max() > 0.1


def test_minmax_fitted_on_train_only():
    ds = _dataset()
    out = preprocess(ds, "minmax")
    lo, hi = ds.X_train.min(axis=0), ds.X_train.max(axis=0)
    np.testing.assert_allclose(out.X_train[:, :3].min(axis=0), -1.0, atol=1e-12)
    np.testing.assert_allclose(out.X_train[:, :3].max(axis=0), 1.0, atol=1e-12)
    np.testing.assert_array_equal(out.X_train[:, 3], 0.0)
    span = np.where(hi > lo, (hi - lo) / 2, 1.0)
    np.testing.assert_allclose(out.X_test, (ds.X_test - (hi + lo) / 2) / span, rtol=1e-12, atol=1e-12)
    # test rows outside the training range map outside [-1, 1]
    assert np.abs(out.X_test).max() > 1.0


def test_labels_meta_and_input_untouched():
    ds = _dataset()
    before = ds.X_train.copy()
    out = preprocess(ds, "zscore")
    np.testing.assert_array_equal(ds.X_train, before)
    assert out.y_train is ds.y_train and out.y_test is ds.y_test
    assert out.meta == {"source": "generated", "preprocess": "zscore"}
    assert (out.name, out.task) == (ds.name, ds.task)


def test_none_returns_unchanged():
    ds = _dataset()
    assert preprocess(ds, "none") is ds


@pytest.mark.parametrize("how", ["zscore", "minmax"])
def test_float32_preserved(how):
    out = preprocess(_dataset(np.float32), how)
    assert out.X_train.dtype == np.float32 and out.X_test.dtype == np.float32
    ref = preprocess(_dataset(np.float64), how)
    np.testing.assert_allclose(out.X_test, ref.X_test, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("how", ["zscore", "minmax"])
def test_without_test_split(how):
    out = preprocess(_dataset(with_test=False), how)
    assert out.X_test is None and out.X_train.shape == (50, 4)


def test_unknown_preprocess_lists_valid():
    with pytest.raises(ValueError, match="none, zscore, minmax"):
        preprocess(_dataset(), "standard")
    assert PREPROCESSING == ("none", "zscore", "minmax", "unit_norm", "zscore_unit_norm")


@pytest.mark.parametrize("dtype", [np.int64, np.uint8])
def test_integer_features_become_float(dtype):
    # e.g. raw pixel counts: scaling must not be truncated (or wrapped) back to integers
    X_train = np.array([[0, 10], [4, 20], [8, 30]], dtype=dtype)
    X_test = np.array([[2, 25]], dtype=dtype)
    ds = Dataset("ints", "binary", X_train, np.array([0, 1, 0]), X_test, np.array([1]))
    out = preprocess(ds, "minmax")
    assert out.X_train.dtype.kind == "f"
    np.testing.assert_allclose(out.X_train, [[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(out.X_test, [[-0.5, 0.5]])
