"""RandomBinning: kernel convergence, sparsity structure, determinism, memory."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features import RandomBinning
from rfrepro.kernels import laplacian_kernel
from rfrepro.models import CGRidge
from rfrepro.models.cg_ridge import CG_GROUP_BLOCKS, GRAM_PARTS
from rfrepro.runner.memory import PeakMemory


@pytest.fixture(scope="module")
def X():
    return np.random.RandomState(0).rand(300, 4)


def _kernel_error(X, R, seed):
    Z = RandomBinning(n_components=R, sigma=0.8, random_state=seed).fit_transform(X)
    K = laplacian_kernel(X, sigma=0.8)
    return np.linalg.norm((Z @ Z.T).toarray() - K) / np.linalg.norm(K)


def test_kernel_estimate_converges_at_monte_carlo_rate(X):
    Rs = [8, 32, 128, 512]
    errs = [np.mean([_kernel_error(X, R, s) for s in range(3)]) for R in Rs]
    assert all(a > b for a, b in zip(errs, errs[1:]))
    slope = np.polyfit(np.log(Rs), np.log(errs), 1)[0]
    assert -0.6 < slope < -0.4  # Monte Carlo: error ~ R^-1/2
    assert errs[-1] < 0.08


def test_mean_collision_is_the_laplacian_kernel():
    # two fixed points: the fraction of grids where they share a bin estimates k(x, y)
    X = np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1]])
    Z = RandomBinning(n_components=40000, sigma=1.0, random_state=1).fit_transform(X)
    est = (Z @ Z.T).toarray()[0, 1]
    assert est == pytest.approx(np.exp(-0.6), abs=4 * np.sqrt(0.25 / 40000))


def test_every_training_row_has_exactly_R_nonzeros_of_inverse_sqrt_R(X):
    rb = RandomBinning(n_components=50, sigma=0.3, random_state=0)
    Z = rb.fit_transform(X)
    assert sp.isspmatrix_csr(Z)
    assert np.all(Z.getnnz(axis=1) == 50)
    assert np.allclose(Z.data, 1 / np.sqrt(50))
    assert np.allclose((Z @ Z.T).diagonal(), 1.0)
    assert 50 <= rb.n_features_out_ == Z.shape[1] <= 300 * 50
    assert rb.bins_per_grid_ == pytest.approx(rb.n_features_out_ / 50)
    assert 1.0 <= rb.kappa_ <= rb.bins_per_grid_
    # each column belongs to one grid: every row hits each grid's column range once
    starts = rb.grid_starts_
    grid_of = np.searchsorted(starts, Z.indices, side="right") - 1
    assert np.array_equal(np.sort(grid_of.reshape(300, 50), axis=1), np.tile(np.arange(50), (300, 1)))


def test_transform_of_training_rows_equals_fit_transform(X):
    rb = RandomBinning(n_components=30, sigma=0.5, random_state=3)
    Z = rb.fit_transform(X)
    assert (abs(Z - rb.transform(X))).max() == 0
    assert (abs(Z - RandomBinning(n_components=30, sigma=0.5, random_state=3).fit(X).transform(X))).max() == 0


def test_unseen_test_bins_are_dropped(X):
    rb = RandomBinning(n_components=20, sigma=0.05, random_state=0).fit(X)
    far = rb.transform(X + 100.0)
    assert far.nnz == 0 and far.shape == (300, rb.n_features_out_)
    near = rb.transform(np.vstack([X[:5], X[:5] + 100.0]))
    assert np.all(near.getnnz(axis=1)[:5] == 20) and np.all(near.getnnz(axis=1)[5:] == 0)


def test_dtype_kept_and_seed_determinism(X):
    Z32 = RandomBinning(n_components=10, sigma=1.0, random_state=0).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    a = RandomBinning(n_components=10, sigma=1.0, random_state=5).fit_transform(X)
    b = RandomBinning(n_components=10, sigma=1.0, random_state=5).fit_transform(X)
    c = RandomBinning(n_components=10, sigma=1.0, random_state=6).fit_transform(X)
    assert a.shape == b.shape and (abs(a - b)).max() == 0
    assert a.shape != c.shape or (abs(a - c)).max() > 0


def test_smaller_sigma_gives_more_bins(X):
    D = [RandomBinning(n_components=16, sigma=s, random_state=0).fit(X).n_features_out_ for s in (10, 1, 0.1)]
    assert D[0] < D[1] < D[2]


@pytest.mark.parametrize("bad", [{"n_components": 0}, {"kernel": "gaussian"}])
def test_invalid_parameters_raise(X, bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        RandomBinning(**{"sigma": 1.0, **bad}).fit(X)


def test_end_to_end_under_a_memory_ceiling_a_dense_Z_would_break():
    # n = 20000 rows at a bandwidth where D is in the hundreds of thousands: a
    # dense float64 Z would need n * D * 8 bytes (tens of GB); the sparse path
    # (RB + CG ridge) must stay under 400 MB above the starting RSS.
    rng = np.random.RandomState(0)
    X = rng.rand(20000, 8)
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    rb = RandomBinning(n_components=32, sigma=0.5, random_state=0)
    rb.fit(X[:50])  # compile outside the measured region
    CGRidge(maxiter=2).fit(rb.transform(X[:50]), y[:50])
    with PeakMemory(interval=0.002) as mem:
        Z = rb.fit_transform(X)
        model = CGRidge(lam=0.01, tol=1e-3, maxiter=50).fit(Z, y)
        pred = model.predict(rb.transform(X[:1000]))
    dense_bytes = Z.shape[0] * Z.shape[1] * 8
    ceiling = 400 * 2**20
    assert dense_bytes > 20 * ceiling
    assert mem.rss_peak - mem.rss_start < ceiling
    assert np.linalg.norm(pred - y[:1000]) / np.linalg.norm(y[:1000]) < 0.2


def _reference_columns(rb, X_train, X_new):
    """Columns of X_new's bins by brute force: per grid, the distinct bin tuples of X_train in
    order of first appearance (np.unique), -1 where X_new's tuple is not among them."""
    cols = []
    for r in range(rb.n_components):
        def tuples(A, r=r):
            return np.floor((A - rb.offsets_[r]) * (1.0 / rb.widths_[r])).astype(np.int64)
        train, first = np.unique(tuples(X_train), axis=0, return_index=True)
        train = train[np.argsort(first)]  # order of first appearance
        index = {tuple(t): c for c, t in enumerate(train)}
        cols.append([rb.grid_starts_[r] + index[tuple(t)] if tuple(t) in index else -1 for t in tuples(X_new)])
    return np.array(cols).T


