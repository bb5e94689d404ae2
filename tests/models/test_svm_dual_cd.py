"""LinearSVM's solver (dual coordinate descent on dense rows in place, or on CSR rows) against liblinear;
warm starts along the lambda path; the CV grid's edges."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from rfrepro.features import RandomFourierFeatures
from rfrepro.models import svm as svm_mod
from rfrepro.models.svm import SVM_LAM_GRID, LinearSVM
from rfrepro.runner.memory import PeakMemory


def _blobs(n: int = 120, d: int = 6, n_classes: int = 2, seed: int = 0, spread: float = 1.5):
    rng = np.random.RandomState(seed)
    y = rng.randint(n_classes, size=n)
    X = rng.standard_normal((n, d)) + spread * rng.standard_normal((n_classes, d))[y]
    return X, y


def _primal(coef, intercept, X, y, classes, C, loss, scaling):
    """liblinear's objective summed over the one-vs-rest problems: 1/2 ||(w, b/s)||^2 + C sum loss_i."""
    total = 0.0
    positives = classes[1:] if classes.size == 2 else classes
    intercept = np.broadcast_to(intercept, len(coef))  # liblinear's no-bias intercept_ is a scalar 0
    for w, b, c in zip(coef, intercept, positives, strict=True):
        ypm = np.where(y == c, 1.0, -1.0)
        slack = np.maximum(0.0, 1.0 - ypm * (X @ w + b))
        total += 0.5 * (w @ w + (b / scaling) ** 2) + C * np.sum(slack if loss == "hinge" else slack**2)
    return total


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dense_solver_reaches_liblinears_optimum(loss, fit_intercept, dtype, n_classes):
    X, y = _blobs(n_classes=n_classes, seed=n_classes)
    X = (X + 2.0).astype(dtype)  # off-centre, so the bias matters
    C, scaling = 0.5, 2.0
    ours = LinearSVM(C=C, loss=loss, fit_intercept=fit_intercept, intercept_scaling=scaling).fit(X, y)
    ref = LinearSVC(C=C, loss=loss, fit_intercept=fit_intercept, intercept_scaling=scaling, dual=True,
                    max_iter=100_000, tol=1e-4, random_state=0).fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape == (1 if n_classes == 2 else n_classes, 6)
    assert ours.converged_
    X64 = X.astype(np.float64)
    f_ours = _primal(ours.coef_, ours.intercept_, X64, y, ours.classes_, C, loss, scaling)
    f_ref = _primal(ref.coef_, ref.intercept_, X64, y, ref.classes_, C, loss, scaling)
    assert f_ours == pytest.approx(f_ref, rel=1e-4)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=0.02 * np.abs(ref.coef_).max())
    if fit_intercept:
        assert np.abs(ours.intercept_).max() > 1e-2
    else:
        np.testing.assert_array_equal(ours.intercept_, 0.0)
    # predictions agree wherever the reference is not on the fence
    ref_scores = ref.decision_function(X).reshape(len(y), -1)
    top2 = np.sort(ref_scores, axis=1)[:, -2:] if n_classes > 2 else np.c_[np.zeros(len(y)), np.abs(ref_scores)]
    clear = np.abs(top2[:, 1] - top2[:, 0]) > 0.05
    assert clear.mean() > 0.8
    np.testing.assert_array_equal(ours.predict(X)[clear], ref.predict(X)[clear])
    assert ours.decision_function(X).shape == ((len(y),) if n_classes == 2 else (len(y), n_classes))


def test_dense_solver_at_tight_tol_equals_liblinear():
    X, y = _blobs(n_classes=3, seed=5)
    ours = LinearSVM(C=1.0, tol=1e-10).fit(X, y)
    ref = LinearSVC(C=1.0, loss="hinge", fit_intercept=False, dual=True, tol=1e-10, max_iter=1_000_000,
                    random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-7)


