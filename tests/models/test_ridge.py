"""Tests of ridge regression / KRR and the least-squares classifier."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifier

from rfrepro.models.ridge import LeastSquaresClassifier, RidgeRegression


def _problem(n: int, D: int, seed: int = 0, n_targets: int | None = None):
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((n, D))
    shape = (n,) if n_targets is None else (n, n_targets)
    y = rng.standard_normal(shape)
    return Z, y


def _closed_form(Z, y, lam):
    return np.linalg.inv(Z.T @ Z + lam * np.eye(Z.shape[1])) @ Z.T @ y


@pytest.mark.parametrize("n, D", [(40, 10), (40, 40), (15, 40)], ids=["primal", "square", "dual"])
@pytest.mark.parametrize("lam", [1e-3, 0.7, 25.0])
def test_ridge_equals_closed_form(n, D, lam):
    Z, y = _problem(n, D)
    model = RidgeRegression(lam).fit(Z, y)
    assert model.coef_.shape == (D,)
    np.testing.assert_allclose(model.coef_, _closed_form(Z, y, lam), rtol=1e-8, atol=1e-10)
    Zt = np.random.RandomState(9).standard_normal((5, D))
    np.testing.assert_allclose(model.predict(Zt), Zt @ _closed_form(Z, y, lam), rtol=1e-8, atol=1e-10)


def test_ridge_multi_output():
    Z, Y = _problem(30, 8, n_targets=3)
    model = RidgeRegression(0.5).fit(Z, Y)
    assert model.coef_.shape == (8, 3) and model.predict(Z).shape == (30, 3)
    np.testing.assert_allclose(model.coef_, _closed_form(Z, Y, 0.5), rtol=1e-9)
    for k in range(3):
        np.testing.assert_allclose(RidgeRegression(0.5).fit(Z, Y[:, k]).coef_, model.coef_[:, k])


@pytest.mark.parametrize("lam", [1e-2, 3.0])
def test_primal_and_dual_branches_agree(lam):
    # one problem through both branches: rows of zeros (target 0) leave
    # ||y - Z w||^2 + lam ||w||^2 unchanged but move D = 40 from > n to <= n
    Z, y = _problem(15, 40)
    dual = RidgeRegression(lam).fit(Z, y)  # 15 x 40: dual branch
    Zp = np.vstack([Z, np.zeros((25, 40))])
    yp = np.concatenate([y, np.zeros(25)])
    primal = RidgeRegression(lam).fit(Zp, yp)  # 40 x 40: primal branch
    np.testing.assert_allclose(dual.coef_, primal.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dual.coef_, _closed_form(Z, y, lam), rtol=1e-8, atol=1e-10)
    # the dual solution lies in the row space of Z: w = Z^T (Z Z^T + lam I)^-1 y
    a = np.linalg.solve(Z @ Z.T + lam * np.eye(15), y)
    np.testing.assert_allclose(dual.coef_, Z.T @ a, rtol=1e-8, atol=1e-10)


def test_branches_agree_on_same_data():
    # wide data solved by the dual branch equals the explicit primal solve
    Z, y = _problem(12, 50, seed=3)
    lam = 0.3
    dual = RidgeRegression(lam).fit(Z, y).coef_
    primal = np.linalg.solve(Z.T @ Z + lam * np.eye(50), Z.T @ y)
    np.testing.assert_allclose(dual, primal, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("n, D", [(30, 10), (30, 60)])
def test_precomputed_kernel_push_through(n, D):
    Z, y = _problem(n, D, seed=1)
    Zt = np.random.RandomState(2).standard_normal((8, D))
    lam = 0.4
    on_features = RidgeRegression(lam).fit(Z, y)
    on_kernel = RidgeRegression(lam, precomputed=True).fit(Z @ Z.T, y)
    assert on_kernel.dual_coef_.shape == (n,)
    np.testing.assert_allclose(on_kernel.predict(Z @ Z.T), on_features.predict(Z), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(on_kernel.predict(Zt @ Z.T), on_features.predict(Zt), rtol=1e-8, atol=1e-10)
    assert on_kernel.input_kind == "kernel" and on_features.input_kind == "features"


def test_precomputed_kernel_must_be_square():
    with pytest.raises(ValueError, match="square"):
        RidgeRegression(1.0, precomputed=True).fit(np.ones((5, 4)), np.ones(5))


def test_lam_zero_interpolates_rank_deficient():
    # lam = 0 on rank-deficient Z: least squares, no crash
    Z = np.repeat(np.random.RandomState(0).standard_normal((10, 3)), 2, axis=1)
    y = Z @ np.arange(6.0)
    model = RidgeRegression(0.0).fit(Z, y)
    np.testing.assert_allclose(model.predict(Z), y, atol=1e-8)


@pytest.mark.parametrize("lam", [-1e-6, -1.0, np.nan, np.inf])
def test_bad_lam(lam):
    Z, y = _problem(10, 3)
    with pytest.raises(ValueError, match="lam"):
        RidgeRegression(lam).fit(Z, y)
    with pytest.raises(ValueError, match="lam"):
        LeastSquaresClassifier(lam).fit(Z, (y > 0).astype(int))


def test_ridge_float32_input():
    Z, y = _problem(30, 5)
    m64 = RidgeRegression(0.1).fit(Z, y)
    m32 = RidgeRegression(0.1).fit(Z.astype(np.float32), y)
    np.testing.assert_allclose(m32.coef_, m64.coef_, rtol=1e-4, atol=1e-5)
    assert m32.predict(Z.astype(np.float32)).dtype == np.float64


# ---------------------------------------------------------------- LeastSquaresClassifier


def _classification(n_classes: int, seed: int = 0):
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((60, 8))
    centers = rng.standard_normal((n_classes, 8)) * 1.5
    y = rng.randint(n_classes, size=60)
    Z += centers[y]
    return Z, np.array(["ant", "bee", "cat", "dog"])[y]


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("lam", [1e-3, 2.0])
def test_least_squares_classifier_matches_ridge_classifier(n_classes, lam):
    Z, y = _classification(n_classes)
    Zt, _ = _classification(n_classes, seed=1)
    ours = LeastSquaresClassifier(lam).fit(Z, y)
    ref = RidgeClassifier(alpha=lam, fit_intercept=False, solver="cholesky").fit(Z, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.predict(Zt), ref.predict(Zt))
    np.testing.assert_array_equal(ours.predict(Z), ref.predict(Z))
    np.testing.assert_allclose(
        np.ravel(ours.decision_function(Zt)), np.ravel(ref.decision_function(Zt)), rtol=1e-7, atol=1e-9
    )
    assert ours.score(Z, y) == pytest.approx(ref.score(Z, y))


@pytest.mark.parametrize("n_classes", [2, 4])
def test_decision_function_shape_follows_sklearn(n_classes):
    # scikit-learn's convention (and LinearSVM's): (n_samples,) for two classes,
    # (n_samples, n_classes) otherwise
    Z, y = _classification(n_classes)
    scores = LeastSquaresClassifier(0.1).fit(Z, y).decision_function(Z)
    ref = RidgeClassifier(alpha=0.1, fit_intercept=False).fit(Z, y).decision_function(Z)
    assert scores.shape == ref.shape


def test_least_squares_classifier_precomputed():
    Z, y = _classification(3)
    Zt, _ = _classification(3, seed=1)
    on_features = LeastSquaresClassifier(0.5).fit(Z, y)
    on_kernel = LeastSquaresClassifier(0.5, precomputed=True).fit(Z @ Z.T, y)
    np.testing.assert_array_equal(on_kernel.predict(Zt @ Z.T), on_features.predict(Zt))
    np.testing.assert_allclose(
        on_kernel.decision_function(Zt @ Z.T), on_features.decision_function(Zt), rtol=1e-8, atol=1e-10
    )


def test_least_squares_classifier_needs_two_classes():
    with pytest.raises(ValueError, match="2 classes"):
        LeastSquaresClassifier().fit(np.ones((4, 2)), np.zeros(4))


# ---------------------------------------------------------------- lam="cv" (leave-one-out)


def _brute_force_loo(Z, y, grid):
    """Mean squared leave-one-out error of the +-1 targets per lam, by n refits each."""
    classes = np.unique(y)
    T = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    if len(classes) == 2:
        T = T[:, 1:]
    errors = []
    for lam in grid:
        sq = 0.0
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            w = _closed_form(Z[keep], T[keep], lam)
            sq += np.sum((Z[i] @ w - T[i]) ** 2)
        errors.append(sq / T.size)
    return np.array(errors)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("D", [8, 90], ids=["D<n", "D>n"])
def test_cv_lam_is_the_brute_force_leave_one_out_choice(n_classes, D):
    # D > n is the regime of Schleif's full RFF sets, where a tiny lam interpolates
    rng = np.random.RandomState(3)
    Z, y = _classification(n_classes)
    Z = np.hstack([Z, rng.standard_normal((Z.shape[0], D - Z.shape[1]))])
    grid = [1e-4, 1e-2, 1.0, 10.0, 100.0, 1e4]
    loo = _brute_force_loo(Z, y, grid)
    clf = LeastSquaresClassifier("cv", lam_grid=grid).fit(Z, y)
    assert clf.lam_ == grid[int(np.argmin(loo))]
    # the choice is not at the grid's edge, so the test tells lams apart
    assert clf.lam_ not in (grid[0], grid[-1])
    # and the model is the plain ridge at that lam
    fixed = LeastSquaresClassifier(clf.lam_).fit(Z, y)
    np.testing.assert_allclose(clf.decision_function(Z), fixed.decision_function(Z), rtol=1e-8, atol=1e-10)
    Zt = np.random.RandomState(5).standard_normal((7, D))
    np.testing.assert_array_equal(clf.predict(Zt), fixed.predict(Zt))


def test_cv_grid_order_does_not_matter_and_fixed_lam_is_recorded():
    Z, y = _classification(3)
    a = LeastSquaresClassifier("cv", lam_grid=[100.0, 1e-3, 1.0]).fit(Z, y)
    b = LeastSquaresClassifier("cv", lam_grid=[1e-3, 1.0, 100.0]).fit(Z, y)
    assert a.lam_ == b.lam_
    assert LeastSquaresClassifier(0.25).fit(Z, y).lam_ == 0.25


@pytest.mark.parametrize(("params", "match"), [
    ({"lam": "loo"}, "'cv'"),
    ({"lam": "cv", "lam_grid": []}, "lam_grid"),
    ({"lam": "cv", "lam_grid": [1.0, 0.0]}, "lam_grid"),
    ({"lam": "cv", "precomputed": True}, "precomputed"),
])
def test_cv_bad_params(params, match):
    Z, y = _classification(2)
    with pytest.raises(ValueError, match=match):
        LeastSquaresClassifier(**params).fit(Z @ Z.T if params.get("precomputed") else Z, y)


@pytest.mark.parametrize("n_classes", [2, 5])
def test_cv_on_more_rows_than_features_matches_scikit_learn(n_classes):
    """The Z^T Z route (n > D) picks scikit-learn's lam and its coefficients, without an n x D copy."""
    import tracemalloc

    from sklearn.linear_model import RidgeClassifierCV

    rng = np.random.RandomState(n_classes)
    Z = rng.standard_normal((20000, 40))
    y = np.argmax(Z[:, :n_classes] + 1.5 * rng.standard_normal((20000, n_classes)), axis=1)
    grid = np.logspace(-3, 4, 8)
    ref = RidgeClassifierCV(alphas=grid, fit_intercept=False).fit(Z, y)
    tracemalloc.start()
    clf = LeastSquaresClassifier("cv", lam_grid=grid).fit(Z, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert clf.lam_ == ref.alpha_
    np.testing.assert_allclose(clf.ridge_.coef_, np.asarray(ref.coef_).reshape(-1, 40).T, rtol=1e-7, atol=1e-10)
    assert peak < 0.6 * Z.nbytes  # 2048-row blocks of Z V, never a second n x D array (scikit-learn's U)


@pytest.mark.parametrize("n_classes", [2, 5])
def test_cv_on_fewer_rows_than_features_matches_scikit_learn(n_classes):
    """The Z Z^T route (n <= D) picks scikit-learn's lam and its coefficients."""
    from sklearn.linear_model import RidgeClassifierCV

    rng = np.random.RandomState(10 + n_classes)
    Z = rng.standard_normal((300, 500)) / np.sqrt(500)
    y = np.argmax(Z[:, :n_classes] * 20 + rng.standard_normal((300, n_classes)), axis=1)
    grid = np.logspace(-3, 2, 6)
    ref = RidgeClassifierCV(alphas=grid, fit_intercept=False).fit(Z, y)
    clf = LeastSquaresClassifier("cv", lam_grid=grid).fit(Z, y)
    assert clf.lam_ == ref.alpha_ and clf.lam_ not in (grid[0], grid[-1])
    np.testing.assert_allclose(clf.ridge_.coef_, np.asarray(ref.coef_).reshape(-1, 500).T, rtol=1e-7, atol=1e-10)


def test_cv_loo_rows_averages_the_leave_one_out_error_over_a_subset():
    """loo_rows = m: the lam whose brute-force leave-one-out error, averaged over the same m rows, is least."""
    rng = np.random.RandomState(7)
    Z = rng.standard_normal((120, 6))
    y = (Z[:, 0] + 0.8 * rng.standard_normal(120) > 0).astype(int)
    T = np.where(y == 1, 1.0, -1.0)[:, None]
    grid = [1e-3, 1.0, 10.0, 30.0, 100.0, 1e3]
    per_row = np.array([[float(np.sum((Z[i] @ _closed_form(np.delete(Z, i, 0), np.delete(T, i, 0), lam) - T[i]) ** 2))
                         for i in range(120)] for lam in grid])
    picks = set()
    for seed in range(6):
        clf = LeastSquaresClassifier("cv", lam_grid=grid, loo_rows=15, random_state=seed).fit(Z, y)
        rows = np.sort(np.random.RandomState(seed).choice(120, 15, replace=False))
        assert clf.lam_ == grid[int(np.argmin(per_row[:, rows].mean(1)))]
        picks.add(clf.lam_)
        # the fit itself uses every row: the plain ridge at lam_
        np.testing.assert_allclose(clf.ridge_.coef_, _closed_form(Z, T, clf.lam_), rtol=1e-8)
    assert len(picks) > 1  # 15 rows are few enough for the choice to depend on them: the subset is used
    full = LeastSquaresClassifier("cv", lam_grid=grid).fit(Z, y)
    assert full.lam_ == grid[int(np.argmin(per_row.mean(1)))]
    assert LeastSquaresClassifier("cv", lam_grid=grid, loo_rows=120).fit(Z, y).lam_ == full.lam_
    with pytest.raises(ValueError, match="loo_rows must be an integer >= 1 or None"):
        LeastSquaresClassifier("cv", loo_rows=0).fit(Z, y)


# ---------------------------------------------------------------- sparse (CSR) features


def _sparse_problem(n: int, D: int, seed: int = 0):
    import scipy.sparse as sp

    rng = np.random.RandomState(seed)
    Z = sp.random(n, D, density=0.2, format="csr", random_state=rng)
    Z.data[:] = 1 / np.sqrt(3)  # random binning's values: one per stored entry
    return Z, Z @ rng.standard_normal((D, 3)) + 2.0 * rng.standard_normal((n, 3))


@pytest.mark.parametrize("n, D", [(60, 20), (20, 60)], ids=["primal", "dual"])
@pytest.mark.parametrize("lam", [1e-2, "cv"])
def test_ridge_on_csr_equals_ridge_on_the_dense_array(n, D, lam):
    Z, Y = _sparse_problem(n, D)
    grid = [1e-4, 1e-2, 1.0, 10.0, 1e3]
    sparse = RidgeRegression(lam, lam_grid=grid).fit(Z, Y)
    dense = RidgeRegression(lam, lam_grid=grid).fit(Z.toarray(), Y)
    assert sparse.lam_ == dense.lam_ and isinstance(sparse.coef_, np.ndarray)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sparse.predict(Z[:5]), dense.predict(Z[:5].toarray()), rtol=1e-8, atol=1e-10)
    if lam == "cv":  # the choice is inside the grid: the search told the lams apart
        assert sparse.lam_ not in (grid[0], grid[-1])


