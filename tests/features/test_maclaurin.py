"""Random Maclaurin features: unbiased for the polynomial kernel, H0/1 terms exact, structured draws."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features import RandomMaclaurin
from rfrepro.features.maclaurin import maclaurin_coefficients
from rfrepro.kernels import polynomial_kernel


def _sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _estimates(make, X: np.ndarray, draws: int) -> np.ndarray:
    """Upper-triangle entries of Z Z^T, one row per independent draw of the map."""
    iu = np.triu_indices(X.shape[0])
    return np.array([(Z @ Z.T)[iu] for Z in (make(s).fit_transform(X) for s in range(draws))])


def assert_unbiased(make, X: np.ndarray, K: np.ndarray, draws: int = 300) -> None:
    """Mean over draws of every kernel entry within 3 standard errors of the exact value."""
    est = _estimates(make, X, draws)
    exact = K[np.triu_indices(X.shape[0])]
    se = est.std(axis=0, ddof=1) / np.sqrt(draws)
    z = np.abs(est.mean(axis=0) - exact) / se
    assert z.max() < 3.0 + 0.5 * np.sqrt(2 * np.log(exact.size)), (z.max(), est.mean(0), exact)


def test_coefficients_are_the_binomial_expansion():
    np.testing.assert_allclose(maclaurin_coefficients(3, 2.0), [8.0, 12.0, 6.0, 1.0])
    t = 0.37
    assert maclaurin_coefficients(7, 1.0) @ t ** np.arange(8) == pytest.approx((t + 1) ** 7)


@pytest.mark.parametrize("h01", [False, True])
@pytest.mark.parametrize("draws", ["dense", "hadamard"])
def test_kernel_estimate_is_unbiased(h01, draws):
    X = _sphere(4, 6)
    K = polynomial_kernel(X, degree=3, offset=1.0)
    assert_unbiased(lambda s: RandomMaclaurin(32, degree=3, offset=1.0, h01=h01, draws=draws, random_state=s), X, K)


def test_bias_would_be_detected():
    # the same test rejects a map whose scale is off by 10%
    X = _sphere(4, 6)
    K = polynomial_kernel(X, degree=3, offset=1.0)
    with pytest.raises(AssertionError):
        assert_unbiased(lambda s: RandomMaclaurin(32, degree=3, random_state=s), X, 1.1 * K)


def test_error_shrinks_like_one_over_sqrt_d():
    X = _sphere(60, 10)
    K = polynomial_kernel(X, degree=3, offset=1.0)
    err = [np.mean([np.linalg.norm(Z @ Z.T - K) for Z in (RandomMaclaurin(D, degree=3, random_state=s)
                                                           .fit_transform(X) for s in range(5))])
           for D in (256, 4096)]
    # 16x the features: error / 4 in expectation; allow sampling noise
    assert 2.5 < err[0] / err[1] < 6.5


def test_h01_terms_are_exact():
    X = _sphere(5, 4)
    rm = RandomMaclaurin(20, degree=3, offset=2.0, h01=True, random_state=0).fit(X)
    Z = rm.transform(X)
    a = maclaurin_coefficients(3, 2.0)
    np.testing.assert_allclose(Z[:, 0], np.sqrt(a[0]))
    np.testing.assert_allclose(Z[:, 1:5], np.sqrt(a[1]) * X)
    # random features draw N >= 2; those with N > r are zero (marked degree 0)
    assert rm.degrees_.size == 15 and (rm.degrees_[rm.coef_ > 0] >= 2).all()
    np.testing.assert_array_equal(Z[:, 5:][:, rm.coef_ == 0], 0.0)


def test_h01_needs_more_outputs_than_inputs():
    X = _sphere(5, 8)
    with pytest.raises(ValueError, match="n_components must exceed it"):
        RandomMaclaurin(9, h01=True).fit(X)


def test_degrees_follow_the_geometric_law():
    rm = RandomMaclaurin(20000, degree=30, random_state=0).fit(_sphere(3, 4))
    freq = np.bincount(rm.degrees_, minlength=4)[:4] / rm.degrees_.size
    np.testing.assert_allclose(freq, 0.5 ** np.arange(1, 5), atol=0.01)
    # degrees above r have a_N = 0: those features are zero columns
    rm = RandomMaclaurin(2000, degree=1, offset=0.0, random_state=0).fit(_sphere(3, 4))
    assert np.count_nonzero(rm.coef_) == np.count_nonzero(rm.degrees_ == 1)
    assert 0.2 < np.mean(rm.degrees_ == 1) < 0.3


def test_structured_rows_are_hadamard_rows():
    X = _sphere(3, 5)
    rm = RandomMaclaurin(64, degree=2, offset=0.0, draws="hadamard", random_state=0).fit(X)
    srht = rm.srhts_[0]
    # the factor is <w, x> with w = (H diag(s))[index, :d], a +-1 vector
    from scipy.linalg import hadamard

    W = (hadamard(srht.n_padded_) * srht.signs_)[srht.index_, :5]
    np.testing.assert_allclose(rm._factor(0, X), X @ W.T, atol=1e-12)


def test_deterministic_and_float32():
    X = _sphere(10, 6)
    a = RandomMaclaurin(40, degree=4, random_state=3).fit_transform(X)
    b = RandomMaclaurin(40, degree=4, random_state=3).fit_transform(X)
    c = RandomMaclaurin(40, degree=4, random_state=4).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    Z32 = RandomMaclaurin(40, degree=4, random_state=3).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bad", [{"degree": 0}, {"offset": -1.0}, {"draws": "gaussian"}, {"n_components": 0}])
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        RandomMaclaurin(**{"n_components": 8, **bad}).fit(_sphere(3, 2))


@parametrize_with_checks([
    RandomMaclaurin(n_components=20, degree=3, random_state=0),
    RandomMaclaurin(n_components=20, degree=3, draws="hadamard", random_state=0),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
