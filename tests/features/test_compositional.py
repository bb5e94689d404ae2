"""Comp: RKS up-projection followed by a Gaussian or SRHT down-projection."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features.compositional import CompRFF
from rfrepro.kernels import gaussian_kernel

SIGMA = 3.0


@pytest.fixture(scope="module")
def sample():
    X = np.random.RandomState(0).randn(300, 10)
    return X, gaussian_kernel(X, sigma=SIGMA)


def kernel_error(Z, K):
    return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)


@pytest.mark.parametrize("projection", ["gaussian", "srht"])
def test_kernel_error_falls(sample, projection):
    X, K = sample
    errors = [
        np.mean(
            [
                kernel_error(
                    CompRFF(E, projection=projection, sigma=SIGMA, random_state=s).fit_transform(X),
                    K,
                )
                for s in range(3)
            ]
        )
        for E in (64, 1024)
    ]
    assert errors[1] < 0.6 * errors[0]


def test_gaussian_projection_is_the_documented_matrix(sample):
    X, _ = sample
    comp = CompRFF(16, n_up_components=50, sigma=SIGMA, random_state=0).fit(X)
    assert comp.projection_.shape == (50, 16)
    np.testing.assert_allclose(comp.transform(X), comp.rff_.transform(X) @ comp.projection_)
    # entries N(0, 1/E)
    big = CompRFF(256, n_up_components=1024, sigma=SIGMA, random_state=0).fit(X).projection_
    assert abs(big.var() * 256 - 1.0) < 0.02


def test_srht_without_subsampling_keeps_the_rks_kernel(sample):
    X, _ = sample
    comp = CompRFF(64, n_up_components=64, projection="srht", sigma=SIGMA, random_state=0).fit(X)
    Z, F = comp.transform(X), comp.rff_.transform(X)
    np.testing.assert_allclose(Z @ Z.T, F @ F.T, atol=1e-10)


@pytest.mark.parametrize("projection", ["gaussian", "srht"])
def test_mean_over_projections_is_the_rks_kernel(sample, projection):
    # E over the down-projection of Z Z^T is F F^T: average projections of one RKS draw
    X, _ = sample
    X = X[:50]
    comps = [
        CompRFF(128, n_up_components=256, projection=projection, sigma=SIGMA, random_state=s)
        for s in range(30)
    ]
    F = comps[0].fit(X).rff_.transform(X)
    ZZ = []
    for comp in comps:
        comp.fit(X)
        comp.rff_ = comps[0].rff_  # same up-projection, fresh down-projection
        Z = comp.transform(X)
        ZZ.append(Z @ Z.T)
    FFt = F @ F.T
    assert np.linalg.norm(np.mean(ZZ, 0) - FFt) / np.linalg.norm(FFt) < 0.05


def test_float32_in_float32_out(sample):
    X, _ = sample
    for projection in ("gaussian", "srht"):
        comp = CompRFF(16, projection=projection, random_state=0)
        assert comp.fit_transform(X.astype(np.float32)).dtype == np.float32


def test_transform_with_other_width_raises(sample):
    X, _ = sample
    comp = CompRFF(8, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        comp.transform(X[:, :5])


@pytest.mark.parametrize("param", ["n_components", "n_up_components"])
def test_non_positive_sizes_raise(param):
    kw = {"n_components": 4, param: 0}
    with pytest.raises(ValueError, match=param):
        CompRFF(**kw).fit(np.ones((3, 2)))


def test_unknown_projection_raises():
    with pytest.raises(ValueError, match=r"'projection' parameter of CompRFF must be a str among \{'gaussian', 'srht'\}\. Got 'sparse'"):
        CompRFF(4, projection="sparse").fit(np.ones((3, 2)))


# All of scikit-learn's checks run; check_array_api_input skips itself unless
# SCIPY_ARRAY_API=1 is set (the maps are numpy-only).
@parametrize_with_checks(
    [
        CompRFF(n_components=5, random_state=0),
        CompRFF(n_components=5, projection="srht", random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
