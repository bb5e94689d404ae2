"""The fast Walsh-Hadamard transform and the SRHT against their dense definitions."""

import numpy as np
import pytest
import scipy.linalg

from rfrepro.features.hadamard import SRHT, fwht, fwht_inplace, is_pow2, next_pow2

SIZES = [2**k for k in range(11)]  # 1 .. 1024
# float32 sums of d terms of size ~1 carry about sqrt(d) * 1e-7 absolute error
TOL = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=2e-5)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", SIZES)
def test_fwht_matches_dense_hadamard(d, dtype):
    X = np.random.RandomState(d).randn(5, d).astype(dtype)
    expected = X.astype(np.float64) @ scipy.linalg.hadamard(d)
    got = fwht(X)
    assert got.dtype == dtype
    tol = TOL[dtype]
    np.testing.assert_allclose(got, expected, rtol=tol["rtol"], atol=tol["atol"] * np.sqrt(d))


@pytest.mark.parametrize("d", SIZES)
def test_fwht_is_its_own_inverse_up_to_scale(d):
    X = np.random.RandomState(0).randn(4, d)
    np.testing.assert_allclose(fwht(fwht(X)), d * X, rtol=1e-12, atol=1e-12 * d)
    np.testing.assert_allclose(fwht(fwht(X, normalized=True), normalized=True), X, atol=1e-12)


def test_normalized_fwht_is_orthogonal():
    X = np.random.RandomState(1).randn(10, 256)
    Y = fwht(X, normalized=True)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), np.linalg.norm(X, axis=1), rtol=1e-12)


def test_fwht_inplace_transforms_a_vector_and_rows():
    x = np.arange(8.0)
    fwht_inplace(x)
    np.testing.assert_allclose(x, scipy.linalg.hadamard(8) @ np.arange(8.0))
    X = np.random.RandomState(2).randn(3, 16)
    Y = X.copy()
    fwht_inplace(Y, normalized=True)
    np.testing.assert_allclose(Y, X @ scipy.linalg.hadamard(16) / 4.0, atol=1e-12)


def test_fwht_rejects_bad_input():
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(np.ones((2, 12)))
    with pytest.raises(ValueError, match="C-contiguous"):
        fwht_inplace(np.ones((16, 8)).T)
    with pytest.raises(TypeError, match="float32 or float64"):
        fwht_inplace(np.ones(8, dtype=np.int64))


def test_next_pow2():
    assert [next_pow2(n) for n in (0, 1, 2, 3, 5, 1000, 1024, 1025)] == [
        1,
        1,
        2,
        4,
        8,
        1024,
        1024,
        2048,
    ]
    assert [is_pow2(n) for n in (0, 1, 6, 64)] == [False, True, False, True]


def _dense_srht(srht):
    """sqrt(D'/E) R (H / sqrt(D')) diag(s), restricted to the D unpadded columns: (E, D)."""
    dp, E = srht.n_padded_, srht.n_components
    H = scipy.linalg.hadamard(dp) / np.sqrt(dp)
    return (np.sqrt(dp / E) * (H * srht.signs_)[srht.index_])[:, : srht.n_features_in]


@pytest.mark.parametrize("D, E", [(1000, 256), (64, 64), (5, 3), (10, 40)])
def test_srht_matches_dense_definition(D, E):
    srht = SRHT(D, E, random_state=0)
    assert srht.n_padded_ == next_pow2(max(D, E))
    X = np.random.RandomState(1).randn(7, D)
    M = _dense_srht(srht)
    np.testing.assert_allclose(srht.apply(X), X @ M.T, atol=1e-12)
    F = np.random.RandomState(2).randn(D, 3)
    np.testing.assert_allclose(srht.apply_columns(F), M @ F, atol=1e-12)


def test_srht_preserves_norms_within_jl_bounds():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 1024)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    sq = (SRHT(1024, 256, random_state=1).apply(X) ** 2).sum(1)
    assert np.all(np.abs(sq - 1.0) < 0.5)
    assert abs(sq.mean() - 1.0) < 0.05


def test_srht_without_subsampling_is_orthogonal():
    srht = SRHT(128, 128, random_state=3)
    X = np.random.RandomState(4).randn(6, 128)
    Y = srht.apply(X)
    np.testing.assert_allclose(Y @ Y.T, X @ X.T, atol=1e-10)


def test_srht_keeps_float32_and_rejects_wrong_width():
    srht = SRHT(20, 8, random_state=0)
    assert srht.apply(np.ones((3, 20), dtype=np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match="rows of length 20"):
        srht.apply(np.ones((3, 21)))
    with pytest.raises(ValueError, match="n_components"):
        SRHT(20, 0)