@pytest.mark.parametrize(("d", "sigma", "exact_keys"), [(3, 0.3, True), (120, 0.02, False)])
def test_columns_equal_a_brute_force_numbering_of_the_bin_tuples(d, sigma, exact_keys):
    # small boxes get exact mixed-radix keys, large ones (> 2^64 cells) random odd multipliers:
    # both must number the bins exactly as distinct tuples in order of first appearance
    rng = np.random.RandomState(0)
    X = rng.rand(400, d)
    rb = RandomBinning(n_components=6, sigma=sigma, random_state=0)
    Z = rb.fit_transform(X)
    assert np.all((np.log2(rb.bin_span_).sum(axis=1) < 63) == exact_keys)
    assert np.array_equal(Z.indices.reshape(400, 6), _reference_columns(rb, X, X))
    # new rows: half repeat training rows, half move by 1.3 sigma along one axis, into other
    # bins or beyond the training range (where an unchecked mixed-radix key could wrap)
    step = np.zeros((50, d))
    step[np.arange(50), rng.randint(d, size=50)] = rng.choice([-1.3, 1.3], size=50) * sigma
    new = np.vstack([X[:50], X[50:100] + step])
    ref = _reference_columns(rb, X, new)
    T = rb.transform(new)
    assert np.array_equal(T.getnnz(axis=1), (ref >= 0).sum(axis=1))
    assert np.array_equal(T.indices, ref[ref >= 0])
    assert 0 < (ref[50:] >= 0).mean() < 1


def test_exact_keys_never_alias_a_point_outside_the_training_box():
    # 2 x 2 training bins in each grid: the point one bin beyond the top in dimension 0 and one
    # below the bottom in dimension 1 has mixed-radix key s_0 - s_0 = 0, the key of the lowest bin
    X = np.array([[0.0, 0.0], [0.9, 0.9], [0.0, 0.9], [0.9, 0.0]])
    rb = RandomBinning(n_components=200, sigma=0.3, random_state=0).fit(X)
    far = X[[0]] + np.array([[1.0, -1.0]]) * rb.widths_.max() * 2
    assert rb.transform(far).nnz == 0


@parametrize_with_checks([RandomBinning(n_components=8, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_cg_memory_of_a_one_valued_z_counts_indices_only(X):
    # every training value of RB's Z is 1/sqrt(R): CG's products never read the values array, so what the
    # solver holds of Z is its column-major copy's row numbers (int32), column pointers and that one value
    Z = RandomBinning(n_components=16, sigma=0.5, random_state=0).fit_transform(X)
    assert np.unique(Z.data).size == 1
    n, D = Z.shape
    m = CGRidge(lam=0.01).fit(Z, X[:, 0])
    indices_only = 4 * Z.nnz + 8 * (D + 1) + 8
    assert m.operator_bytes_ == indices_only
    assert m.operator_bytes_ < Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes
    # plus the coefficients, one group's CG blocks (one target column) and the products' partial sums
    assert m.solver_bytes_ == indices_only + 8 * D + CG_GROUP_BLOCKS * 8 * D + (GRAM_PARTS + 1) * 8 * n
    # values that differ are read, and counted
    W = Z.multiply(np.random.RandomState(1).rand(n, 1)).tocsr()
    assert CGRidge(lam=0.01).fit(W, X[:, 0]).operator_bytes_ == indices_only - 8 + 8 * W.nnz
