"""ECOC least squares: one shared Hessian, nearest-codeword decoding, one-hot codes = one-vs-rest LS."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.models import ECOCLeastSquares, LeastSquaresClassifier
from rfrepro.models.ecoc import random_dense_codes


def _blobs(n=300, d=8, k=4, seed=0):
    rng = np.random.RandomState(seed)
    centers = 3 * rng.standard_normal((k, d))
    y = rng.randint(k, size=n)
    return centers[y] + rng.standard_normal((n, d)), y


@pytest.mark.parametrize("k", [2, 4])
def test_one_hot_codes_equal_one_vs_rest_least_squares(k):
    X, y = _blobs(k=k)
    Xte, _ = _blobs(k=k, seed=1)
    ecoc = ECOCLeastSquares(lam=0.1, codes="one_hot").fit(X, y)
    ovr = LeastSquaresClassifier(lam=0.1).fit(X, y)
    np.testing.assert_array_equal(ecoc.predict(Xte), ovr.predict(Xte))
    if k > 2:  # the code-bit outputs are the one-vs-rest scores themselves
        np.testing.assert_allclose(ecoc.code_outputs(Xte), ovr.decision_function(Xte), rtol=1e-8, atol=1e-10)


def test_every_code_bit_is_the_ridge_solution():
    X, y = _blobs()
    clf = ECOCLeastSquares(lam=2.0, random_state=0).fit(X, y)
    T = clf.code_matrix_[y]
    for b in range(T.shape[1]):
        w = np.linalg.solve(X.T @ X + 2.0 * np.eye(X.shape[1]), X.T @ T[:, b])
        np.testing.assert_allclose(clf.coef_[:, b], w, rtol=1e-8, atol=1e-12)


def test_decodes_to_the_nearest_codeword_by_real_outputs():
    X, y = _blobs(k=5)
    clf = ECOCLeastSquares(lam=1.0, random_state=0).fit(X, y)
    F = clf.code_outputs(X)
    dist = ((F[:, None, :] - clf.code_matrix_[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[dist.argmin(1)])
    assert clf.score(X, y) > 0.9


def test_random_codes_are_valid_and_seeded():
    M = random_dense_codes(10, 34, random_state=0)
    assert M.shape == (10, 34) and set(np.unique(M)) == {-1.0, 1.0}
    assert len(np.unique(M, axis=0)) == 10 and (np.abs(M.sum(0)) < 10).all()
    np.testing.assert_array_equal(M, random_dense_codes(10, 34, random_state=0))
    assert ECOCLeastSquares().fit(*_blobs(k=10, n=400)).code_matrix_.shape == (10, 34)   # ceil(10 log2 10)


def test_given_code_matrix_and_string_labels():
    X, y = _blobs(k=3)
    labels = np.array(["a", "b", "c"])[y]
    M = [[1, 1, -1], [1, -1, 1], [-1, 1, 1]]
    clf = ECOCLeastSquares(codes=M).fit(X, labels)
    np.testing.assert_array_equal(clf.code_matrix_, M)
    assert set(clf.predict(X)) <= {"a", "b", "c"} and clf.score(X, labels) > 0.9
    with pytest.raises(ValueError, match="distinct"):
        ECOCLeastSquares(codes=[[1, 1], [1, 1], [-1, 1]]).fit(X, y)
    with pytest.raises(ValueError, match="one row per class"):
        ECOCLeastSquares(codes=[[1, 1], [-1, 1]]).fit(X, y)


def test_float32_features_accepted():
    X, y = _blobs()
    a = ECOCLeastSquares(random_state=0).fit(X, y).predict(X)
    np.testing.assert_array_equal(ECOCLeastSquares(random_state=0).fit(X.astype(np.float32), y).predict(X), a)


@parametrize_with_checks([ECOCLeastSquares(lam=1e-3, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
