"""BlockDiag and the exact kernel ridge: closed forms, the block structure, the memory budget."""

import numpy as np
import pytest

from rfrepro.features import RandomBinning
from rfrepro.kernels import laplacian_kernel
from rfrepro.models import BlockDiag, CGRidge, ExactKernelRidge


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.rand(240, 3)
    return X, np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.randn(240)


def test_exact_ridge_matches_closed_form(data):
    X, y = data
    lam = 0.1
    m = ExactKernelRidge(lam=lam, kernel="laplacian", sigma=0.7).fit(X, y)
    K = laplacian_kernel(X, sigma=0.7)
    a = np.linalg.solve(K + lam * np.eye(len(y)), y - y.mean())
    assert np.allclose(m.dual_coef_[:, 0], a, atol=1e-10)
    Xt = X[:7] + 0.01
    assert np.allclose(m.predict(Xt), laplacian_kernel(Xt, X, sigma=0.7) @ a + y.mean(), atol=1e-10)
    assert m.kernel_bytes_ == 240 * 240 * 8


def test_exact_ridge_is_the_limit_of_cg_ridge_on_random_binning(data):
    # same objective: ridge on Z with Z Z^T -> K approaches exact KRR as R grows
    X, y = data
    exact = ExactKernelRidge(lam=0.1, sigma=0.7).fit(X, y).predict(X)
    gaps = []
    for R in (16, 1024):
        Z = RandomBinning(n_components=R, sigma=0.7, random_state=0).fit_transform(X)
        gaps.append(np.linalg.norm(CGRidge(lam=0.1, tol=1e-10).fit(Z, y).predict(Z) - exact))
    assert gaps[1] < 0.5 * gaps[0]


def test_exact_ridge_refuses_beyond_the_budget(data):
    X, y = data
    need = 8 * 240**2 / 2**30
    with pytest.raises(MemoryError, match=rf"needs {need:.1f} GB, over the budget max_memory_gb = 0.0001 GB"):
        ExactKernelRidge(max_memory_gb=1e-4).fit(X, y)
    ExactKernelRidge(max_memory_gb=None).fit(X, y)


def test_one_block_is_the_exact_kernel(data):
    X, y = data
    a = BlockDiag(block_size=240, lam=0.1, sigma=0.7, random_state=0).fit(X, y)
    b = ExactKernelRidge(lam=0.1, sigma=0.7).fit(X, y)
    assert a.n_blocks_ == 1
    assert np.allclose(a.predict(X[:20] * 0.9), b.predict(X[:20] * 0.9), atol=1e-10)


def test_blocks_are_independent_kernel_ridges(data):
    X, y = data
    m = BlockDiag(block_size=60, lam=0.1, sigma=0.7, random_state=0).fit(X, y)
    assert m.n_blocks_ == 4
    rows = np.concatenate([r for r, _ in m.blocks_])
    assert np.array_equal(np.sort(rows), np.arange(240))
    assert m.kernel_bytes_ == 8 * sum(len(r) ** 2 for r, _ in m.blocks_)
    r, coef = m.blocks_[0]
    K = laplacian_kernel(X[r], sigma=0.7)
    assert np.allclose(coef[:, 0], np.linalg.solve(K + 0.1 * np.eye(len(r)), y[r] - y.mean()), atol=1e-10)
    # a training point is predicted by its own block only
    assert np.allclose(m.predict(X[r[:3]]), K[:3] @ coef[:, 0] + y.mean(), atol=1e-10)


@pytest.mark.parametrize(("params", "blocks"), [({"block_size": 60}, 4), ({"block_size": 7}, 35),
                                               ({"block_size": None, "n_blocks": 6}, 6),
                                               ({"block_size": None, "n_blocks": 240}, 240)])
def test_both_readings_of_r_give_the_stated_blocks(data, params, blocks):
    # block size R: ceil(n / R) blocks of R rows on average; R blocks: R blocks of n / R rows on average
    X, y = data
    m = BlockDiag(**params, lam=0.1, sigma=0.7, random_state=0).fit(X, y)
    sizes = [len(r) for r, _ in m.blocks_]
    assert m.n_blocks_ == len(sizes) == blocks and sum(sizes) == 240
    assert np.mean(sizes) == pytest.approx(240 / blocks)
    assert m.kernel_bytes_ == 8 * sum(s**2 for s in sizes)
    assert m.solver_bytes_ == m.kernel_bytes_ + X.nbytes + 8 * 240


@pytest.mark.parametrize(("params", "match"), [({"block_size": 10, "n_blocks": 5}, "exactly one"),
                                               ({"block_size": None}, "exactly one"),
                                               ({"block_size": None, "n_blocks": 241}, "exceeds the 240")])
def test_block_parameters_are_checked(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        BlockDiag(**params, sigma=0.7).fit(X, y)


def test_classification(data):
    X, _ = data
    y = np.where(X[:, 0] + X[:, 1] > 1, 3, 7)
    for m in (BlockDiag(block_size=80, lam=0.1, sigma=0.7, task="binary", random_state=0),
              ExactKernelRidge(lam=0.1, sigma=0.7, task="binary")):
        assert np.mean(m.fit(X, y).predict(X) == y) > 0.9
