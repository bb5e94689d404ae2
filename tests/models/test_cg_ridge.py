"""CG ridge: equals the dense normal-equations solve; sparse input stays sparse; classification."""

import numpy as np
import pytest
import scipy.sparse as sp

from rfrepro.models import CGRidge
from rfrepro.models.cg_ridge import normal_operator


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    Z = sp.random(120, 40, density=0.15, format="csr", random_state=rng)
    y = rng.randn(120)
    return Z, y


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_equals_dense_solve(problem, fit_intercept):
    Z, y = problem
    lam = 0.05
    m = CGRidge(lam=lam, tol=1e-12, maxiter=5000, fit_intercept=fit_intercept).fit(Z, y)
    Zd = Z.toarray()
    b = y.mean() if fit_intercept else 0.0
    w = np.linalg.solve(Zd.T @ Zd + lam * np.eye(40), Zd.T @ (y - b))
    assert m.converged_ and 0 < m.n_iter_ <= 5000
    assert np.allclose(m.coef_[:, 0], w, rtol=1e-8, atol=1e-9)
    assert np.allclose(m.predict(Z), Zd @ w + b, atol=1e-9)


def test_dense_and_sparse_inputs_agree(problem):
    Z, y = problem
    a = CGRidge(lam=0.1, tol=1e-12).fit(Z, y)
    b = CGRidge(lam=0.1, tol=1e-12).fit(Z.toarray(), y)
    assert np.allclose(a.coef_, b.coef_, atol=1e-10)


def test_operator_never_forms_the_gram_matrix(problem, monkeypatch):
    Z, _ = problem
    v = np.arange(40.0)
    Zd = Z.toarray()
    assert np.allclose(normal_operator(Z, 0.3) @ v, Zd.T @ (Zd @ v) + 0.3 * v)


def test_iteration_cap_is_reported(problem):
    Z, y = problem
    m = CGRidge(lam=1e-6, tol=1e-15, maxiter=3).fit(Z, y)
    assert m.n_iter_ == 3 and not m.converged_
    # the run record keeps it (fitted.model_converged), so a study can leave unconverged runs out
    assert {"converged_", "n_iter_", "solver_bytes_"} <= set(CGRidge.recorded_attributes)
    assert CGRidge(lam=0.1, tol=1e-6, maxiter=1000).fit(Z, y).converged_


def test_solver_memory_of_a_dense_z(problem):
    Z, y = problem
    Zd = Z.toarray()
    m = CGRidge(lam=0.1, task="multiclass").fit(Zd, np.arange(120) % 3)
    # the (40, 3) coefficients and one group of six (40, 3) CG blocks
    assert m.operator_bytes_ == Zd.nbytes and m.solver_bytes_ == Zd.nbytes + 8 * 40 * 3 + 6 * 8 * 40 * 3
    assert m.n_groups_ == 1


def test_one_vs_all_classification():
    rng = np.random.RandomState(1)
    X = rng.randn(300, 5)
    y = np.argmax(X[:, :3], axis=1)
    m = CGRidge(lam=1.0, task="multiclass", tol=1e-10).fit(X, y)
    assert m.coef_.shape == (5, 3)
    assert np.mean(m.predict(X) == y) > 0.75
    yb = np.where(X[:, 0] > 0, "a", "b")
    mb = CGRidge(lam=1.0, task="binary", tol=1e-10).fit(X, yb)
    assert set(mb.predict(X)) <= {"a", "b"} and np.mean(mb.predict(X) == yb) > 0.95
    assert mb.decision_function(X).shape == (300,)


def test_float32_features(problem):
    Z, y = problem
    a = CGRidge(lam=0.1, tol=1e-12).fit(Z.astype(np.float32), y)
    b = CGRidge(lam=0.1, tol=1e-12).fit(Z.astype(np.float32).astype(np.float64), y)
    assert np.allclose(a.coef_, b.coef_, atol=1e-10)


@pytest.mark.parametrize("bad", [{"lam": -1}, {"tol": 0}, {"maxiter": 0}, {"task": "ranking"}])
def test_invalid_parameters(problem, bad):
    Z, y = problem
    with pytest.raises(ValueError, match=next(iter(bad))):
        CGRidge(**bad).fit(Z, y)


