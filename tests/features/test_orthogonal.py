"""ORF and SORF (Yu et al. 2016): what the paper proves and shows, pinned on numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfrepro.features.orthogonal as orth
from rfrepro.features import (
    OrthogonalRandomFeatures,
    RandomFourierFeatures,
    StructuredOrthogonalRandomFeatures,
)

MAPS = (OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures)


@parametrize_with_checks([
    OrthogonalRandomFeatures(n_components=20, random_state=0),
    OrthogonalRandomFeatures(n_components=10, variant="cossin", sigma="median", random_state=0),
    StructuredOrthogonalRandomFeatures(n_components=20, random_state=0),
    StructuredOrthogonalRandomFeatures(n_components=10, variant="cossin", random_state=0),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls", MAPS)
@pytest.mark.parametrize("variant, width", [("cos", 10), ("cossin", 20)])
def test_shape_dtype_and_determinism(cls, variant, width):
    X = np.random.RandomState(1).randn(30, 6).astype(np.float32)
    a = cls(n_components=10, variant=variant, random_state=3).fit_transform(X)
    b = cls(n_components=10, variant=variant, random_state=3).fit_transform(X)
    c = cls(n_components=10, variant=variant, random_state=4).fit_transform(X)
    assert a.shape == (30, width) and a.dtype == np.float32
    assert np.array_equal(a, b) and not np.allclose(a, c)


def test_orf_blocks_are_orthogonal_and_stacked():
    d, D = 4, 10
    orf = OrthogonalRandomFeatures(n_components=D, sigma=2.0, random_state=0).fit(np.zeros((3, d)))
    W = orf.random_weights_
    assert W.shape == (d, D)
    for block in (W[:, 0:4], W[:, 4:8]):
        gram = block.T @ block
        assert np.allclose(gram - np.diag(np.diag(gram)), 0, atol=1e-12)
    # two blocks are independent draws, not one block repeated
    assert not np.allclose(np.abs(W[:, 0:4].T @ W[:, 4:8]), np.diag(np.diag(W[:, 0:4].T @ W[:, 0:4])))


def test_orf_norms_follow_chi_d():
    """Each frequency is marginally N(0, I / sigma^2): its squared norm is chi^2(d) / sigma^2."""
    d, sigma = 8, 2.0
    rng = np.random.RandomState(0)
    sq = np.concatenate([np.sum(orth.orthogonal_gaussian_block(d, rng) ** 2, axis=1) for _ in range(500)])
    assert stats.kstest(sq, stats.chi2(d).cdf).pvalue > 1e-3
    orf = OrthogonalRandomFeatures(n_components=4000, sigma=sigma, random_state=1).fit(np.zeros((2, d)))
    assert np.mean(np.sum(orf.random_weights_ ** 2, axis=0)) == pytest.approx(d / sigma ** 2, rel=0.05)


def test_sorf_stands_for_sqrt_d_times_an_orthogonal_matrix():
    d, sigma = 8, 1.5
    sorf = StructuredOrthogonalRandomFeatures(n_components=16, sigma=sigma, random_state=0).fit(np.zeros((2, d)))
    W = sorf.dense_weights()
    for block in (W[:, :8], W[:, 8:]):
        assert np.allclose(block.T @ block, d / sigma ** 2 * np.eye(d), atol=1e-10)
    X = np.random.RandomState(2).randn(7, d)
    P = np.empty((7, 16))
    sorf._project(X, P)
    assert np.allclose(P, X @ W)


@pytest.mark.parametrize("variant", ["cos", "cossin"])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_sorf_is_three_hd_blocks_on_the_fwht(variant, dtype, tol):
    """Only 3 d' signs a block are stored, and the features are those of the dense
    ``sqrt(d') / sigma H D1 H D2 H D3`` (H the normalised Hadamard matrix, D3 first),
    blocks stacked and the last truncated, with the input zero-padded to d'."""
    d, D, sigma, dp = 100, 300, 5.0, 128  # d' = 128: 3 blocks, the last truncated
    X = np.random.RandomState(0).randn(20, d).astype(dtype)
    sorf = StructuredOrthogonalRandomFeatures(n_components=D, sigma=sigma, variant=variant,
                                              random_state=0).fit(X)
    stored = sum(v.size for k, v in vars(sorf).items() if k.endswith("_") and isinstance(v, np.ndarray))
    assert sorf.signs_.shape == (3, 3, dp) and stored == 3 * 3 * dp + (D if variant == "cos" else 0)
    H = hadamard(dp) / np.sqrt(dp)
    pad = np.zeros((20, dp))
    pad[:, :d] = X
    s = sorf.signs_.astype(np.float64)
    # row form of H D1 H D2 H D3 x: x^T D3 H D2 H D1 H (H and D are symmetric)
    P = np.hstack([((pad * s[k, 2]) @ H * s[k, 1]) @ H * s[k, 0] @ H for k in range(3)])[:, :D]
    P *= np.sqrt(dp) / sigma
    expected = (np.sqrt(2.0 / D) * np.cos(P + sorf.random_offset_) if variant == "cos"
                else np.sqrt(1.0 / D) * np.hstack([np.cos(P), np.sin(P)]))
    Z = sorf.transform(X)
    assert Z.dtype == dtype
    np.testing.assert_allclose(Z, expected, rtol=0, atol=tol)


def test_sorf_makes_three_fwhts_of_length_d_prime_a_block_and_row(monkeypatch):
    """O(D log d) a row: the kernel's only work on a block is 3 FWHTs of length d' (d' log d'
    each) and O(d') passes; counted on the kernel's Python body with a counting FWHT."""
    calls = []
    real = orth.fwht_vector.py_func

    def counting(x):
        calls.append(x.shape[0])
        real(x)

    monkeypatch.setattr(orth, "fwht_vector", counting)
    d, D, n = 100, 300, 5  # d' = 128: 3 blocks, the last truncated
    X = np.random.RandomState(0).randn(n, d)
    sorf = StructuredOrthogonalRandomFeatures(n_components=D, sigma=5.0, random_state=0).fit(X)
    out = np.empty((n, D))
    orth._sorf_body(X, sorf.signs_, 1.0 / np.sqrt(128), np.sqrt(128) / 5.0, np.empty(0), 1.0, orth.RAW, out)
    assert calls == [128] * (3 * 3 * n)
    compiled = np.empty((n, D))
    sorf._project(X, compiled)
    np.testing.assert_allclose(out, compiled, rtol=0, atol=1e-12)


def _pairs(d: int, z: float, n: int, rng) -> np.ndarray:
    """Differences x - y of n pairs at distance z (sigma = 1), uniformly oriented."""
    u = rng.standard_normal((n, d))
    return z * u / np.linalg.norm(u, axis=1, keepdims=True)


def _kernel_estimates(fmap, delta: np.ndarray) -> np.ndarray:
    """k_hat(x, x + delta) for each row of delta, x = 0 (the maps are shift-invariant in distribution)."""
    Z0 = fmap.transform(np.zeros((1, delta.shape[1])))
    Z = fmap.transform(delta)
    return Z @ Z0[0]


def test_orf_kernel_estimate_is_unbiased():
    """Lemma 1: E k_ORF(x, y) = exp(-z^2 / 2); mean over 3000 draws, 99.9% interval."""
    d, z = 16, 1.5
    delta = _pairs(d, z, 1, np.random.RandomState(0))
    est = np.array([_kernel_estimates(OrthogonalRandomFeatures(n_components=d, variant="cossin", sigma=1.0,
                                                               random_state=s).fit(delta), delta)[0]
                    for s in range(3000)])
    exact = np.exp(-z ** 2 / 2)
    half = stats.t.ppf(0.9995, len(est) - 1) * est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - exact) < half
    assert half < 0.01  # the interval is tight enough to see a bias of that size