@pytest.mark.parametrize("n, D", [(300, 40), (40, 300)], ids=["primal", "dual"])
@pytest.mark.parametrize("lam", [0.3, "cv"])
def test_least_squares_classifier_on_csr(n, D, lam):
    Z, Y = _sparse_problem(n, D, seed=4)
    y = np.argmax(Z @ np.random.RandomState(1).standard_normal((D, 3)) + 0.3 * Y, axis=1)
    kw = {"loo_rows": 50, "random_state": 0} if lam == "cv" else {}
    sparse = LeastSquaresClassifier(lam, **kw).fit(Z, y)
    dense = LeastSquaresClassifier(lam, **kw).fit(Z.toarray(), y)
    assert sparse.lam_ == dense.lam_
    np.testing.assert_allclose(sparse.ridge_.coef_, dense.ridge_.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sparse.decision_function(Z), dense.decision_function(Z.toarray()), rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_array_equal(sparse.predict(Z), dense.predict(Z.toarray()))


def test_csr_with_millions_of_columns_takes_the_n_by_n_route_without_densifying():
    """D = 2 million columns, 8 stored values a row: the fit holds n x n and D x k arrays, never n x D."""
    import tracemalloc

    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    n, D, per_row = 200, 2_000_000, 8
    Z = sp.csr_matrix((np.full(n * per_row, 1 / np.sqrt(per_row)), rng.randint(0, D, n * per_row),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, D))
    y = rng.standard_normal(n)
    tracemalloc.start()
    model = RidgeRegression("cv", lam_grid=[1e-2, 1.0]).fit(Z, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert model.coef_.shape == (D,)
    assert peak < 10 * 8 * D  # a few D-vectors (the coefficients, Z's transpose); a dense Z is 200 of them
    # the dual route's coefficients: w = Z^T (Z Z^T + lam I)^-1 y
    a = np.linalg.solve((Z @ Z.T).toarray() + model.lam_ * np.eye(n), y)
    np.testing.assert_allclose(model.coef_, Z.T @ a, rtol=1e-8, atol=1e-12)


def test_precomputed_kernel_refuses_sparse_input():
    import scipy.sparse as sp

    K = sp.csr_matrix(np.eye(4))
    with pytest.raises(TypeError, match="[Ss]parse"):
        RidgeRegression(1.0, precomputed=True).fit(K, np.ones(4))


def test_primal_leave_one_out_holds_at_most_two_d_by_d_arrays_beside_the_features():
    # Z^T Z's eigenvectors overwrite it and LAPACK's workspace is numpy's (traced): the
    # search needs about 3 D^2 floats (matrix, workspace 2 D^2) and blocks of Z V, not the
    # 4-5 D^2 of numpy's eigh (a copy of the matrix, an untraced 2 D^2 workspace)
    from rfrepro.runner.memory import PeakMemory

    rng = np.random.RandomState(0)
    Z = rng.standard_normal((3000, 1200))
    y = rng.randint(2, size=3000)
    LeastSquaresClassifier(lam="cv").fit(Z[:300, :100], y[:300])
    with PeakMemory() as mem:
        LeastSquaresClassifier(lam="cv", loo_rows=500).fit(Z, y)
    dd = 1200 * 1200 * 8
    assert mem.traced_peak < 3.6 * dd
    assert mem.rss_peak - mem.rss_start < 3.6 * dd