def _csr_cases():
    rng = np.random.RandomState(3)
    general = sp.random(200, 60, density=0.1, format="csr", random_state=rng)
    constant = general.copy()
    constant.data[:] = 1 / np.sqrt(8)  # random binning's training Z: one value, the pattern path
    empty = sp.csr_matrix(np.array([[0, 1.0, 0, 0], [0, 0, 0, 0], [2.0, 0, 0, 1.0]]))  # empty row and column
    dup = sp.csr_matrix((np.array([1.0, 2.0, 0.5]), np.array([2, 2, 0]), np.array([0, 2, 3])), shape=(2, 3))
    return {"general": general, "constant": constant, "empty row and column": empty, "duplicates": dup,
            "all zero": sp.csr_matrix((5, 4))}


@pytest.mark.parametrize("case", list(_csr_cases()))
def test_fused_operator_matches_two_products(case):
    Z = _csr_cases()[case]
    rng = np.random.RandomState(0)
    A = normal_operator(Z, 0.3)
    for _ in range(3):
        v = rng.randn(Z.shape[1])
        expected = Z.T @ (Z @ v) + 0.3 * v
        assert np.allclose(A @ v, expected, rtol=1e-12, atol=1e-12)


def test_column_major_layout_is_z_by_columns():
    from rfrepro.features import RandomBinning
    from rfrepro.models.cg_ridge import _column_major, _row_order

    X = np.random.RandomState(0).uniform(-1, 1, size=(500, 3))
    Z = RandomBinning(n_components=16, sigma=0.5, random_state=0).fit_transform(X)
    row_of = _row_order(Z)
    assert sorted(row_of) == list(range(Z.shape[0]))  # a permutation of the rows
    # rows renumbered by their first column: consecutive numbers share a bin of the first grid
    first = Z.indices[Z.indptr[:-1]]
    assert np.all(np.diff(first[np.argsort(row_of)]) >= 0)
    colptr, rows, values = _column_major(Z.indptr, Z.indices, Z.data[:1].astype(np.float64), Z.shape[1], row_of)
    assert values.size == 1  # one stored value: not copied per entry
    Zc = sp.csc_matrix((np.full(rows.size, values[0]), rows, colptr), shape=Z.shape)
    perm = np.argsort(row_of)  # original row of each new number
    assert np.allclose(Zc.toarray(), Z.toarray()[perm])
    general = sp.random(40, 30, density=0.2, format="csr", random_state=1)
    colptr, rows, values = _column_major(general.indptr, general.indices, general.data, 30, np.arange(40))
    assert np.array_equal(sp.csc_matrix((values, rows, colptr), shape=(40, 30)).toarray(), general.toarray())


@pytest.mark.parametrize("threads", [1, 2])
def test_sparse_product_does_not_depend_on_the_thread_count(threads):
    """Fixed column ranges, summed in a fixed order: the same bits for any number of threads."""
    import numba

    Z = sp.random(2000, 5000, density=0.004, format="csr", random_state=3)
    V = np.random.RandomState(4).randn(5000, 3)
    reference = normal_operator(Z, 0.1).matmat(V)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        assert np.array_equal(normal_operator(Z, 0.1).matmat(V), reference)
    finally:
        numba.set_num_threads(old)


def test_cg_solve_does_not_depend_on_the_thread_count():
    """The step's sums are taken over fixed row ranges (STEP_PARTS) and added in order: the same bits on 1 or 2 threads."""
    import numba

    from rfrepro.models.cg_ridge import (
        STEP_PARALLEL_MIN_VALUES,
        STEP_PARTS,
        _cg_step_par,
        _cg_step_ser,
        _gram_products,
        lockstep_cg,
    )

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two numba threads")
    Z = sp.random(3000, 25_000, density=0.0005, format="csr", random_state=6)
    B = np.asarray(Z.T @ np.random.RandomState(7).randn(3000, 3))
    assert B.size >= STEP_PARALLEL_MIN_VALUES  # the threaded step runs
    # the threaded and the serial build of one step: the same bits
    rng = np.random.RandomState(8)
    blocks = [rng.randn(1000, 3) for _ in range(4)]
    bounds = np.linspace(0, 1000, STEP_PARTS + 1).round().astype(np.int64)
    copies = [[b.copy() for b in blocks] for _ in range(2)]
    news = [step(*c, np.full(3, 50.0), bounds) for step, c in zip((_cg_step_par, _cg_step_ser), copies, strict=True)]
    np.testing.assert_array_equal(*news)
    for a, b in zip(*copies, strict=True):
        np.testing.assert_array_equal(a, b)
    matmat, _ = _gram_products(Z, 0.01)
    old = numba.get_num_threads()
    try:
        solves = []
        for threads in (1, 2):
            numba.set_num_threads(threads)
            solves.append(lockstep_cg(matmat, B, 1e-14, 40, into=True, threaded_step=True)[0])
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(*solves)


