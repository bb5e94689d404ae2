"""Tests of the linear and kernel SVMs and their lam <-> C mapping."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
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
    # dense input: the same dual coordinate descent as liblinear's, in place; at a tight tol both reach the optimum
    ours = LinearSVM(lam=lam, tol=1e-10).fit(X, y)
    ref = LinearSVC(
        C=1 / (lam * m), loss="hinge", fit_intercept=False, dual=True, max_iter=1_000_000, tol=1e-10,
        random_state=0,
    ).fit(X, y)
    assert ours.C_ == pytest.approx(1 / (lam * m))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-8)
    assert ours.converged_ and ours.classes_.tolist() == [0, 1]


def test_linear_svm_minimises_the_papers_objective():
    # the liblinear solution is (near) optimal for lam/2 ||w||^2 + (1/m) sum hinge
    X, y = _blobs(seed=1)
    lam = 0.05
    w = LinearSVM(lam=lam, tol=1e-8, max_iter=100_000).fit(X, y).coef_.ravel()
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
    ours = LinearSVM(C=0.5, tol=1e-10).fit(X, y)
    ref = LinearSVC(C=0.5, loss="hinge", fit_intercept=False, max_iter=1_000_000, tol=1e-10, random_state=0).fit(X, y)
    assert ours.C_ == 0.5
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    assert ours.decision_function(X).shape == (80, 3)


def test_linear_svm_squared_hinge_with_intercept():
    X, y = _blobs()
    ours = LinearSVM(C=1.0, loss="squared_hinge", fit_intercept=True, tol=1e-10).fit(X, y)
    ref = LinearSVC(C=1.0, fit_intercept=True, dual=True, max_iter=1_000_000, tol=1e-10, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("C", [0.3, 10.0])
def test_kernel_svm_equals_rbf_svc(n_classes, C):
    X, y = _blobs(n_classes=n_classes)
    Xt, _ = _blobs(n=30, n_classes=n_classes, seed=5)
    sigma = 1.8
    ek = ExactKernel(sigma=sigma).fit(X)
    ours = KernelSVM(C=C, fit_intercept=True).fit(ek.transform(X), y)
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
    ours = KernelSVM(lam=lam, fit_intercept=True).fit(K, y)
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


# ----------------------------------------------------------------------------- bias arms (Sun et al. 2018)


@pytest.mark.parametrize("lam", [1e-3, 0.05])
def test_linear_svm_intercept_arm_is_liblinear_with_fit_intercept(lam):
    # the authors' code fits a bias: our bias arm is liblinear's fit_intercept=True on the same data
    X, y = _blobs(seed=2)
    X = X + 3.0  # an off-centre cloud, so the bias matters
    m = X.shape[0]
    ours = LinearSVM(lam=lam, fit_intercept=True, tol=1e-10).fit(X, y)
    ref = LinearSVC(C=1 / (lam * m), loss="hinge", fit_intercept=True, dual=True, max_iter=1_000_000,
                    tol=1e-10, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    assert abs(ours.intercept_[0]) > 1e-3
    # a bias changes the solution: the no-bias fit differs
    nob = LinearSVM(lam=lam).fit(X, y)
    assert not np.allclose(nob.coef_, ours.coef_, atol=1e-3)


def test_linear_svm_without_bias_has_zero_intercept():
    X, y = _blobs(seed=3)
    svm = LinearSVM(lam=0.01).fit(X + 3.0, y)
    np.testing.assert_array_equal(svm.intercept_, [0.0])
    np.testing.assert_allclose(svm.decision_function(X), X @ svm.coef_.ravel(), rtol=1e-12)


@pytest.mark.parametrize("lam", [1e-3, 0.05])
def test_kernel_svm_without_bias_equals_linear_svm_on_the_features(lam):
    # K = X X^T is the linear kernel: the no-bias kernel SVM must be the no-bias linear SVM on X
    X, y = _blobs(seed=4)
    Xt, _ = _blobs(n=30, seed=6)
    ksvm = KernelSVM(lam=lam, tol=1e-10, max_iter=1_000_000).fit(X @ X.T, y)
    lsvm = LinearSVM(lam=lam, tol=1e-10, max_iter=1_000_000).fit(X, y)
    assert ksvm.converged_ and lsvm.converged_
    np.testing.assert_allclose(ksvm.decision_function(Xt @ X.T), lsvm.decision_function(Xt), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(ksvm.predict(Xt @ X.T), lsvm.predict(Xt))
    np.testing.assert_array_equal(ksvm.intercept_, [0.0])


def test_kernel_svm_without_bias_minimises_the_papers_objective():
    # f = K beta: lam/2 beta^T K beta + mean hinge(y f) is minimal at the fitted beta (Gaussian kernel)
    X, y = _blobs(seed=7)
    K = gaussian_kernel(X, sigma=2.0)
    lam = 0.02
    svm = KernelSVM(lam=lam, tol=1e-8, max_iter=1_000_000).fit(K, y)
    beta = svm.dual_coef_.ravel()
    ypm = np.where(y == svm.classes_[1], 1.0, -1.0)

    def objective(b):
        return 0.5 * lam * b @ K @ b + np.mean(np.maximum(0.0, 1.0 - ypm * (K @ b)))

    best = objective(beta)
    rng = np.random.RandomState(0)
    for _ in range(50):
        assert objective(beta + 1e-3 * rng.standard_normal(beta.size)) >= best - 1e-9
    # libsvm's SVC (with a bias) is a different solution
    with_bias = KernelSVM(lam=lam, fit_intercept=True).fit(K, y)
    assert abs(with_bias.intercept_[0]) > 1e-3


def test_kernel_svm_without_bias_reports_convergence():
    X, y = _blobs(seed=8)
    K = gaussian_kernel(X, sigma=1.0)
    assert KernelSVM(lam=1e-2).fit(K, y).converged_
    with pytest.warns(ConvergenceWarning):
        capped = KernelSVM(lam=1e-7, max_iter=3).fit(K, y)
    assert capped.n_iter_ == 3 and not capped.converged_


def test_kernel_svm_eigen_cache_is_keyed_by_the_kernel():
    from rfrepro.models import svm as svm_mod

    X, y = _blobs(seed=9)
    K1, K2 = gaussian_kernel(X, sigma=1.0), gaussian_kernel(X, sigma=3.0)
    a = KernelSVM(lam=0.01).fit(K1, y).dual_coef_
    b = KernelSVM(lam=0.01).fit(K2, y).dual_coef_  # another kernel: not served from the cache
    svm_mod._EIGEN_CACHE.clear()
    np.testing.assert_array_equal(KernelSVM(lam=0.01).fit(K2, y).dual_coef_, b)
    assert not np.allclose(a, b)
    assert len(svm_mod._EIGEN_CACHE) == 1
