"""Quasi-Monte Carlo random Fourier features."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features.quasi import QuasiRandomFourierFeatures, low_discrepancy_points
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.kernels import gaussian_kernel, laplacian_kernel

SIGMA = 3.0


@pytest.fixture(scope="module")
def sample():
    X = np.random.RandomState(0).randn(300, 10)
    return X, gaussian_kernel(X, sigma=SIGMA)


def kernel_error(Z, K):
    return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)


@pytest.mark.parametrize("sequence", ["sobol", "halton"])
def test_deterministic_under_a_seed_and_seeds_differ(sample, sequence):
    X, _ = sample

    def make(seed):
        return QuasiRandomFourierFeatures(32, sequence=sequence, random_state=seed).fit(X)

    a, b, c = make(7), make(7), make(8)
    np.testing.assert_array_equal(a.random_weights_, b.random_weights_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert np.abs(a.random_weights_ - c.random_weights_).min() > 0


@pytest.mark.parametrize("sequence", ["sobol", "halton"])
def test_points_are_balanced_and_interior(sequence):
    u = low_discrepancy_points(sequence, 5, 1000, np.random.RandomState(0))
    assert u.shape == (1000, 5)
    assert 0.0 < u.min() and u.max() < 1.0
    # a low-discrepancy set fills each axis evenly: iid draws put 100 +- 9.5 in a bin
    counts = np.array([np.histogram(u[:, j], bins=10, range=(0, 1))[0] for j in range(5)])
    assert np.abs(counts - 100).max() <= 5


def test_frequencies_follow_the_gaussian_and_phases_are_uniform():
    qf = QuasiRandomFourierFeatures(4096, sigma=2.0, random_state=0).fit(np.zeros((2, 3)))
    W = qf.random_weights_ * 2.0
    np.testing.assert_allclose(W.mean(1), 0.0, atol=0.01)
    np.testing.assert_allclose(W.std(1), 1.0, atol=0.01)
    assert 0.0 <= qf.random_offset_.min() and qf.random_offset_.max() < 2 * np.pi
    assert abs(qf.random_offset_.mean() - np.pi) < 0.01


@pytest.mark.parametrize("variant, n_freq", [("cos", 1), ("cossin", 0.5)])
@pytest.mark.parametrize("sequence", ["sobol", "halton"])
def test_kernel_error_falls_and_beats_monte_carlo(sample, sequence, variant, n_freq):
    X, K = sample

    def err(cls, D, s, **kw):
        est = cls(int(D * n_freq), sigma=SIGMA, variant=variant, random_state=s, **kw)
        return kernel_error(est.fit_transform(X), K)

    quasi = {
        D: np.mean([err(QuasiRandomFourierFeatures, D, s, sequence=sequence) for s in range(3)])
        for D in (64, 1024)
    }
    mc = np.mean([err(RandomFourierFeatures, 1024, s) for s in range(3)])
    assert quasi[1024] < 0.6 * quasi[64]
    # Yang et al.'s claim: QMC frequencies approximate the kernel better at the same D
    assert quasi[1024] < 0.8 * mc


def test_laplacian_kernel(sample):
    X, _ = sample
    K = laplacian_kernel(X, sigma=10.0)
    errors = [
        kernel_error(
            QuasiRandomFourierFeatures(
                D, kernel="laplacian", sigma=10.0, random_state=0
            ).fit_transform(X),
            K,
        )
        for D in (64, 1024)
    ]
    assert errors[1] < 0.6 * errors[0]


def test_float32_in_float32_out(sample):
    X, _ = sample
    Z = QuasiRandomFourierFeatures(16, random_state=0).fit_transform(X.astype(np.float32))
    assert Z.dtype == np.float32


def test_transform_with_other_width_raises(sample):
    X, _ = sample
    qf = QuasiRandomFourierFeatures(16, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        qf.transform(X[:, :5])


@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_n_components_raises(bad):
    with pytest.raises(ValueError, match="n_components"):
        QuasiRandomFourierFeatures(bad).fit(np.ones((3, 2)))


def test_unknown_sequence_raises():
    with pytest.raises(ValueError, match=r"'sequence' .* among \{'sobol', 'halton'\}\. Got 'lattice'"):
        QuasiRandomFourierFeatures(8, sequence="lattice").fit(np.ones((3, 2)))


# All of scikit-learn's checks run; check_array_api_input skips itself unless
# SCIPY_ARRAY_API=1 is set (the maps are numpy-only).
@parametrize_with_checks(
    [
        QuasiRandomFourierFeatures(n_components=20, random_state=0),
        QuasiRandomFourierFeatures(
            n_components=10, sequence="halton", variant="cossin", random_state=0
        ),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
