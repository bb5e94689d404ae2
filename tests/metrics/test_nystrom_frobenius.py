"""Tests of the linear-time Frobenius distance between Nystrom forms (Schleif et al. 2016)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rfrepro.kernels import gaussian_kernel
from rfrepro.metrics.nystrom import (
    linear_kernel_nystrom_form,
    nystrom_frobenius_distance,
    pinv_sqrt_factor,
)

RCOND = 1e-10


def _dense(C: np.ndarray, W: np.ndarray) -> np.ndarray:
    # same cutoff as the module: singular values below RCOND * largest are dropped
    return C @ np.linalg.pinv(W, rcond=RCOND, hermitian=True) @ C.T


def _form(K: np.ndarray, landmarks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return K[:, landmarks], K[np.ix_(landmarks, landmarks)]


@pytest.fixture
def two_forms():
    """Two Nystrom forms of different Gaussian kernels, n = 200, m1 = 20, m2 = 15."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 4))
    K1 = gaussian_kernel(X, sigma=2.0)
    K2 = gaussian_kernel(X, sigma=1.3)
    L1 = np.sort(rng.choice(200, 20, replace=False))
    L2 = np.sort(rng.choice(200, 15, replace=False))
    return _form(K1, L1), _form(K2, L2)


def test_equals_dense_distance(two_forms):
    (C1, W1), (C2, W2) = two_forms
    dense = np.linalg.norm(_dense(C1, W1) - _dense(C2, W2))
    fast = nystrom_frobenius_distance(C1, W1, C2, W2)
    assert dense > 1.0  # a real distance, not round-off
    assert fast == pytest.approx(dense, rel=1e-8)


def test_equals_dense_on_random_low_rank_psd():
    """n = 200, m = 20 on random PSD matrices of rank 30 (W full rank) and 8 (W singular)."""
    rng = np.random.RandomState(1)
    B1 = rng.standard_normal((200, 30))
    B2 = rng.standard_normal((200, 8))
    L = np.sort(rng.choice(200, 20, replace=False))
    C1, W1 = _form(B1 @ B1.T, L)
    C2, W2 = _form(B2 @ B2.T, L)
    assert np.linalg.matrix_rank(W2) == 8
    dense = np.linalg.norm(_dense(C1, W1) - _dense(C2, W2))
    assert nystrom_frobenius_distance(C1, W1, C2, W2) == pytest.approx(dense, rel=1e-8)


def test_symmetric_and_zero_on_itself(two_forms):
    (C1, W1), (C2, W2) = two_forms
    d12 = nystrom_frobenius_distance(C1, W1, C2, W2)
    d21 = nystrom_frobenius_distance(C2, W2, C1, W1)
    assert d12 == pytest.approx(d21, rel=1e-12)
    # the squared distance is a difference of terms of size ||A||_F^2: zero is
    # resolved to about sqrt(machine epsilon) ||A||_F
    norm = np.linalg.norm(_dense(C1, W1))
    assert nystrom_frobenius_distance(C1, W1, C1, W1) < 1e-6 * norm


def test_float32_input_gives_float64_accuracy(two_forms):
    (C1, W1), (C2, W2) = two_forms
    d64 = nystrom_frobenius_distance(C1, W1, C2, W2)
    d32 = nystrom_frobenius_distance(*(a.astype(np.float32) for a in (C1, W1, C2, W2)))
    assert isinstance(d32, float)
    assert d32 == pytest.approx(d64, rel=1e-4)


def test_pinv_sqrt_factor_is_pseudo_inverse():
    rng = np.random.RandomState(2)
    B = rng.standard_normal((12, 5))
    W = B @ B.T  # rank 5
    T = pinv_sqrt_factor(W)
    assert T.shape == (12, 5)
    np.testing.assert_allclose(T @ T.T, np.linalg.pinv(W, rcond=RCOND, hermitian=True), atol=1e-10)


def test_linear_kernel_form_is_exact_when_features_fewer_than_landmarks():
    rng = np.random.RandomState(3)
    Z = rng.standard_normal((150, 6))
    L = np.arange(0, 150, 15)  # 10 landmarks > 6 features
    C, W = linear_kernel_nystrom_form(Z, L)
    assert C.shape == (150, 10) and W.shape == (10, 10)
    np.testing.assert_allclose(_dense(C, W), Z @ Z.T, atol=1e-9)


def test_linear_kernel_form_projects_when_features_exceed_landmarks():
    """With D > m, C W^+ C^T = Z P Z^T, P the projection on the landmarks' rows of Z."""
    rng = np.random.RandomState(4)
    Z = rng.standard_normal((120, 30))
    L = np.arange(10)
    C, W = linear_kernel_nystrom_form(Z, L)
    ZL = Z[L]
    P = ZL.T @ np.linalg.pinv(ZL @ ZL.T) @ ZL
    np.testing.assert_allclose(_dense(C, W), Z @ P @ Z.T, atol=1e-8)
    # and the distance to the exact linear kernel's own form (every row a landmark) matches
    Cfull, Wfull = linear_kernel_nystrom_form(Z, np.arange(120))
    dense = np.linalg.norm(Z @ P @ Z.T - Z @ Z.T)
    assert nystrom_frobenius_distance(C, W, Cfull, Wfull) == pytest.approx(dense, rel=1e-8)


def test_bad_shapes_raise(two_forms):
    (C1, W1), (C2, W2) = two_forms
    with pytest.raises(ValueError, match="W1"):
        nystrom_frobenius_distance(C1, W2, C2, W2)
    with pytest.raises(ValueError, match="rows"):
        nystrom_frobenius_distance(C1[:-1], W1, C2, W2)
    with pytest.raises(ValueError, match="landmarks"):
        linear_kernel_nystrom_form(C1, np.array([0.5, 1.5]))


def test_memory_is_linear_in_n():
    """n = 20000, m = 50: the peak stays far below one n x n float64 matrix (3.2 GB)."""
    n, m = 20_000, 50
    rng = np.random.RandomState(5)
    Z1 = rng.standard_normal((n, 40))
    Z2 = rng.standard_normal((n, 40))
    L = np.arange(m)
    tracemalloc.start()
    try:
        d = nystrom_frobenius_distance(
            *linear_kernel_nystrom_form(Z1, L), *linear_kernel_nystrom_form(Z2, L)
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert d > 0
    # the inputs' forms are 2 x (n x m) float64 = 16 MB; allow a few copies of them
    assert peak < 8 * n * m * 8
    assert peak < n * n * 8 / 50
