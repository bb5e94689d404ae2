"""Tests of the linear and kernel SVMs and their lam <-> C mapping."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC, LinearSVC

from rfrepro.features.nystrom import ExactKernel
from rfrepro.kernels import gaussian_kernel
from rfrepro.models.svm import KernelSVM, LinearSVM


def _blobs(n: int = 80, d: int = 5, n_classes: int = 2, seed: int = 0):
    rng = np.random.RandomState(seed)
    y = rng.randint(n_classes, size=n)
    X = rng.standard_normal((n, d)) + 1.2 * rng.standard_normal((n_classes, d))[y]
    return X, y


def _objective(w, X, y, lam):
    """lam/2 ||w||^2 + mean hinge, labels y in {-1, +1}."""
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - y * (X @ w)))


@pytest.mark.parametrize("lam", [1e-3, 0.1])
def test_linear_svm_lam_is_liblinear_C(lam):
    X, y = _blobs()
    m = X.shape[0]
    ours = LinearSVM(lam=lam).fit(X, y)
    ref = LinearSVC(
        C=1 / (lam * m), loss="hinge", fit_intercept=False, dual=True, max_iter=10000, tol=1e-4,
        random_state=0,
    ).fit(X, y)
    assert ours.C_ == pytest.approx(1 / (lam * m))
    np.testing.assert_allclose(ours.svc_.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), rtol=1e-10)
    assert ours.converged_ and ours.classes_.tolist() == [0, 1]


def test_linear_svm_minimises_the_papers_objective():
    # the liblinear solution is (near) optimal for lam/2 ||w||^2 + (1/m) sum hinge
    X, y = _blobs(seed=1)
    lam = 0.05
    w = LinearSVM(lam=lam, tol=1e-8, max_iter=100_000).fit(X, y).svc_.coef_.ravel()
    ypm = np.where(y == 1, 1.0, -1.0)
    best = _objective(w, X, ypm, lam)
    rng = np.random.RandomState(0)
    for _ in range(50):
        assert _objective(w + 1e-3 * rng.standard_normal(w.size), X, ypm, lam) >= best - 1e-9
    # C scaled the other way would be a different (worse) solution
    w_bad = LinearSVC(C=lam * X.shape[0], loss="hinge", fit_intercept=False).fit(X, y).coef_.ravel()
    assert _objective(w_bad, X, ypm, lam) > best + 1e-3


def test_linear_svm_with_C_and_multiclass():
    X, y = _blobs(n_classes=3)
    ours = LinearSVM(C=0.5).fit(X, y)
    ref = LinearSVC(C=0.5, loss="hinge", fit_intercept=False, max_iter=10000, random_state=0).fit(X, y)
    assert ours.C_ == 0.5
    np.testing.assert_allclose(ours.svc_.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    assert ours.decision_function(X).shape == (80, 3)


def test_linear_svm_squared_hinge_with_intercept():
    X, y = _blobs()
    ours = LinearSVM(C=1.0, loss="squared_hinge", fit_intercept=True).fit(X, y)
    ref = LinearSVC(C=1.0, fit_intercept=True, dual=True, max_iter=10000, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.svc_.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.svc_.intercept_, ref.intercept_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("C", [0.3, 10.0])
def test_kernel_svm_equals_rbf_svc(n_classes, C):
    X, y = _blobs(n_classes=n_classes)
    Xt, _ = _blobs(n=30, n_classes=n_classes, seed=5)
    sigma = 1.8
    ek = ExactKernel(sigma=sigma).fit(X)
    ours = KernelSVM(C=C).fit(ek.transform(X), y)
    ref = SVC(kernel="rbf", gamma=1 / (2 * sigma**2), C=C).fit(X, y)
    np.testing.assert_array_equal(ours.predict(ek.transform(Xt)), ref.predict(Xt))
    np.testing.assert_allclose(
        ours.decision_function(ek.transform(Xt)), ref.decision_function(Xt), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(ours.svc_.support_, ref.support_)


def test_kernel_svm_lam():
    X, y = _blobs()
    K = gaussian_kernel(X, sigma=2.0)
    lam = 0.01
    ours = KernelSVM(lam=lam).fit(K, y)
    ref = SVC(kernel="precomputed", C=1 / (lam * 80)).fit(K, y)
    assert ours.C_ == pytest.approx(1 / (lam * 80))
    np.testing.assert_allclose(ours.decision_function(K), ref.decision_function(K), rtol=1e-8)


def test_kernel_svm_needs_square_kernel():
    with pytest.raises(ValueError, match="square"):
        KernelSVM(C=1.0).fit(np.ones((6, 5)), np.array([0, 1] * 3))


@pytest.mark.parametrize("model", [LinearSVM, KernelSVM])
@pytest.mark.parametrize("kwargs", [{}, {"C": 1.0, "lam": 0.1}], ids=["neither", "both"])
def test_exactly_one_of_C_and_lam(model, kwargs):
    X, y = _blobs(n=10)
    with pytest.raises(ValueError, match="exactly one of C and lam"):
        model(**kwargs).fit(gaussian_kernel(X, sigma=1.0), y)


@pytest.mark.parametrize("kwargs", [{"C": 0.0}, {"C": -1.0}, {"lam": -0.1}, {"lam": 0.0}, {"C": np.nan}])
def test_bad_C_or_lam(kwargs):
    X, y = _blobs(n=10)
    # the message names the parameter that was given
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        LinearSVM(**kwargs).fit(X, y)