def test_dense_solver_is_deterministic_under_the_seed_and_the_thread_count():
    X, y = _blobs(n=200, n_classes=4, seed=6)
    fits = []
    previous = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            fits.append(LinearSVM(C=2.0, random_state=3).fit(X, y).coef_)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(fits[0], fits[1])
    other = LinearSVM(C=2.0, random_state=4).fit(X, y)
    assert not np.array_equal(other.coef_, fits[0])  # another visiting order: the same optimum to within tol
    np.testing.assert_allclose(other.coef_, fits[0], atol=0.02 * np.abs(fits[0]).max())


def test_dense_solver_reports_the_cap_on_passes():
    X, y = _blobs(seed=7, spread=0.3)
    with pytest.warns(Warning, match="max_iter=2"):
        capped = LinearSVM(C=100.0, max_iter=2).fit(X, y)
    assert capped.n_iter_ == 2 and not capped.converged_


def test_dense_fit_allocates_no_copy_of_the_features():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((20_000, 500))
    y = (X[:, 0] + X[:, 1] + rng.standard_normal(20_000) > 0).astype(int)
    LinearSVM(lam=1e-2).fit(X[:50], y[:50])  # compiled code loaded before measuring
    with PeakMemory() as mem:
        svm = LinearSVM(lam=1e-2).fit(X, y)
    assert svm.converged_
    # liblinear's copy alone would be about 2x X.nbytes (16 bytes per value)
    assert mem.traced_peak < 0.3 * X.nbytes
    assert mem.rss_peak - mem.rss_start < 0.3 * X.nbytes


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gram_form_runs_the_same_steps_as_the_row_form(loss, fit_intercept, n_classes):
    # wide features (D > n): the solver steps on the rows' Gram block; same seed -> same passes and weights
    X, y = _blobs(n=90, d=200, n_classes=n_classes, seed=3, spread=0.3)
    codes = np.unique(y, return_inverse=True)[1]
    rows = np.sort(np.random.RandomState(1).choice(90, 60, replace=False))
    for C in (0.01, 30.0):
        args = dict(C=C, hinge=loss == "hinge", bias=1.0 if fit_intercept else 0.0, tol=1e-6, max_iter=3000)
        W, passes = svm_mod.dual_cd_ovr(X, rows, codes[rows], n_classes, rng=np.random.RandomState(2), **args)
        Wg, passes_g = svm_mod.dual_cd_ovr(X, rows, codes[rows], n_classes, rng=np.random.RandomState(2),
                                           gram=X[rows] @ X[rows].T, **args)
        np.testing.assert_array_equal(passes_g, passes)
        np.testing.assert_allclose(Wg, W, rtol=0, atol=1e-10 * np.abs(W).max())
        assert np.abs(W).max() > 0.01


def test_wide_features_use_the_gram_and_keep_the_row_forms_model(monkeypatch):
    X, y = _blobs(n=150, d=400, n_classes=2, seed=5, spread=0.2)
    assert svm_mod._gram(X) is not None and svm_mod._gram(X[:, :100]) is None
    assert svm_mod._gram(X[:, :200].astype(np.float32)) is not None  # D >= n in either dtype
    assert svm_mod._gram(X[:, :149].astype(np.float32)) is None
    assert svm_mod._gram(sp.csr_matrix(X)) is None
    fitted = LinearSVM(lam="cv").fit(X, y)
    monkeypatch.setattr(svm_mod, "_gram", lambda X: None)
    rows_form = LinearSVM(lam="cv").fit(X, y)
    assert fitted.lam_ == rows_form.lam_ and fitted.n_iter_ == rows_form.n_iter_
    np.testing.assert_allclose(fitted.coef_, rows_form.coef_, rtol=0, atol=1e-10 * np.abs(rows_form.coef_).max())


def test_only_the_lambda_search_pays_for_the_gram(monkeypatch):
    """A fit at a given lam or C runs on the rows: n^2 D flops of Gram for a few passes would be a loss."""
    X, y = _blobs(n=150, d=400, n_classes=2, seed=5, spread=0.2)
    calls = []
    real = svm_mod._gram
    monkeypatch.setattr(svm_mod, "_gram", lambda X: calls.append(X.shape) or real(X))
    LinearSVM(lam=1e-3).fit(X, y)
    LinearSVM(lam=None, C=1.0).fit(X, y)
    assert calls == []
    LinearSVM(lam="cv").fit(X, y)
    assert calls == [(150, 400)]