def test_lockstep_columns_follow_scipy_cg_each():
    """Each column of the lockstep solve is scipy's CG on that column: same solution, same iteration count."""
    from scipy.sparse.linalg import cg

    from rfrepro.models.cg_ridge import lockstep_cg

    rng = np.random.RandomState(1)
    Z = sp.random(400, 80, density=0.05, format="csr", random_state=rng)
    A = normal_operator(Z, 0.01)
    B = np.column_stack([Z.T @ rng.randn(400), Z.T @ rng.randn(400) * 1e3, np.zeros(80), Z.T @ np.ones(400)])
    X, iters, ok = lockstep_cg(A.matmat, B, 1e-8, 500)
    assert ok.all() and iters[2] == 0 and np.all(X[:, 2] == 0)  # a zero right-hand side needs no step
    for c in (0, 1, 3):
        steps = []
        x, info = cg(A, B[:, c], rtol=1e-8, atol=0.0, maxiter=500, callback=steps.append)
        assert info == 0
        assert abs(int(iters[c]) - len(steps)) <= 1
        assert np.allclose(X[:, c], x, rtol=1e-6, atol=1e-8 * np.abs(x).max())
    X, iters, ok = lockstep_cg(A.matmat, B, 1e-14, 3)  # the cap: unconverged columns say so
    assert iters.max() == 3 and not ok[[0, 1, 3]].any() and ok[2]


def test_lockstep_reusing_one_product_block_gives_the_same_bits():
    """``into=True`` (the CSR product written into one reused block) runs the same recurrences, columns leaving
    the block included; the compiled column selection is numpy's."""
    from rfrepro.models.cg_ridge import _gram_products, _take_columns, lockstep_cg

    rng = np.random.RandomState(5)
    Z = sp.random(400, 120, density=0.05, format="csr", random_state=rng)
    B = np.column_stack([Z.T @ rng.randn(400) for _ in range(4)] + [np.zeros(120)])
    B[:, 1] *= 1e3
    Zd = Z.toarray()
    B[:, 3] = 5 * np.linalg.eigh(Zd.T @ Zd + 0.01 * np.eye(120))[1][:, -1]  # an eigenvector: one step
    matmat, _ = _gram_products(Z, 0.01)
    fresh = lockstep_cg(matmat, B, 1e-6, 200)
    reused = lockstep_cg(matmat, B, 1e-6, 200, into=True)
    assert len(set(fresh[1].tolist())) > 2  # the columns left the block at different iterations
    for a, b in zip(fresh, reused, strict=True):
        np.testing.assert_array_equal(a, b)
    capped = [lockstep_cg(matmat, B, 1e-14, 5, into=into)[0] for into in (False, True)]  # all ran to the cap
    np.testing.assert_array_equal(*capped)
    cols = np.array([3, 0, 2])
    np.testing.assert_array_equal(_take_columns(B, cols), B[:, cols])
    assert _take_columns(B, cols).flags.c_contiguous


def test_multiclass_is_one_solve_per_class():
    """The lockstep solve of all classes equals fitting each class's +-1 column alone."""
    rng = np.random.RandomState(2)
    Z = sp.random(300, 50, density=0.1, format="csr", random_state=rng)
    y = rng.randint(0, 3, 300)
    m = CGRidge(lam=0.1, task="multiclass", tol=1e-10, maxiter=2000).fit(Z, y)
    for c in range(3):
        t = np.where(y == c, 1.0, -1.0)
        one = CGRidge(lam=0.1, tol=1e-10, maxiter=2000).fit(Z, t)
        assert np.allclose(m.coef_[:, c], one.coef_[:, 0], atol=1e-7)
        assert np.isclose(m.intercept_[c], one.intercept_[0])


