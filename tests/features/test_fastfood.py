"""Fastfood: its frequency matrix, its kernel, its estimator API."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features.fastfood import Fastfood
from rfrepro.kernels import gaussian_kernel

SIGMA = 3.0


@pytest.fixture(scope="module")
def sample():
    X = np.random.RandomState(0).randn(300, 10)
    return X, gaussian_kernel(X, sigma=SIGMA)


def kernel_error(Z, K):
    return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)


def test_projection_matches_dense_definition():
    ff = Fastfood(n_components=40, sigma=2.0, random_state=1).fit(np.zeros((2, 10)))
    dp = ff.n_padded_
    assert dp == 16 and ff.signs_.shape == (3, 16)  # 3 blocks, the last truncated
    H = scipy.linalg.hadamard(dp)
    V = np.vstack(
        [
            np.diag(ff.scaling_[k])
            @ H
            @ np.diag(ff.gaussian_[k])
            @ np.eye(dp)[ff.permutation_[k]]
            @ H
            @ np.diag(ff.signs_[k])
            for k in range(3)
        ]
    )[:40, :10]
    X = np.random.RandomState(2).randn(5, 10)
    np.testing.assert_allclose(ff._project(X), X @ V.T, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_features_are_cosines_of_the_projections(dtype):
    X = np.random.RandomState(3).randn(50, 7).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    ff = Fastfood(40, sigma=2.0, random_state=0).fit(X)
    P = ff._project(X).astype(np.float64)
    expected = np.sqrt(2 / 40) * np.cos(P + ff.random_offset_)
    np.testing.assert_allclose(ff.transform(X), expected, atol=tol)
    ff = Fastfood(40, variant="cossin", sigma=2.0, random_state=0).fit(X)
    P = ff._project(X).astype(np.float64)
    expected = np.sqrt(1 / 40) * np.hstack([np.cos(P), np.sin(P)])
    np.testing.assert_allclose(ff.transform(X), expected, atol=tol)


def test_frequency_rows_have_gaussian_length():
    # S makes every row of V as long as a N(0, sigma^-2 I_d') vector: E||v||^2 = d' / sigma^2
    ff = Fastfood(n_components=64 * 64, sigma=2.0, random_state=0).fit(np.zeros((2, 64)))
    V = ff._project(np.eye(64))
    sq = (V**2).sum(0) * 4.0 / 64
    assert abs(sq.mean() - 1.0) < 0.02
    assert abs(sq.std() - np.sqrt(2.0 / 64)) < 0.02  # chi^2(d') / d' has variance 2 / d'


def test_mean_kernel_over_seeds_is_the_gaussian_kernel(sample):
    X, K = sample
    X, K = X[:60], K[:60, :60]
    mean = np.mean(
        [
            (Z := Fastfood(1024, sigma=SIGMA, random_state=s).fit_transform(X)) @ Z.T
            for s in range(20)
        ],
        axis=0,
    )
    assert np.abs(mean - K).max() < 0.05
    assert np.abs(mean - K).mean() < 0.01


def test_kernel_error_falls_at_the_monte_carlo_rate(sample):
    X, K = sample
    sizes = np.array([64, 128, 256, 512, 1024, 2048])
    errors = [
        np.mean(
            [
                kernel_error(Fastfood(D, sigma=SIGMA, random_state=s).fit_transform(X), K)
                for s in range(3)
            ]
        )
        for D in sizes
    ]
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert -0.65 < slope < -0.35
    assert errors[4] < 0.6 * errors[0]


def test_cossin_variant_counts_frequencies(sample):
    X, K = sample
    Z = Fastfood(512, variant="cossin", sigma=SIGMA, random_state=0).fit_transform(X)
    assert Z.shape == (300, 1024)
    assert kernel_error(Z, K) < 0.15


def test_float32_in_float32_out(sample):
    X, _ = sample
    ff = Fastfood(64, sigma=SIGMA, random_state=0).fit(X.astype(np.float32))
    Z32 = ff.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, ff.transform(X), atol=1e-4)


def test_transform_with_other_width_raises(sample):
    X, _ = sample
    ff = Fastfood(16, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        ff.transform(X[:, :5])


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_non_positive_n_components_raises(bad):
    with pytest.raises(ValueError, match="n_components"):
        Fastfood(bad).fit(np.ones((3, 2)))


def test_only_the_gaussian_kernel():
    with pytest.raises(ValueError, match=r"'kernel' parameter of Fastfood must be a str among \{'gaussian'\}\. Got 'laplacian'"):
        Fastfood(8, kernel="laplacian").fit(np.ones((3, 2)))


# All of scikit-learn's checks run; check_array_api_input skips itself unless
# SCIPY_ARRAY_API=1 is set (the maps are numpy-only).
@parametrize_with_checks(
    [
        Fastfood(n_components=20, random_state=0),
        Fastfood(n_components=10, variant="cossin", random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