def test_sorf_bias_within_the_theorem_5_bound():
    """|E k_SORF - k| <= 6 z / sqrt(d'); measured over 3000 draws."""
    d, z = 64, 1.0
    delta = _pairs(d, z, 1, np.random.RandomState(0))
    est = np.array([_kernel_estimates(StructuredOrthogonalRandomFeatures(
        n_components=d, variant="cossin", sigma=1.0, random_state=s).fit(delta), delta)[0] for s in range(3000)])
    se = est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - np.exp(-z ** 2 / 2)) - 3 * se <= 6 * z / np.sqrt(d)


@pytest.mark.parametrize("cls", MAPS)
def test_orthogonal_maps_have_lower_kernel_mse_than_rks(cls):
    """Theorem 1 / Fig. 2 of Yu et al.: at D = d and z around 1-2, MSE(ORF) < MSE(RKS).

    Per seed: the mean squared error of the kernel estimate over 200 pairs at
    z = 1.5, each map drawn with that seed; the paired difference over 30
    seeds has its whole 95% t-interval below zero.
    """
    d, z = 32, 1.5
    exact = np.exp(-z ** 2 / 2)
    diffs = []
    for seed in range(30):
        delta = _pairs(d, z, 200, np.random.RandomState(1000 + seed))
        mse = []
        for fmap in (cls(n_components=d, variant="cossin", sigma=1.0, random_state=seed),
                     RandomFourierFeatures(n_components=d, variant="cossin", sigma=1.0, random_state=seed)):
            mse.append(np.mean((_kernel_estimates(fmap.fit(delta), delta) - exact) ** 2))
        diffs.append(mse[0] - mse[1])
    diffs = np.array(diffs)
    hi = diffs.mean() + stats.t.ppf(0.975, len(diffs) - 1) * diffs.std(ddof=1) / np.sqrt(len(diffs))
    assert hi < 0
