"""Tensor Sketch: the count sketch of the tensor power, unbiased for the polynomial kernel."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features import TensorSketch
from rfrepro.kernels import polynomial_kernel


def _sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def assert_unbiased(make, X: np.ndarray, K: np.ndarray, draws: int = 300) -> None:
    """Mean over draws of every kernel entry within 3 standard errors of the exact value."""
    iu = np.triu_indices(X.shape[0])
    est = np.array([(Z @ Z.T)[iu] for Z in (make(s).fit_transform(X) for s in range(draws))])
    se = est.std(axis=0, ddof=1) / np.sqrt(draws)
    z = np.abs(est.mean(axis=0) - K[iu]) / se
    assert z.max() < 3.0 + 0.5 * np.sqrt(2 * np.log(K[iu].size)), (z.max(), est.mean(0), K[iu])


def _dense_tensor_sketch(ts: TensorSketch, x: np.ndarray) -> np.ndarray:
    """Count sketch of x'^(r) with hash sum_i h_i mod D and sign prod_i s_i, built entry by entry."""
    xa = np.append(x, np.sqrt(ts.offset)) if ts.offset > 0 else x
    D, (r, d) = ts.n_components, ts.index_hash_.shape
    out = np.zeros(D)
    for ks in itertools.product(range(d), repeat=r):
        bucket = sum(ts.index_hash_[i, k] for i, k in enumerate(ks)) % D
        sign = np.prod([ts.bit_hash_[i, k] for i, k in enumerate(ks)])
        out[bucket] += sign * np.prod(xa[list(ks)])
    return out


@pytest.mark.parametrize(("degree", "offset", "D"), [(3, 1.0, 8), (2, 0.0, 5), (4, 0.5, 7)])
def test_matches_dense_tensor_product(degree, offset, D):
    X = np.random.RandomState(1).standard_normal((3, 3))
    ts = TensorSketch(D, degree=degree, offset=offset, random_state=0).fit(X)
    expected = np.array([_dense_tensor_sketch(ts, x) for x in X])
    np.testing.assert_allclose(ts.transform(X), expected, atol=1e-10)


def test_kernel_estimate_is_unbiased():
    X = _sphere(4, 6)
    K = polynomial_kernel(X, degree=3, offset=1.0)
    assert_unbiased(lambda s: TensorSketch(32, degree=3, offset=1.0, random_state=s), X, K)
    with pytest.raises(AssertionError):  # the test has the power to see a 10% bias
        assert_unbiased(lambda s: TensorSketch(32, degree=3, offset=1.0, random_state=s), X, 1.1 * K)


def test_same_map_as_scikit_learn_with_its_hashes():
    # PolynomialCountSketch computes the same sketch: given its hashes we agree to rounding
    from sklearn.kernel_approximation import PolynomialCountSketch

    X = _sphere(20, 7)
    sk = PolynomialCountSketch(degree=3, gamma=1.0, coef0=1.0, n_components=64, random_state=0).fit(X)
    ts = TensorSketch(64, degree=3, offset=1.0, random_state=0).fit(X)
    ts.index_hash_, ts.bit_hash_ = sk.indexHash_, sk.bitHash_.astype(float)
    ts._fit_sketch()
    np.testing.assert_allclose(ts.transform(X), sk.transform(X), atol=1e-10)


def test_chunked_rows_give_the_same_features(monkeypatch):
    X = _sphere(300, 5)
    ts = TensorSketch(32, degree=3, random_state=0).fit(X)
    whole = ts.transform(X)
    monkeypatch.setattr("rfrepro.features._base.CHUNK_VALUES", 64 * 32)
    np.testing.assert_array_equal(ts.transform(X), whole)


def test_deterministic_and_float32():
    X = _sphere(10, 6)
    a = TensorSketch(40, degree=4, random_state=3).fit_transform(X)
    np.testing.assert_array_equal(a, TensorSketch(40, degree=4, random_state=3).fit_transform(X))
    assert not np.allclose(a, TensorSketch(40, degree=4, random_state=4).fit_transform(X))
    Z32 = TensorSketch(40, degree=4, random_state=3).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bad", [{"degree": 0}, {"offset": -1.0}, {"n_components": 0}])
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        TensorSketch(**{"n_components": 8, **bad}).fit(_sphere(3, 2))


@parametrize_with_checks([TensorSketch(n_components=16, degree=3, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
