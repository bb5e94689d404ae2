"""Kernel errors of a sparse Z equal those of its dense copy, without densifying it."""

import numpy as np
import pytest
import scipy.sparse as sp

from rfrepro.features import RandomBinning
from rfrepro.kernels import laplacian_kernel
from rfrepro.metrics import KernelReference, kernel_errors, prediction_metrics


@pytest.fixture(scope="module")
def rb():
    X = np.random.RandomState(0).rand(150, 3)
    Z = RandomBinning(n_components=40, sigma=0.7, random_state=0).fit_transform(X)
    return KernelReference.from_matrix(laplacian_kernel(X, sigma=0.7)), Z


def test_sparse_equals_dense(rb):
    ref, Z = rb
    a, b = kernel_errors(ref, Z), kernel_errors(ref, Z.toarray())
    for key in ("kerr_fro", "kerr_spec", "nrms"):
        assert a[key] == pytest.approx(b[key], rel=1e-9)
    assert 0 < a["kerr_fro"] < 0.5


def test_sparse_float32_accepted(rb):
    ref, Z = rb
    assert kernel_errors(ref, Z.astype(np.float32))["kerr_fro"] == pytest.approx(
        kernel_errors(ref, Z)["kerr_fro"], rel=1e-6)


def test_a_sparse_Z_too_wide_to_densify():
    # 200 rows x 10^9 columns: dense it would need 1.6 TB; sparse it holds 200 x 5 values
    n, D, R = 200, 10**9, 5
    rng = np.random.RandomState(0)
    cols = np.sort(rng.choice(D, size=(n, R), replace=True), axis=1)
    cols[:, 0] = 0  # every pair shares one column: Z Z^T = 1/R off the diagonal (or more)
    Z = sp.csr_matrix((np.full(n * R, 1 / np.sqrt(R)), cols.ravel(), np.arange(0, n * R + 1, R)), shape=(n, D))
    used, inv = np.unique(cols, return_inverse=True)  # the same kernel from the used columns only
    dense = np.zeros((n, used.size))
    np.add.at(dense, (np.repeat(np.arange(n), R), inv.ravel()), 1 / np.sqrt(R))
    K = dense @ dense.T
    out = kernel_errors(KernelReference.from_matrix(K), Z)
    assert out["kerr_fro"] == pytest.approx(0.0, abs=1e-12)
    assert out["kerr_spec"] == pytest.approx(0.0, abs=1e-8)


def test_regression_relative_error():
    y, yhat = np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 1.0])
    out = prediction_metrics("regression", y, yhat)
    assert out["rel_rmse"] == pytest.approx(1 / 3) and out["error"] == out["rel_rmse"]
