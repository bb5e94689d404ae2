"""Tests of the exact kernels and the bandwidth rules."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from rfrepro.kernels import (
    FUSED_MAX_FEATURES,
    KERNELS,
    gaussian_kernel,
    kernel_matrix,
    laplacian_kernel,
    polynomial_kernel,
    resolve_bandwidth,
)


def _pair(d: int = 4):
    rng = np.random.RandomState(0)
    return rng.standard_normal((12, d)), rng.standard_normal((7, d)) * 2.0


# the Gaussian kernel has a fused loop for few features and a GEMM path above
GAUSSIAN_DIMS = [4, FUSED_MAX_FEATURES, FUSED_MAX_FEATURES + 4]


@pytest.mark.parametrize("d", GAUSSIAN_DIMS)
def test_gaussian_equals_cdist_formula(d):
    X, Y = _pair(d)
    sigma = 1.7 * np.sqrt(d)
    expected = np.exp(-cdist(X, Y, "sqeuclidean") / (2 * sigma**2))
    np.testing.assert_allclose(gaussian_kernel(X, Y, sigma=sigma), expected, rtol=1e-12, atol=1e-15)
    K = gaussian_kernel(X, sigma=sigma)
    np.testing.assert_allclose(K, np.exp(-cdist(X, X, "sqeuclidean") / (2 * sigma**2)), rtol=1e-12)
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=1e-14)


@pytest.mark.parametrize("d", GAUSSIAN_DIMS)
def test_gaussian_equal_far_rows_give_one(d):
    # the GEMM form |x|^2 + |y|^2 - 2 x.y can round below zero for equal rows
    X = np.full((3, d), 1e4)
    K = gaussian_kernel(X, sigma=1.0)
    assert np.all(K <= 1.0) and np.all(K > 1.0 - 1e-5)


def test_laplacian_equals_cdist_formula():
    X, Y = _pair()
    sigma = 2.3
    expected = np.exp(-cdist(X, Y, "cityblock") / sigma)
    np.testing.assert_allclose(laplacian_kernel(X, Y, sigma=sigma), expected, rtol=1e-14)
    np.testing.assert_allclose(
        laplacian_kernel(X, sigma=sigma), np.exp(-cdist(X, X, "cityblock") / sigma), rtol=1e-14
    )


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 5), (5, 3, 7), (6, 9, 784), (7, 4, 3), (301, 257, 33)])
def test_laplacian_compiled_loop_matches_cdist(shape):
    # odd and even row counts on both sides (the loop takes 2 x 2 blocks), one
    # feature and many, and a block large enough for the parallel loop
    n, m, d = shape
    rng = np.random.RandomState(n + m + d)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    sigma = 0.9 * d
    expected = np.exp(-cdist(X, Y, "cityblock") / sigma)
    np.testing.assert_allclose(laplacian_kernel(X, Y, sigma=sigma), expected, rtol=1e-13)
    K32 = laplacian_kernel(X.astype(np.float32), Y.astype(np.float32), sigma=sigma)
    np.testing.assert_allclose(K32, expected, rtol=1e-6)
    # X against itself: the upper triangle, mirrored
    K = laplacian_kernel(X, sigma=sigma)
    np.testing.assert_allclose(K, np.exp(-cdist(X, X, "cityblock") / sigma), rtol=1e-13)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(np.diag(K), 1.0)


@pytest.mark.parametrize("degree, offset", [(2, 1.0), (3, 0.0), (5, 2.5)])
def test_polynomial_equals_formula(degree, offset):
    X, Y = _pair()
    expected = (X @ Y.T + offset) ** degree
    K = polynomial_kernel(X, Y, degree=degree, offset=offset)
    np.testing.assert_allclose(K, expected, rtol=1e-13)
    # direct elementwise sums, not a GEMM
    np.testing.assert_allclose(K[3, 5], (np.sum(X[3] * Y[5]) + offset) ** degree, rtol=1e-12)


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_matrix_dispatch(name):
    X, Y = _pair()
    params = {"degree": 2, "offset": 1.0} if name == "polynomial" else {"sigma": 1.3}
    funcs = {"gaussian": gaussian_kernel, "laplacian": laplacian_kernel, "polynomial": polynomial_kernel}
    np.testing.assert_array_equal(kernel_matrix(name, X, Y, **params), funcs[name](X, Y, **params))


def test_kernel_matrix_unknown_lists_valid():
    with pytest.raises(ValueError, match="gaussian, laplacian, polynomial"):
        kernel_matrix("rbf", np.ones((2, 2)), sigma=1.0)


@pytest.mark.parametrize("d", [4, FUSED_MAX_FEATURES + 4])
@pytest.mark.parametrize("func", [gaussian_kernel, laplacian_kernel])
def test_dtypes(func, d):
    X, Y = _pair(d)
    sigma = 1.5 * np.sqrt(d)
    K32 = func(X.astype(np.float32), Y.astype(np.float32), sigma=sigma)
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, func(X, Y, sigma=sigma), atol=1e-5)
    assert func(X.astype(np.float32), Y, sigma=sigma).dtype == np.float64
    # integers are promoted to float
    assert func(np.arange(6).reshape(3, 2), sigma=1.5).dtype == np.float64


# ---------------------------------------------------------------- resolve_bandwidth


@pytest.mark.parametrize("rule", ["median", "mean"])
@pytest.mark.parametrize("kernel, metric", [("gaussian", "euclidean"), ("laplacian", "cityblock")])
def test_bandwidth_rules(rule, kernel, metric):
    X = np.random.RandomState(1).standard_normal((50, 3))
    dist = cdist(X, X, metric)[np.triu_indices(50, k=1)]
    expected = np.median(dist) if rule == "median" else np.mean(dist)
    assert resolve_bandwidth(X, rule, kernel=kernel) == pytest.approx(expected, rel=1e-12)


def test_bandwidth_rule_subsamples_deterministically():
    X = np.random.RandomState(2).standard_normal((300, 3))
    a = resolve_bandwidth(X, "median", max_points=100, random_state=0)
    b = resolve_bandwidth(X, "median", max_points=100, random_state=0)
    c = resolve_bandwidth(X, "median", max_points=100, random_state=1)
    full = resolve_bandwidth(X, "median")
    assert a == b and a != c
    assert a == pytest.approx(full, rel=0.1)


def test_bandwidth_rule_is_memoised_by_the_rows_content(monkeypatch):
    import rfrepro.kernels as kernels

    calls = []
    real = kernels.pdist
    monkeypatch.setattr(kernels, "pdist", lambda X, metric: calls.append(metric) or real(X, metric=metric))
    monkeypatch.setattr(kernels, "_RULE_CACHE", {})
    X = np.random.RandomState(3).standard_normal((400, 4))
    a = resolve_bandwidth(X, "median", max_points=100, random_state=5)
    b = resolve_bandwidth(X.copy(), "median", max_points=100, random_state=5)  # same rows, another array
    assert a == b and len(calls) == 1
    X2 = X.copy()
    X2[:, 0] *= 3.0  # the same row indices, other values: a new computation
    c = resolve_bandwidth(X2, "median", max_points=100, random_state=5)
    assert len(calls) == 2 and c > a
    # another rule or metric on the same rows is computed, not looked up
    resolve_bandwidth(X, "mean", max_points=100, random_state=5)
    resolve_bandwidth(X, "median", kernel="laplacian", max_points=100, random_state=5)
    assert calls[2:] == ["euclidean", "cityblock"]


@pytest.mark.parametrize("sigma, expected", [(2.5, 2.5), (3, 3.0), (np.float32(0.5), 0.5)])
def test_bandwidth_numbers_pass_through(sigma, expected):
    value = resolve_bandwidth(np.zeros((1, 2)), sigma)
    assert value == expected and isinstance(value, float)


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.nan, np.inf])
def test_bandwidth_rejects_non_positive(sigma):
    with pytest.raises(ValueError, match="sigma"):
        resolve_bandwidth(np.ones((3, 2)), sigma)


def test_bandwidth_rule_errors():
    with pytest.raises(ValueError, match="median, mean"):
        resolve_bandwidth(np.ones((3, 2)), "scott")
    with pytest.raises(ValueError, match="at least 2 rows"):
        resolve_bandwidth(np.ones((1, 2)), "median")
    with pytest.raises(ValueError, match="all equal"):
        resolve_bandwidth(np.ones((4, 2)), "mean")