def test_gram_of_other_rows_raises():
    X, y = _blobs(n=20, d=40)
    with pytest.raises(ValueError, match="Gram matrix of the 20 rows"):
        svm_mod.dual_cd_ovr(X, np.arange(20), y, 2, C=1.0, hinge=True, bias=0.0, tol=1e-3, max_iter=10,
                            rng=np.random.RandomState(0), gram=np.eye(10))


# ----------------------------------------------------------------------------- CSR input


@pytest.mark.parametrize("n_classes", [2, 3])
def test_csr_input_gives_the_dense_solution(n_classes):
    X, y = _blobs(n_classes=n_classes, seed=8)
    X[np.abs(X) < 0.7] = 0.0
    kw = dict(lam=0.01, fit_intercept=True, tol=1e-10, max_iter=1_000_000)
    dense = LinearSVM(**kw).fit(X, y)
    sparse = LinearSVM(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_csr_input_in_the_cv_search():
    X, y = _blobs(n=150, seed=9, spread=0.6)
    X[np.abs(X) < 0.5] = 0.0
    # not the smallest lams: their search fits stop at CV_MAX_ITER passes, where the solvers' iterates differ
    grid = [1e-3, 1e-2, 1e-1]
    dense = LinearSVM(lam="cv", lam_grid=grid).fit(X, y)
    sparse = LinearSVM(lam="cv", lam_grid=grid).fit(sp.csr_matrix(X, dtype=np.float32), y)
    assert sparse.lam_ == dense.lam_
    assert dense.lam_ in grid and not dense.lam_at_edge_
    assert sparse.cv_errors_ == pytest.approx(dense.cv_errors_, abs=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_csr_rows_run_the_dense_rows_steps(loss, n_classes):
    # the same seed visits the same coordinates: the CSR dot and axpy skip zeros, the iterates agree to round-off
    X, y = _blobs(n=200, d=30, n_classes=n_classes, seed=4)
    X[np.abs(X) < 1.0] = 0.0
    codes = np.unique(y, return_inverse=True)[1]
    rows = np.arange(1, 200, 2)
    args = dict(C=2.0, hinge=loss == "hinge", bias=1.0, tol=1e-6, max_iter=5000)
    W, passes = svm_mod.dual_cd_ovr(X, rows, codes[rows], n_classes, rng=np.random.RandomState(3), **args)
    Ws, passes_s = svm_mod.dual_cd_ovr(sp.csr_matrix(X), rows, codes[rows], n_classes,
                                       rng=np.random.RandomState(3), **args)
    np.testing.assert_array_equal(passes_s, passes)
    np.testing.assert_allclose(Ws, W, rtol=0, atol=1e-9 * np.abs(W).max())


# ----------------------------------------------------------------------------- warm starts


@pytest.mark.parametrize("sparse", [False, True])
def test_a_warm_start_at_the_optimum_stops_almost_at_once(sparse):
    X, y = _blobs(n=150, d=8, seed=6, spread=0.8)
    X = sp.csr_matrix(X) if sparse else X
    args = dict(C=1.0, hinge=True, bias=0.0, tol=1e-8, max_iter=100_000)
    alpha = np.zeros((1, 150))
    W, passes = svm_mod.dual_cd_ovr(X, np.arange(150), y, 2, rng=np.random.RandomState(0), alpha=alpha, **args)
    assert passes[0] > 1000 and 0 < np.count_nonzero(alpha) < 150  # alpha now holds the optimum's duals
    W2, passes2 = svm_mod.dual_cd_ovr(X, np.arange(150), y, 2, rng=np.random.RandomState(1), alpha=alpha.copy(),
                                      **args)
    assert passes2[0] < passes[0] / 20  # the last pass's own steps moved its gradients by more than 1e-8
    np.testing.assert_allclose(W2, W, rtol=0, atol=1e-6 * np.abs(W).max())


def test_a_warm_start_reaches_the_cold_optimum():
    # the duals of C = 0.1 start the C = 1 problem (feasible: the bound grows); both runs converge
    X, y = _blobs(n=300, d=10, n_classes=3, seed=7, spread=0.7)
    args = dict(C=1.0, hinge=True, bias=1.0, tol=1e-5, max_iter=100_000)
    start = np.zeros((3, 300))
    svm_mod.dual_cd_ovr(X, np.arange(300), y, 3, rng=np.random.RandomState(0), alpha=start, **{**args, "C": 0.1})
    cold, cold_passes = svm_mod.dual_cd_ovr(X, np.arange(300), y, 3, rng=np.random.RandomState(0), **args)
    warm, warm_passes = svm_mod.dual_cd_ovr(X, np.arange(300), y, 3, rng=np.random.RandomState(0), alpha=start,
                                            **args)
    assert np.all(cold_passes < 100_000) and np.all(warm_passes < 100_000)
    assert not np.array_equal(warm_passes, cold_passes)  # it did start elsewhere
    classes = np.arange(3)
    f_cold = _primal(cold[:, :-1], cold[:, -1], X, y, classes, 1.0, "hinge", 1.0)
    f_warm = _primal(warm[:, :-1], warm[:, -1], X, y, classes, 1.0, "hinge", 1.0)
    assert f_warm == pytest.approx(f_cold, rel=1e-4)


def test_warm_starts_keep_a_solution_and_shorten_a_small_step_in_C():
    # RKS features of a checkerboard, tol 1e-3: a start at the solution for the same C stops within three
    # passes (a cold start takes 100-300); a step of 10% in C takes fewer passes from the previous duals
    # than from zero, over six seeds 0.43 of them in all (a decade's step, the search grid's, gains nothing)
    from rfrepro.data.synthetic import checkerboard
    from rfrepro.kernels import resolve_bandwidth

    n = 400
    X, y = checkerboard(n, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    sigma = resolve_bandwidth(X, "median", kernel="gaussian")
    Z = RandomFourierFeatures(256, sigma=sigma, random_state=0).fit_transform(X).astype(np.float32)
    args = dict(hinge=True, bias=0.0, tol=1e-3, max_iter=100_000)
    C = 1.0 / (1e-3 * n)
    cold_total = warm_total = 0
    for seed in range(6):
        duals = np.zeros((1, n))
        svm_mod.dual_cd_ovr(Z, np.arange(n), y, 2, C=C, rng=np.random.RandomState(seed), alpha=duals, **args)
        _, passes = svm_mod.dual_cd_ovr(Z, np.arange(n), y, 2, C=C, rng=np.random.RandomState(seed + 7),
                                        alpha=duals.copy(), **args)
        assert passes[0] <= 3
        _, cold = svm_mod.dual_cd_ovr(Z, np.arange(n), y, 2, C=1.1 * C, rng=np.random.RandomState(seed + 7), **args)
        _, warm = svm_mod.dual_cd_ovr(Z, np.arange(n), y, 2, C=1.1 * C, rng=np.random.RandomState(seed + 7),
                                      alpha=duals, **args)
        cold_total, warm_total = cold_total + cold[0], warm_total + warm[0]
    assert warm_total < 0.7 * cold_total


def test_the_lambda_search_follows_the_path_from_warm_starts(monkeypatch):
    # each lam's fold fits start from the same folds' duals at the previous (larger) lam; the final fit
    # from the chosen lam's fold duals, each row's mean over its two folds, times the C ratio |fold| / n
    X, y = _blobs(n=90, d=5, seed=2, spread=0.5)
    starts, real = [], svm_mod.dual_cd_ovr

    def spy(X, rows, codes, k, **kw):
        given = kw["alpha"].copy()
        W, n_iter = real(X, rows, codes, k, **kw)
        starts.append((rows.size, kw["C"], given, kw["alpha"].copy()))
        return W, n_iter

    monkeypatch.setattr(svm_mod, "dual_cd_ovr", spy)
    monkeypatch.setattr(svm_mod, "CV_EDGE_EXTENSIONS", 0)
    grid = [1e-2, 1e-1, 1.0]
    svm = LinearSVM(lam="cv", lam_grid=grid).fit(X, y)
    assert sorted(svm.cv_errors_) == grid and len(starts) == 10
    for f in range(3):  # lam 1 from zero, lam 0.1 from lam 1's duals, lam 0.01 from lam 0.1's
        assert not starts[f][2].any() and starts[f][3].any()
        np.testing.assert_array_equal(starts[3 + f][2], np.minimum(starts[f][3], starts[3 + f][1]))
        np.testing.assert_array_equal(starts[6 + f][2], starts[3 + f][3])
    chosen = 3 * grid[::-1].index(svm.lam_)
    folds = list(svm_mod.StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    expected, count = np.zeros((1, 90)), np.zeros(90)
    for (tr, _), fit in zip(folds, starts[chosen:chosen + 3], strict=True):
        expected[:, tr] += fit[3] * tr.size / 90
        count[tr] += 1
    assert starts[9][:2] == (90, svm.C_) and np.all(count == 2)
    np.testing.assert_allclose(starts[9][2], expected / 2)


# ----------------------------------------------------------------------------- lam="cv": the grid's edges


@pytest.fixture(scope="module")
def noisy_classes():
    """Two overlapping classes, 400 training rows, 500 RKS features: the CV error is least at lam = 1e-2."""
    rng = np.random.RandomState(1)
    X = rng.randn(400, 2)
    y = np.where(X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) + 0.6 * rng.randn(400) > 0, 1, -1)
    return RandomFourierFeatures(500, sigma=0.3, random_state=0).fit(X).transform(X), y


def test_cv_with_an_interior_optimum_does_not_extend(noisy_classes):
    Z, y = noisy_classes
    cv = LinearSVM(lam="cv").fit(Z, y)
    assert sorted(cv.cv_errors_) == sorted(SVM_LAM_GRID)
    assert cv.lam_ == 1e-2 and not cv.lam_at_edge_
    assert cv.cv_errors_[1e-2] == pytest.approx(0.1674, abs=1e-3)


def test_cv_extends_past_an_end_until_the_optimum(noisy_classes):
    Z, y = noisy_classes
    cv = LinearSVM(lam="cv", lam_grid=[1e-4, 1e-3]).fit(Z, y)
    # 1e-3 wins, so 1e-2 is tried; it wins, so 1e-1 is; that loses: the choice is interior
    assert sorted(cv.cv_errors_) == pytest.approx([1e-4, 1e-3, 1e-2, 1e-1], rel=1e-12)
    assert cv.lam_ == pytest.approx(1e-2) and not cv.lam_at_edge_


def test_cv_extensions_are_bounded(noisy_classes, monkeypatch):
    monkeypatch.setattr(svm_mod, "CV_EDGE_EXTENSIONS", 1)
    Z, y = noisy_classes
    cv = LinearSVM(lam="cv", lam_grid=[1e-4, 1e-3]).fit(Z, y)
    assert len(cv.cv_errors_) == 3 and cv.lam_ == pytest.approx(1e-2) and cv.lam_at_edge_


def test_cv_finds_an_optimum_above_the_default_grid():
    # D >> n, weak mean shift: below lam ~ 1 every lam gives the hard-margin SVM (the same error);
    # larger lams move towards the class-mean classifier, which is better here
    rng = np.random.RandomState(1)
    y = rng.randint(2, size=200)
    X = rng.randn(200, 1000) + 1.5 * (2 * y[:, None] - 1) / np.sqrt(1000)
    cv = LinearSVM(lam="cv").fit(X, y)
    assert cv.lam_ == 10.0 and not cv.lam_at_edge_
    assert sorted(cv.cv_errors_)[-3:] == [1.0, 10.0, 100.0]
    assert cv.cv_errors_[10.0] == pytest.approx(0.21, abs=1e-3)
    assert min(cv.cv_errors_[lam] for lam in SVM_LAM_GRID) == pytest.approx(0.235, abs=1e-3)