# ----------------------------------------------------------------------------- groups of target columns


def _many_classes(D: int = 3000, n: int = 600, k: int = 7, seed: int = 5):
    rng = np.random.RandomState(seed)
    R = 6  # random binning's shape: R stored values per row, all 1/sqrt(R)
    Z = sp.csr_matrix((np.full(n * R, 1 / np.sqrt(R)), rng.randint(0, D, n * R), np.arange(0, n * R + 1, R)),
                      shape=(n, D))
    return Z, rng.randint(0, k, n)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_groups_of_columns_give_the_one_group_solution(monkeypatch, width):
    import rfrepro.models.cg_ridge as cg

    Z, y = _many_classes()
    # groups are the primal's (the row space holds (n, k) blocks and solves every column at once)
    one = CGRidge(lam=0.05, task="multiclass", tol=1e-10, maxiter=2000, solve_in="primal").fit(Z, y)
    assert one.n_groups_ == 1
    # a budget of `width` columns' six (D, g) blocks: ceil(7 / width) groups
    monkeypatch.setattr(cg, "CG_BLOCK_BYTES", cg.CG_GROUP_BLOCKS * 8 * Z.shape[1] * width)
    grouped = CGRidge(lam=0.05, task="multiclass", tol=1e-10, maxiter=2000, solve_in="primal").fit(Z, y)
    assert grouped.n_groups_ == -(-7 // width)
    # every column runs its own recurrence in any group: equal up to the products' rounding (~1e-15 here)
    np.testing.assert_allclose(grouped.coef_, one.coef_, rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(grouped.intercept_, one.intercept_)
    assert grouped.n_iter_ == one.n_iter_ > 5 and grouped.converged_ and one.converged_
    capped = CGRidge(lam=0.05, task="multiclass", tol=1e-14, maxiter=4, solve_in="primal").fit(Z, y)
    assert capped.n_iter_ == 4 and not capped.converged_  # the cap still shows through the groups
    assert grouped.solver_bytes_ == (grouped.operator_bytes_ + 8 * Z.shape[1] * 7
                                     + cg.CG_GROUP_BLOCKS * 8 * Z.shape[1] * width
                                     + (cg.GRAM_PARTS + 1) * 8 * Z.shape[0] * width)  # the partial sums


def test_groups_on_a_dense_z_agree_to_rounding(monkeypatch):
    import rfrepro.models.cg_ridge as cg

    Z, y = _many_classes(D=60, n=300)
    Zd = Z.toarray()
    one = CGRidge(lam=0.05, task="multiclass", tol=1e-12, maxiter=2000).fit(Zd, y)
    monkeypatch.setattr(cg, "CG_BLOCK_BYTES", 1)  # one column a group
    grouped = CGRidge(lam=0.05, task="multiclass", tol=1e-12, maxiter=2000).fit(Zd, y)
    assert grouped.n_groups_ == 7
    np.testing.assert_allclose(grouped.coef_, one.coef_, rtol=1e-9, atol=1e-12)


def test_column_groups_cover_every_column_once():
    from rfrepro.models.cg_ridge import CG_GROUP_BLOCKS, column_groups

    groups = column_groups(10**6, 26, block_bytes=CG_GROUP_BLOCKS * 8 * 10**6 * 4)
    assert [c.stop - c.start for c in groups] == [4] * 6 + [2]
    assert np.array_equal(np.concatenate([np.arange(26)[c] for c in groups]), np.arange(26))
    assert column_groups(10**6, 3, block_bytes=1) == [slice(0, 1), slice(1, 2), slice(2, 3)]  # at least one column
    assert column_groups(100, 26) == [slice(0, 26)]  # small problems: one group, as before


def test_peak_memory_of_the_solve_scales_with_the_group_not_with_k(monkeypatch):
    """Traced peak of a fit, less the (D, k) coefficients: about six (D, g) blocks, g the group's width."""
    import tracemalloc

    import rfrepro.models.cg_ridge as cg

    D, k = 400_000, 12
    Z, y = _many_classes(D=D, n=2000, k=k)
    block = 8 * D  # one float64 column of D rows
    CGRidge(lam=1.0, task="multiclass", tol=1e-3, maxiter=2, solve_in="primal").fit(Z[:50], y[:50])  # compile outside the trace
    peaks = {}
    for width in (1, 3, k):
        monkeypatch.setattr(cg, "CG_BLOCK_BYTES", cg.CG_GROUP_BLOCKS * block * width)
        tracemalloc.start()
        m = CGRidge(lam=1.0, task="multiclass", tol=1e-6, maxiter=20, solve_in="primal").fit(Z, y)
        peaks[width] = tracemalloc.get_traced_memory()[1] - k * block - m.operator_bytes_
        tracemalloc.stop()
        assert m.n_groups_ == -(-k // width)
    for width, peak in peaks.items():
        # six (D, g) blocks of the group (measured: 6.09, 18.06, 72.06 columns of D), one D-vector of slack
        assert 6 * width * block < peak < 6 * width * block + block, (width, peak / block)


def _rb_features(n: int, d: int, R: int, sigma: float):
    from rfrepro.features import RandomBinning

    X = np.random.RandomState(3).uniform(-1, 1, (n, d))
    return RandomBinning(n_components=R, sigma=sigma, random_state=0).fit_transform(X).tocsr()


@pytest.mark.parametrize("sigma, iters", [(0.3, 12), (3.0, 5)])
def test_row_space_runs_the_primal_iterates(sigma, iters):
    # the same CG in exact arithmetic: after a fixed number of iterations (tol never
    # reached) both routes hold the same coefficients, column by column. At sigma = 0.3
    # (D = 4561 columns for 300 rows, the row space's case) to rounding after 12
    # iterations; at sigma = 3 (242 columns, condition number about 7000) the two
    # roundings drift apart once CG loses orthogonality, as those of any two CG codes
    # do (1e-11 after 8 iterations, 1e-7 after 12), so only the first 5 are compared
    Z = _rb_features(300, 6, 16, sigma)
    y = np.arange(300) % 4
    fits = {where: CGRidge(lam=0.01, task="multiclass", tol=1e-15, maxiter=iters, solve_in=where).fit(Z, y)
            for where in ("primal", "rows")}
    p, r = fits["primal"], fits["rows"]
    assert (p.solved_in_, r.solved_in_) == ("primal", "rows")
    assert p.n_iter_ == r.n_iter_ == iters
    np.testing.assert_allclose(r.coef_, p.coef_, rtol=0, atol=1e-12 * np.abs(p.coef_).max())
    # and to a tolerance, the same solution as the normal equations
    Zd = Z.toarray()
    T = np.where((np.arange(300) % 4)[:, None] == np.arange(4), 1.0, -1.0)
    T = T - T.mean(0)
    w = np.linalg.solve(Zd.T @ Zd + 0.01 * np.eye(Zd.shape[1]), Zd.T @ T)
    rows = CGRidge(lam=0.01, task="multiclass", tol=1e-12, maxiter=5000, solve_in="rows").fit(Z, y)
    assert rows.converged_
    np.testing.assert_allclose(rows.coef_, w, atol=1e-8 * np.abs(w).max())


def test_auto_takes_the_row_space_where_points_have_bins_of_their_own():
    from rfrepro.models.cg_ridge import row_space_cheaper

    alone = _rb_features(300, 6, 16, 0.05)    # nearly every point alone in its bins: Z Z^T about diagonal
    crowded = _rb_features(300, 6, 16, 30.0)  # a few wide bins: Z Z^T dense, Z has few columns
    assert alone.shape[1] > 10 * crowded.shape[1]
    assert row_space_cheaper(alone) and not row_space_cheaper(crowded)
    assert not row_space_cheaper(alone.toarray())  # dense input: the primal
    y = np.arange(300) % 2
    assert CGRidge(task="binary").fit(alone, y).solved_in_ == "rows"
    assert CGRidge(task="binary").fit(crowded, y).solved_in_ == "primal"
    assert CGRidge(task="binary", solve_in="primal").fit(alone, y).solved_in_ == "primal"
    with pytest.raises(ValueError, match=r"'solve_in' parameter of CGRidge must be a str among \{'auto', 'primal', 'rows'\}\. Got 'dual'"):
        CGRidge(solve_in="dual").fit(alone, y)
