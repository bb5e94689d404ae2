"""Tests of the primal (truncated Newton) squared-hinge SVM against liblinear's dual=False solver."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

import rfrepro.models.primal_svm as primal_svm
from rfrepro.models import PrimalLinearSVM
from rfrepro.models.svm import SVM_LAM_GRID


def objective(coef: np.ndarray, X, y: np.ndarray, C: float) -> float:
    """0.5 ||w||^2 + C sum max(0, 1 - y w.x)^2 summed over the one-vs-rest problems (y: labels)."""
    classes = np.unique(y)
    targets = [classes[1]] if classes.size == 2 else classes
    total = 0.0
    for w, c in zip(np.atleast_2d(coef), targets, strict=True):
        s = np.where(y == c, 1.0, -1.0)
        total += 0.5 * w @ w + C * np.sum(np.maximum(0.0, 1.0 - s * np.asarray(X @ w)) ** 2)
    return float(total)


def liblinear(X, y, C: float) -> LinearSVC:
    return LinearSVC(loss="squared_hinge", dual=False, fit_intercept=False, C=C, tol=1e-12, max_iter=10000).fit(X, y)


def dense_problem(n: int = 2000, D: int = 50, n_classes: int = 2, seed: int = 0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, D))
    scores = X @ rng.standard_normal((D, n_classes)) + rng.standard_normal((n, n_classes))
    y = scores.argmax(1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)
    return X, y


def sparse_problem(n: int = 2000, D: int = 300, seed: int = 0):
    rng = np.random.RandomState(seed)
    X = sp.random(n, D, density=0.05, format="csr", random_state=rng)
    y = (X @ rng.standard_normal(D) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("solver", ["auto", "cg", "gram"])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_dense_objective_equals_liblinear(C, solver):
    X, y = dense_problem()
    ours = PrimalLinearSVM(C=C, tol=1e-8, solver=solver).fit(X, y)
    ref = objective(liblinear(X, y, C).coef_, X, y, C)
    assert ours.converged_ and 1 <= ours.n_iter_ < 30 and ours.C_ == C
    assert abs(objective(ours.coef_, X, y, C) - ref) <= 1e-6 * ref
    assert np.all(ours.intercept_ == 0.0) and ours.coef_.shape == (1, 50)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_csr_objective_equals_liblinear_and_dense(C):
    X, y = sparse_problem()
    ours = PrimalLinearSVM(C=C, tol=1e-8).fit(X, y)
    assert ours.solver_ == "cg" and ours.converged_
    ref = objective(liblinear(X, y, C).coef_, X, y, C)
    assert abs(objective(ours.coef_, X, y, C) - ref) <= 1e-6 * ref
    dense = PrimalLinearSVM(C=C, tol=1e-8, solver="cg").fit(X.toarray(), y)
    np.testing.assert_allclose(ours.coef_, dense.coef_, rtol=0, atol=1e-6 * np.abs(dense.coef_).max())


def test_default_tol_is_close_to_the_optimum():
    X, y = dense_problem(seed=3)
    C = 1.0
    ref = objective(liblinear(X, y, C).coef_, X, y, C)
    ours = PrimalLinearSVM(C=C).fit(X, y)
    assert abs(objective(ours.coef_, X, y, C) - ref) <= 1e-6 * ref


def test_float32_rows_reach_the_float64_optimum():
    X, y = dense_problem(seed=4)
    X32 = X.astype(np.float32)
    ours = PrimalLinearSVM(C=1.0, tol=1e-8).fit(X32, y)
    ref = objective(liblinear(X32.astype(np.float64), y, 1.0).coef_, X32.astype(np.float64), y, 1.0)
    assert abs(objective(ours.coef_, X32.astype(np.float64), y, 1.0) - ref) <= 1e-6 * ref


def test_sparse_input_stays_sparse_with_many_columns():
    rng = np.random.RandomState(1)
    rows, cols = rng.randint(500, size=5000), rng.randint(2_000_000, size=5000)
    X = sp.csr_matrix((rng.standard_normal(5000), (rows, cols)), shape=(500, 2_000_000))
    y = rng.randint(2, size=500)
    m = PrimalLinearSVM(C=1.0).fit(X, y)
    assert m.solver_ == "cg" and m.coef_.shape == (1, 2_000_000) and m.converged_


def test_multiclass_one_vs_rest_agrees_with_liblinear():
    X, y = dense_problem(n=1500, D=30, n_classes=4, seed=2)
    C = 0.5
    ours = PrimalLinearSVM(C=C, tol=1e-8).fit(X, y)
    ref = liblinear(X, y, C)
    assert ours.coef_.shape == (4, 30) and ours.classes_.tolist() == [0, 1, 2, 3]
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.99
    assert abs(objective(ours.coef_, X, y, C) - objective(ref.coef_, X, y, C)) <= 1e-6 * objective(ref.coef_, X, y, C)
    assert ours.decision_function(X).shape == (1500, 4)


def test_lam_is_C_over_m():
    X, y = dense_problem(n=400, D=10)
    m = PrimalLinearSVM(lam=1e-3).fit(X, y)
    assert m.C_ == pytest.approx(1.0 / (1e-3 * 400)) and m.lam_ == 1e-3
    assert PrimalLinearSVM(C=2.0).fit(X, y).lam_ == pytest.approx(1.0 / (2.0 * 400))


def test_deterministic():
    X, y = dense_problem(seed=5)
    a = PrimalLinearSVM(lam="cv").fit(X, y)
    b = PrimalLinearSVM(lam="cv").fit(X, y)
    assert a.lam_ == b.lam_ and a.cv_errors_ == b.cv_errors_
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_cv_picks_a_grid_lam_and_refits_to_the_fixed_lam_optimum(monkeypatch):
    X, y = dense_problem(n=1200, D=40, seed=6)
    y[::7] = 1 - y[::7]  # label noise, so the lambdas' errors differ
    m = PrimalLinearSVM(lam="cv", tol=1e-8).fit(X, y)
    assert m.lam_ in SVM_LAM_GRID and sorted(m.cv_errors_) == sorted(SVM_LAM_GRID)
    errors = [m.cv_errors_[lam] for lam in sorted(SVM_LAM_GRID, reverse=True)]
    assert m.cv_errors_[m.lam_] == min(errors)
    assert m.lam_ == sorted(SVM_LAM_GRID, reverse=True)[int(np.argmin(errors))]  # ties to the larger lam
    assert m.cv_unconverged_ == 0 and m.C_ == pytest.approx(1.0 / (m.lam_ * 1200))
    calls = []
    real = primal_svm.newton
    monkeypatch.setattr(primal_svm, "newton", lambda *a, **k: calls.append(1) or real(*a, **k))
    fixed = m.at_chosen_lam().fit(X, y)
    assert len(calls) == 1 and fixed.lam_ == m.lam_ and not hasattr(fixed, "cv_errors_")
    a, b = objective(m.coef_, X, y, m.C_), objective(fixed.coef_, X, y, m.C_)
    assert abs(a - b) <= 1e-6 * b


def test_cv_with_three_classes_counts_its_fits(monkeypatch):
    X, y = dense_problem(n=600, D=12, n_classes=3, seed=7)
    calls = []
    real = primal_svm.newton
    monkeypatch.setattr(primal_svm, "newton", lambda *a, **k: calls.append(1) or real(*a, **k))
    m = PrimalLinearSVM(lam="cv", lam_grid=(1e-3, 1e-2), cv_folds=4).fit(X, y)
    assert len(calls) == 3 * (4 * 2 + 1)  # classes x (folds x lams + the final fit)
    assert m.lam_ in (1e-3, 1e-2) and m.coef_.shape == (3, 12)


@pytest.mark.parametrize("params, message", [
    ({"lam": -1.0}, "'lam' parameter of PrimalLinearSVM must be"),
    ({"lam": "loo"}, "'lam' parameter of PrimalLinearSVM must be"),
    ({"C": 0}, "'C' parameter of PrimalLinearSVM must be"),
    ({"tol": 0.0}, "'tol' parameter of PrimalLinearSVM must be"),
    ({"C": 1.0, "tol": float("inf")}, "'tol' parameter of PrimalLinearSVM must be"),
    ({"lam": float("inf")}, "'lam' parameter of PrimalLinearSVM must be"),
    ({"max_iter": 0}, "'max_iter' parameter of PrimalLinearSVM must be"),
    ({"cv_folds": 1, "lam": "cv"}, "'cv_folds' parameter of PrimalLinearSVM must be"),
    ({"solver": "lbfgs", "C": 1.0}, "'solver' parameter of PrimalLinearSVM must be"),
    ({"lam": 0.1, "C": 1.0}, "give exactly one of C and lam"),
    ({"lam": "cv", "C": 1.0}, "give exactly one of C and lam"),
    ({}, "give exactly one of C and lam"),
    ({"lam": "cv", "lam_grid": (0.1, -1.0)}, "lam_grid must hold finite numbers > 0"),
])
def test_bad_parameters_raise_one_line(params, message):
    X, y = dense_problem(n=60, D=4)
    with pytest.raises(ValueError, match=message) as info:
        PrimalLinearSVM(**params).fit(X, y)
    assert "\n" not in str(info.value)


def test_gram_solver_refuses_csr_and_one_class_is_an_error():
    X, y = sparse_problem(n=100, D=20)
    with pytest.raises(ValueError, match="solver='gram' needs dense features"):
        PrimalLinearSVM(C=1.0, solver="gram").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        PrimalLinearSVM(C=1.0).fit(np.ones((5, 2)), np.zeros(5))
