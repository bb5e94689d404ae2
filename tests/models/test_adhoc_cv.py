"""lam="cv": ridge by leave-one-out, the linear SVM by k-fold CV, against the old fixed default."""

import numpy as np
import pytest

from rfrepro.features import RandomFourierFeatures
from rfrepro.models import LinearSVM, RidgeRegression
from rfrepro.models.ridge import LAM_GRID
from rfrepro.models.svm import SVM_LAM_GRID


def _rel_rmse(y, yhat):
    return float(np.linalg.norm(y - yhat) / np.linalg.norm(y))


@pytest.fixture(scope="module")
def noisy_regression():
    """300 training rows of a smooth function plus noise, 1000 RKS features (D > n: lam -> 0 interpolates)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(2300, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * rng.randn(2300)
    fmap = RandomFourierFeatures(1000, sigma=0.5, random_state=0).fit(X[:300])
    return fmap.transform(X[:300]), y[:300], fmap.transform(X[300:]), y[300:]


def test_ridge_cv_beats_the_old_fixed_default(noisy_regression):
    Ztr, ytr, Zte, yte = noisy_regression
    old = RidgeRegression(lam=1e-3).fit(Ztr, ytr)
    cv = RidgeRegression(lam="cv").fit(Ztr, ytr)
    # lam = 1e-3 nearly interpolates the noise (sd 0.5 on a signal of sd ~0.8): 0.70 against 0.54
    assert _rel_rmse(yte, old.predict(Zte)) == pytest.approx(0.7001, abs=1e-3)
    assert _rel_rmse(yte, cv.predict(Zte)) == pytest.approx(0.5416, abs=1e-3)
    assert cv.lam_ == 1.0 and LAM_GRID[0] < cv.lam_ < LAM_GRID[-1]


def test_ridge_cv_matches_a_fixed_fit_at_its_choice(noisy_regression):
    Ztr, ytr, Zte, _ = noisy_regression
    cv = RidgeRegression(lam="cv").fit(Ztr, ytr)
    fixed = RidgeRegression(lam=cv.lam_).fit(Ztr, ytr)
    np.testing.assert_allclose(cv.predict(Zte), fixed.predict(Zte), rtol=1e-6, atol=1e-8)
    # multi-output targets keep their columns
    two = RidgeRegression(lam="cv").fit(Ztr, np.c_[ytr, ytr])
    assert two.predict(Zte).shape == (Zte.shape[0], 2)


@pytest.mark.parametrize("params, match", [
    ({"lam": "loo"}, "'cv'"),
    ({"lam": "cv", "lam_grid": [0.0, 1.0]}, "lam_grid"),
    ({"lam": "cv", "precomputed": True}, "precomputed"),
])
def test_ridge_cv_bad_input_names_the_parameter(params, match):
    Z = np.eye(4)
    with pytest.raises(ValueError, match=match):
        RidgeRegression(**params).fit(Z, np.arange(4.0))


@pytest.fixture(scope="module")
def noisy_classes():
    """Two overlapping classes, 400 training rows, 500 RKS features."""
    rng = np.random.RandomState(1)
    X = rng.randn(2400, 2)
    y = np.where(X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) + 0.6 * rng.randn(2400) > 0, 1, -1)
    fmap = RandomFourierFeatures(500, sigma=0.3, random_state=0).fit(X[:400])
    return fmap.transform(X[:400]), y[:400], fmap.transform(X[400:]), y[400:]


def test_svm_cv_beats_the_old_fixed_default(noisy_classes):
    Ztr, ytr, Zte, yte = noisy_classes
    old = LinearSVM(lam=1e-3).fit(Ztr, ytr)
    cv = LinearSVM(lam="cv").fit(Ztr, ytr)
    assert old.score(Zte, yte) == pytest.approx(0.8175, abs=1e-3)
    assert cv.score(Zte, yte) == pytest.approx(0.8195, abs=1e-3)
    assert cv.lam_ == 1e-2 and SVM_LAM_GRID[0] < cv.lam_ < SVM_LAM_GRID[-1]
    assert cv.C_ == pytest.approx(1.0 / (cv.lam_ * 400))
    assert min(cv.cv_errors_.values()) == cv.cv_errors_[cv.lam_]


def test_svm_cv_and_C_are_exclusive():
    with pytest.raises(ValueError, match="exactly one of C and lam"):
        LinearSVM(lam="cv", C=1.0).fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="'cv'"):
        LinearSVM(lam="loo").fit(np.eye(4), [0, 1, 0, 1])
