"""TEFM-G and TEFM-S (Chen et al. 2015, Algorithms 1 and 2)."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.features.tefm import TEFMG, TEFMS
from rfrepro.kernels import gaussian_kernel

SIGMA = 3.0


@pytest.fixture(scope="module")
def sample():
    X = np.random.RandomState(0).randn(300, 10)
    return X, gaussian_kernel(X, sigma=SIGMA)


def kernel_error(Z, K):
    return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)


def make(method, n_out, seed=0, **kw):
    if method == "tefm_s":
        return TEFMS(n_out, sigma=SIGMA, random_state=seed, **kw)
    return TEFMG(n_out, sigma=SIGMA, random_state=seed, q=int(method[-1]), **kw)


METHODS = ["tefm_g0", "tefm_g1", "tefm_g2", "tefm_s"]


@pytest.mark.parametrize("variant, n_up", [("cos", 64), ("cossin", 32)])
@pytest.mark.parametrize("method", METHODS)
def test_full_rank_reproduces_the_rks_kernel(sample, method, variant, n_up):
    # l = d: Q is square orthogonal, so G G^T = F Q Q^T F^T = F F^T
    X, _ = sample
    est = make(method, 64, n_up_components=n_up, variant=variant)
    G = est.fit_transform(X)
    F = est.rff_.transform(X)
    assert F.shape == (300, 64)
    FFt = F @ F.T
    assert np.linalg.norm(G @ G.T - FFt) / np.linalg.norm(FFt) < 1e-8


@pytest.mark.parametrize("method", METHODS)
def test_transform_of_training_rows_equals_fit_transform(sample, method):
    X, _ = sample
    est = make(method, 20)
    G = est.fit_transform(X)
    np.testing.assert_allclose(est.transform(X), G, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(make(method, 20).fit(X).transform(X), G, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_basis_is_orthonormal_and_inner_map_has_4l_features(sample, method):
    X, _ = sample
    est = make(method, 25).fit(X)
    assert est.rff_.n_features_out_ == 100 and est.components_.shape == (100, 25)
    np.testing.assert_allclose(est.components_.T @ est.components_, np.eye(25), atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_kernel_error_falls_and_halves_that_of_rks(sample, method):
    X, K = sample
    errors = {
        n_out: np.mean([kernel_error(make(method, n_out, s).fit_transform(X), K) for s in range(3)])
        for n_out in (16, 64)
    }
    rks = np.mean(
        [
            kernel_error(RandomFourierFeatures(64, sigma=SIGMA, random_state=s).fit_transform(X), K)
            for s in range(3)
        ]
    )
    assert errors[64] < 0.6 * errors[16]
    # claim C1.1: at d = 4 l, about half the error of RKS with the same l
    assert errors[64] < 0.7 * rks


def test_power_iterations_do_not_hurt(sample):
    X, K = sample

    def err(q):
        return np.mean(
            [kernel_error(make(f"tefm_g{q}", 16, s).fit_transform(X), K) for s in range(5)]
        )

    assert err(2) <= err(0) * 1.01


def test_float32_in_float32_out(sample):
    X, _ = sample
    for method in ("tefm_g1", "tefm_s"):
        est = make(method, 16)
        assert est.fit_transform(X.astype(np.float32)).dtype == np.float32
        assert est.transform(X.astype(np.float32)).dtype == np.float32


def test_transform_with_other_width_raises(sample):
    X, _ = sample
    est = make("tefm_s", 8).fit(X)
    with pytest.raises(ValueError, match="features"):
        est.transform(X[:, :5])


@pytest.mark.parametrize("cls", [TEFMG, TEFMS])
@pytest.mark.parametrize("bad", [0, -2])
def test_non_positive_n_components_raises(cls, bad):
    with pytest.raises(ValueError, match="n_components"):
        cls(bad).fit(np.ones((3, 2)))


@pytest.mark.parametrize("cls", [TEFMG, TEFMS])
def test_more_outputs_than_rks_features_raises(cls):
    with pytest.raises(ValueError, match="n_components=10 exceeds the 8 RKS features"):
        cls(10, n_up_components=8, variant="cos").fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="n_components=10 exceeds the 8 RKS features"):
        cls(10, n_up_components=4, variant="cossin").fit(np.ones((3, 2)))


def test_negative_q_raises():
    with pytest.raises(ValueError, match=r"'q' parameter of TEFMG must be an int in the range \[0, inf\)\. Got -1"):
        TEFMG(4, q=-1).fit(np.ones((3, 2)))


# All of scikit-learn's checks run; check_array_api_input skips itself unless
# SCIPY_ARRAY_API=1 is set (the maps are numpy-only).
@parametrize_with_checks(
    [
        TEFMG(n_components=5, random_state=0),
        TEFMG(n_components=5, q=2, random_state=0),
        TEFMS(n_components=5, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("variant, n_freq", [("cossin", 32), ("cos", 64)])
@pytest.mark.parametrize("method", ["tefm_g1", "tefm_s"])
def test_both_map_forms_approximate_the_gaussian_kernel(sample, method, variant, n_freq):
    # Eq. (2) and Eq. (3): d = 4 l features either way, and the error falls with l
    X, K = sample
    assert make(method, 16, variant=variant).fit(X).rff_.n_components == n_freq
    errors = {
        n_out: np.mean([kernel_error(make(method, n_out, s, variant=variant).fit_transform(X), K)
                        for s in range(3)])
        for n_out in (8, 32, 64)
    }
    assert errors[64] < errors[32] < errors[8]
    assert errors[64] < 0.6 * errors[8]
    # and at l = 64 it is below that of RKS with 64 features of the same form (claim C1.1's direction)
    rks = np.mean([kernel_error(RandomFourierFeatures(64 if variant == "cos" else 32, sigma=SIGMA, variant=variant,
                                                      random_state=s).fit_transform(X), K) for s in range(3)])
    assert errors[64] < 0.8 * rks


def test_default_form_is_eq2():
    for cls in (TEFMG, TEFMS):
        assert cls().variant == "cossin"
    est = TEFMG(8, sigma=SIGMA, random_state=0).fit(np.random.RandomState(1).randn(40, 3))
    assert est.rff_.variant == "cossin" and est.rff_.n_features_out_ == 32


@pytest.mark.parametrize("method", METHODS)
def test_at_least_as_many_outputs_as_rows_is_the_sketchs_range(method):
    # l >= n: Q spans the row space of F (rank_ = n columns, the rest zero), the
    # range of every sketch F^T Theta; the training Gram is F F^T and a ridge
    # model predicts what it predicts on the l-column Householder QR of the sketch
    rs = np.random.RandomState(3)
    X, Xt = rs.randn(60, 5), rs.randn(40, 5)
    y = np.sin(X[:, 0]) + X[:, 1]
    est = make(method, 64, variant="cos")
    G = est.fit_transform(X)
    assert est.rank_ == 60 and G.shape == (60, 64) and np.all(G[:, 60:] == 0)
    Q = est.components_
    np.testing.assert_allclose(Q.T @ Q, np.diag([1.0] * 60 + [0.0] * 4), atol=1e-10)
    F, Ft = est.rff_.transform(X), est.rff_.transform(Xt)
    np.testing.assert_allclose(G @ G.T, F @ F.T, rtol=0, atol=1e-10 * np.abs(F @ F.T).max())
    np.testing.assert_allclose(est.transform(X), G, rtol=0, atol=1e-10)
    sketch = F.T @ np.random.RandomState(5).randn(60, 64)  # any sketch: a Gaussian one
    Q_qr = np.linalg.qr(sketch)[0]
    lam = 1e-3

    def ridge_predictions(Z, Zt):
        w = np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T @ y)
        return Zt @ w

    ours = ridge_predictions(G, est.transform(Xt))
    np.testing.assert_allclose(ours, ridge_predictions(F @ Q_qr, Ft @ Q_qr), rtol=1e-6, atol=1e-6)
    assert np.abs(ours).max() > 0.1


def test_duplicate_rows_keep_the_numerical_rank():
    # a repeated row lowers the rank of F: the basis has no direction for it
    X = np.random.RandomState(4).randn(30, 3)
    X[10] = X[3]
    est = TEFMG(40, sigma=SIGMA, variant="cos", random_state=0).fit(X)
    assert est.rank_ == 29
    Q = est.components_[:, :29]
    np.testing.assert_allclose(Q.T @ Q, np.eye(29), atol=1e-8)
