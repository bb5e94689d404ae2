"""Tests of the leverage-reweighted random Fourier features (Sun et al. 2018, P4)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from rfrepro.data.synthetic import disk_annulus
from rfrepro.features import leverage
from rfrepro.features.leverage import LeverageRFF, ridge_leverage_scores
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.kernels import gaussian_kernel

# point pairs inside the disk, across the gap and across the annulus: high, middle and low k
PAIRS_X = np.array([[0.3, 0.2], [0.0, 0.95], [1.5, 0.3]])
PAIRS_Y = np.array([[0.5, -0.1], [1.05, 0.0], [-1.2, 0.8]])


def _plain_map(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    P = X @ W
    return np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(W.shape[1])


def _pair_products(Z: np.ndarray, n_pairs: int) -> np.ndarray:
    """z(x_k) . z(y_k) for Z = transform of the stacked [PAIRS_X; PAIRS_Y]."""
    return np.einsum("kj,kj->k", Z[:n_pairs], Z[n_pairs:])


# ---------------------------------------------------------------- ridge_leverage_scores


@pytest.mark.parametrize("transpose", [False, True], ids=["tall", "wide"])
def test_scores_match_explicit_inverse(transpose):
    Phi = np.random.RandomState(0).randn(10, 6)
    Phi = Phi.T if transpose else Phi
    mu = 0.3
    A = Phi @ Phi.T
    expected = np.diag(A @ np.linalg.inv(A + mu * np.eye(A.shape[0])))
    np.testing.assert_allclose(ridge_leverage_scores(Phi, mu), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(10, 6), (6, 10), (40, 40)])
def test_scores_sum_to_effective_dimension(shape):
    Phi = np.random.RandomState(1).randn(*shape) / 5.0
    mu = 0.05
    lam = np.linalg.eigvalsh(Phi.T @ Phi)
    d_eff = np.sum(lam / (lam + mu))
    scores = ridge_leverage_scores(Phi, mu)
    assert scores.shape == (shape[0],)
    assert scores.sum() == pytest.approx(d_eff, rel=1e-10)
    assert np.all(scores >= 0.0) and np.all(scores < 1.0)


def test_scores_stable_for_small_mu_and_rank_deficient_phi():
    # rank 3 in a 20 x 50 matrix scaled like the map's Phi (tr Phi^T Phi = 1): the Gram's
    # null-space eigenvalues are rounding noise (~1e-17), far below the paper's smallest
    # lambda = mu = 1e-7, so the scores must match the exact SVD-based value
    rng = np.random.RandomState(2)
    Phi = rng.randn(20, 3) @ rng.randn(3, 50)
    Phi /= np.linalg.norm(Phi)
    mu = 1e-7
    s2 = np.linalg.svd(Phi, compute_uv=False)[:3] ** 2
    for P in (Phi, Phi.T):
        scores = ridge_leverage_scores(P, mu)
        assert np.all(np.isfinite(scores)) and np.all(scores >= 0.0)
        assert scores.sum() == pytest.approx(np.sum(s2 / (s2 + mu)), abs=1e-7)


def test_scores_reject_bad_mu():
    with pytest.raises(ValueError, match="mu"):
        ridge_leverage_scores(np.ones((3, 2)), 0.0)


def _one_shot_scores(X, W, mu):
    P = X @ W
    Phi_t = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(X.shape[0] * W.shape[1])
    r = ridge_leverage_scores(Phi_t.T, mu)
    return r[: W.shape[1]] + r[W.shape[1] :]


@pytest.mark.parametrize(
    ("n_sub", "chunk_values"),
    [(30, None), (30, 3000), (30, 60 * 37), (500, None)],
    ids=["one-block", "four-blocks", "ragged-blocks", "phi-whole"],
)
def test_candidate_scores_in_blocks_are_the_one_shot_scores(monkeypatch, n_sub, chunk_values):
    # 200 candidates. On 30 rows (2M > L) the blocked two-pass form: one block, or blocks of
    # 3000 // 60 = 50 candidates, or of 37 with a ragged last one; on 500 rows (2M <= L) Phi
    # whole. mu = 1e-7 puts most of the Gram's eigenvalues below mu
    if chunk_values is not None:
        monkeypatch.setattr(leverage, "CHUNK_VALUES", chunk_values)
    rng = np.random.RandomState(5)
    X, W = rng.randn(n_sub, 3), rng.randn(3, 200) * 0.7
    for mu, rtol in ((1e-3, 1e-9), (1e-7, 1e-6)):  # 1 / mu amplifies the trig's last bits
        expected = _one_shot_scores(X, W, mu)
        np.testing.assert_allclose(leverage.candidate_leverage_scores(X, W, mu), expected, rtol=rtol, atol=1e-13)


def test_candidate_scores_never_hold_phi_whole(monkeypatch):
    # 20000 candidates on 100 rows: Phi is 32 MB; in blocks of 2 MiB (1310 candidates) the
    # scores must hold far less than that
    monkeypatch.setattr(leverage, "CHUNK_VALUES", 1 << 18)
    rng = np.random.RandomState(6)
    X, W = rng.randn(100, 2), rng.randn(2, 20000)
    phi_bytes = 2 * W.shape[1] * X.shape[0] * 8
    tracemalloc.start()
    try:
        leverage.candidate_leverage_scores(X, W, 1e-3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < phi_bytes / 3, (peak, phi_bytes)  # 6.7 MB: a block, its products and G


# ---------------------------------------------------------------- the feature map


def test_unif_is_the_plain_cossin_map():
    X, _ = disk_annulus(200, random_state=0)
    unif = LeverageRFF(n_components=7, sigma="mean", sampler="unif", random_state=3).fit(X)
    rks = RandomFourierFeatures(n_components=7, sigma="mean", variant="cossin", random_state=3)
    rks.fit(X)
    np.testing.assert_array_equal(unif.importance_weights_, np.ones(7))
    np.testing.assert_array_equal(unif.random_weights_, rks.random_weights_)
    np.testing.assert_array_equal(unif.transform(X), rks.transform(X))
    assert unif.n_features_out_ == 14
    assert not hasattr(unif, "leverage_scores_")


def test_uniform_leverage_reduces_to_plain_map(monkeypatch):
    # equal scores give p_i = 1 / M and weights (M p_i)^-1/2 = 1
    monkeypatch.setattr(leverage, "candidate_leverage_scores", lambda X, W, mu: np.full(W.shape[1], 2.0))
    X, _ = disk_annulus(100, random_state=1)
    rf = LeverageRFF(n_components=4, sigma=1.0, oversampling=10, random_state=0).fit(X)
    np.testing.assert_allclose(rf.leverage_scores_, np.full(40, 2.0))
    np.testing.assert_allclose(rf.importance_weights_, np.ones(4), rtol=1e-14)
    np.testing.assert_array_equal(
        rf.random_weights_, rf.candidate_weights_[:, rf.candidate_indices_]
    )
    np.testing.assert_allclose(rf.transform(X), _plain_map(X, rf.random_weights_), atol=1e-13)


def test_opt_scores_on_disk_annulus_sum_to_effective_dimension():
    X, _ = disk_annulus(300, random_state=4)
    mu = 1e-3
    for n in range(1, 6):
        rf = LeverageRFF(n_components=n, sigma="mean", mu=mu, random_state=n).fit(X)
        M, L = 100 * n, 90
        r = rf.leverage_scores_
        assert r.shape == (M,) and rf.subsample_indices_.shape == (L,)
        assert r.max() > 2.0 * r.min()  # the reweighting is not uniform
        assert np.all(r > 0.0) and np.all(r < 2.0)  # a cos row and a sin row, each < 1
        # independent: eigenvalues of the candidates' kernel matrix on the L rows, divided by L
        W = rf.candidate_weights_
        XL = X[rf.subsample_indices_]
        diff = (XL @ W)[:, None, :] - (XL @ W)[None, :, :]
        G = np.cos(diff).mean(axis=2) / L
        lam = np.linalg.eigvalsh(G)
        assert r.sum() == pytest.approx(np.sum(lam / (lam + mu)), rel=1e-8)
        # importance weights are (M p_i)^-1/2 of the drawn candidates
        p = r / r.sum()
        np.testing.assert_allclose(
            rf.importance_weights_, (M * p[rf.candidate_indices_]) ** -0.5, rtol=1e-12
        )
        Z = rf.transform(XL)
        expected = _plain_map(XL, rf.random_weights_) * np.tile(rf.importance_weights_, 2)
        np.testing.assert_allclose(Z, expected, atol=1e-12)


def test_resampling_is_unbiased_for_the_candidate_kernel():
    # Given the candidates, each drawn frequency is an importance-weighted sample of the
    # candidate average (1/M) sum_i cos(w_i (x - y)); groups of N = 5 of one large draw
    # are independent N = 5 maps from that pool.
    X, _ = disk_annulus(20, random_state=5)
    n_groups, n = 2000, 5
    rf = LeverageRFF(
        n_components=n_groups * n, sigma=1.0, mu=1e-3, oversampling=5, random_state=0
    ).fit(X)
    k = len(PAIRS_X)
    Z = rf.transform(np.vstack([PAIRS_X, PAIRS_Y]))
    N = n_groups * n
    terms = (Z[:k, :N] * Z[k:, :N] + Z[:k, N:] * Z[k:, N:]) * N  # q_i^2 cos(w_i (x - y))
    groups = terms.reshape(k, n_groups, n).mean(axis=2)
    mean = groups.mean(axis=1)
    se = groups.std(axis=1, ddof=1) / np.sqrt(n_groups)
    pool = np.cos((PAIRS_X - PAIRS_Y) @ rf.candidate_weights_).mean(axis=1)
    assert np.all(np.abs(mean - pool) < 3.0 * se)
    # and the pool (M = 50000 candidates) is itself close to the exact kernel
    exact = np.diag(gaussian_kernel(PAIRS_X, PAIRS_Y, sigma=1.0))
    np.testing.assert_allclose(pool, exact, atol=0.02)


@pytest.mark.slow
def test_weighted_map_is_an_unbiased_kernel_estimate():
    X, _ = disk_annulus(20, random_state=6)
    k = len(PAIRS_X)
    P = np.vstack([PAIRS_X, PAIRS_Y])
    draws = np.array(
        [
            _pair_products(
                LeverageRFF(n_components=5, sigma=1.0, mu=1e-3, random_state=s).fit(X).transform(P),
                k,
            )
            for s in range(2000)
        ]
    )
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    exact = np.diag(gaussian_kernel(PAIRS_X, PAIRS_Y, sigma=1.0))
    assert np.all(np.abs(mean - exact) < 3.0 * se)


def test_disk_annulus_bayes_accuracy():
    X, y = disk_annulus(100_000, random_state=7)
    bayes = np.sign(np.linalg.norm(X, axis=1) - 1.0)
    assert np.mean(bayes == y) == pytest.approx(0.9, abs=0.005)


def test_deterministic_under_a_seed():
    X, _ = disk_annulus(150, random_state=8)
    a = LeverageRFF(n_components=3, sigma="mean", random_state=11).fit(X)
    b = LeverageRFF(n_components=3, sigma="mean", random_state=11).fit(X)
    c = LeverageRFF(n_components=3, sigma="mean", random_state=12).fit(X)
    np.testing.assert_array_equal(a.leverage_scores_, b.leverage_scores_)
    np.testing.assert_array_equal(a.random_weights_, b.random_weights_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert not np.array_equal(a.candidate_weights_, c.candidate_weights_)


def test_float32_preserved():
    X, _ = disk_annulus(150, random_state=9)
    rf64 = LeverageRFF(n_components=4, sigma=1.0, random_state=0).fit(X)
    rf32 = LeverageRFF(n_components=4, sigma=1.0, random_state=0).fit(X.astype(np.float32))
    Z32 = rf32.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and rf32.random_weights_.dtype == np.float32
    np.testing.assert_array_equal(rf32.candidate_indices_, rf64.candidate_indices_)
    np.testing.assert_allclose(Z32, rf64.transform(X), atol=1e-5)


def test_max_subsample_caps_L():
    X, _ = disk_annulus(400, random_state=10)
    rf = LeverageRFF(n_components=2, sigma=1.0, max_subsample=50, random_state=0).fit(X)
    assert rf.subsample_indices_.shape == (50,)
    assert len(np.unique(rf.subsample_indices_)) == 50
    full = LeverageRFF(n_components=2, sigma=1.0, subsample_fraction=1.0, random_state=0).fit(X)
    np.testing.assert_array_equal(full.subsample_indices_, np.arange(400))


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"n_components": 0}, "n_components"),
        ({"n_components": -2}, "n_components"),
        ({"mu": 0.0}, "mu"),
        ({"mu": -1e-3}, "mu"),
        ({"subsample_fraction": 0.0}, "subsample_fraction"),
        ({"subsample_fraction": 1.5}, "subsample_fraction"),
        ({"sampler": "leverage"}, "sampler"),
        ({"oversampling": 0}, "oversampling"),
        ({"max_subsample": 0}, "max_subsample"),
    ],
)
def test_bad_params_raise(params, name):
    X, _ = disk_annulus(30, random_state=0)
    with pytest.raises(ValueError, match=name):
        LeverageRFF(**params).fit(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_sklearn_estimator_checks():
    check_estimator(LeverageRFF(n_components=3))
