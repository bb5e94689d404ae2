"""Tests of the relative kernel-approximation errors."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.features import Nystroem, RandomFourierFeatures
from rfrepro.kernels import gaussian_kernel
from rfrepro.metrics import KernelReference, kernel_errors


def _setup(n: int = 120, D: int = 50, seed: int = 0):
    X = np.random.RandomState(seed).standard_normal((n, 4))
    K = gaussian_kernel(X, sigma=2.0)
    Z = RandomFourierFeatures(D, sigma=2.0, random_state=seed).fit_transform(X)
    return X, K, Z


def _dense_errors(K, Z):
    E = K - Z @ Z.T
    return (
        np.linalg.norm(E, "fro") / np.linalg.norm(K, "fro"),
        np.linalg.norm(E, 2) / np.linalg.norm(K, 2),
    )


def test_reference_norms_equal_numpy():
    _, K, _ = _setup()
    ref = KernelReference.from_matrix(K)
    assert ref.fro == pytest.approx(np.linalg.norm(K, "fro"), rel=1e-12)
    assert ref.spec == pytest.approx(np.linalg.norm(K, 2), rel=1e-10)
    assert ref.K.dtype == np.float64 and ref.K.shape == (120, 120)


@pytest.mark.parametrize("D", [5, 50, 400], ids=["D<n", "D~n", "D>n"])
def test_errors_equal_dense_norms(D):
    _, K, Z = _setup(D=D)
    ref = KernelReference.from_matrix(K)
    errs = kernel_errors(ref, Z)
    fro, spec = _dense_errors(K, Z)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-8)
    assert errs["kerr_spec"] == pytest.approx(spec, rel=1e-8)
    assert errs["nrms"] == errs["kerr_fro"]
    # RMS(K - ZZ^T) / RMS(K) by its own definition
    nrms = np.sqrt(np.mean((K - Z @ Z.T) ** 2)) / np.sqrt(np.mean(K**2))
    assert errs["nrms"] == pytest.approx(nrms, rel=1e-8)


def test_spectral_error_with_negative_dominant_eigenvalue():
    # K - ZZ^T dominated by a negative eigenvalue: |lambda| must be taken
    rng = np.random.RandomState(1)
    Q = np.linalg.qr(rng.standard_normal((30, 30)))[0]
    K = (Q * np.linspace(1, 5, 30)) @ Q.T
    Z = Q[:, :3] * np.sqrt([9.0, 1.0, 2.0])  # overshoots the eigenvalue 1 by 8
    ref = KernelReference.from_matrix(K)
    errs = kernel_errors(ref, Z)
    fro, spec = _dense_errors(K, Z)
    assert errs["kerr_spec"] == pytest.approx(spec, rel=1e-8)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-8)


def test_tiny_problem_goes_dense():
    K = np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.0]])
    Z = np.array([[1.0, 0.0], [0.5, 0.8], [0.1, 0.3]])
    ref = KernelReference.from_matrix(K)
    assert ref.spec == pytest.approx(np.linalg.norm(K, 2), rel=1e-12)
    errs = kernel_errors(ref, Z)
    fro, spec = _dense_errors(K, Z)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-10)
    assert errs["kerr_spec"] == pytest.approx(spec, rel=1e-10)


def _nearly_exact(case: str):
    X = np.random.RandomState(0).standard_normal((120, 4))
    K = gaussian_kernel(X, sigma=4.0)
    if case == "nystrom":  # 100 of 120 landmarks: ||K - ZZ^T|| ~ 6e-6 ||K||
        return K, Nystroem(100, sigma=4.0, random_state=0).fit_transform(X)
    return K, np.linalg.cholesky(K + 1e-12 * np.eye(120))  # ZZ^T = K to rounding


@pytest.mark.parametrize("case", ["nystrom", "cholesky"])
def test_nearly_exact_approximation_is_measured_accurately(case):
    # the expanded form ||K||^2 - 2 tr(Z^T K Z) + ||Z^T Z||^2 cancels catastrophically:
    # it cannot resolve relative errors below sqrt(eps) ~ 1e-8 and loses digits above
    K, Z = _nearly_exact(case)
    fro, spec = _dense_errors(K, Z)
    errs = kernel_errors(KernelReference.from_matrix(K), Z)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-6, abs=1e-12)
    assert errs["kerr_spec"] == pytest.approx(spec, rel=1e-6, abs=1e-12)


def test_row_mismatch_and_non_square():
    _, K, Z = _setup()
    with pytest.raises(ValueError, match="rows"):
        kernel_errors(KernelReference.from_matrix(K), Z[:-1])
    with pytest.raises(ValueError, match="square"):
        KernelReference.from_matrix(K[:, :-1])


def test_float32_features_accepted():
    _, K, Z = _setup()
    errs = kernel_errors(KernelReference.from_matrix(K), Z.astype(np.float32))
    fro, _ = _dense_errors(K, Z)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-4)


@pytest.mark.parametrize("whole", [True, False], ids=["residual-whole", "through-K-and-Z"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_errors_same_whether_the_residual_is_held_whole(monkeypatch, whole, sparse):
    # whole, a dense Z's residual comes from syrk and the Lanczos iterations read it; otherwise
    # it is formed in row blocks (here 7 rows each) and they apply K v - Z (Z^T v): both give
    # ||K - ZZ^T||, and a sparse Z's Frobenius norm is summed over the same blocks (same bits)
    import scipy.sparse as sp

    from rfrepro.metrics import kernel as kernel_module

    _, K, Z = _setup(D=40)
    if sparse:
        Z = sp.csr_matrix(np.where(np.abs(Z) > 0.1, Z, 0.0))
    ref = KernelReference.from_matrix(K)
    monkeypatch.setattr(kernel_module, "_RESIDUAL_BLOCK_VALUES", 7 * K.shape[0])
    monkeypatch.setattr(kernel_module, "RESIDUAL_WHOLE_VALUES", 1 << 24 if whole else 0)
    errs = kernel_errors(ref, Z)
    monkeypatch.setattr(kernel_module, "RESIDUAL_WHOLE_VALUES", 0 if whole else 1 << 24)
    other = kernel_errors(ref, Z)
    fro, spec = _dense_errors(K, Z.toarray() if sparse else Z)
    assert errs["kerr_spec"] == pytest.approx(spec, rel=1e-10)
    assert errs["kerr_fro"] == pytest.approx(fro, rel=1e-10)
    assert errs["kerr_spec"] == pytest.approx(other["kerr_spec"], rel=1e-10)
    if sparse:
        assert errs["kerr_fro"] == other["kerr_fro"]
    else:
        assert errs["kerr_fro"] == pytest.approx(other["kerr_fro"], rel=1e-12)


@pytest.mark.parametrize("D", [0, 3, 40])
def test_dense_residual_is_symmetric_and_exact(monkeypatch, D):
    # syrk writes one triangle; the other is copied from it block by block (7 rows here)
    from rfrepro.metrics import kernel as kernel_module

    _, K, Z = _setup(D=max(D, 1))
    Z = Z[:, :D]
    monkeypatch.setattr(kernel_module, "_RESIDUAL_BLOCK_VALUES", 7 * K.shape[0])
    K_before = K.copy()
    E = kernel_module._dense_residual(K, Z)
    assert np.array_equal(K, K_before)  # syrk wrote into a copy
    assert np.array_equal(E, E.T)
    np.testing.assert_allclose(E, K - Z @ Z.T, rtol=0, atol=1e-13)
    if D == 0:
        assert np.array_equal(E, K)
