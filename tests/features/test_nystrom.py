"""Tests of the Nystrom map (Williams and Seeger 2001) and the exact kernel map."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.features.nystrom import ExactKernel, Nystroem
from rfrepro.kernels import gaussian_kernel, laplacian_kernel, polynomial_kernel

KERNEL_FUNCS = {"gaussian": gaussian_kernel, "laplacian": laplacian_kernel}


def _data(n: int = 60, d: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).standard_normal((n, d))


def _landmark_rows(X: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Indices of the rows of X equal to the rows of L."""
    match = np.all(X[None, :, :] == L[:, None, :], axis=2)
    assert np.all(match.sum(axis=1) == 1)
    return match.argmax(axis=1)


# ---------------------------------------------------------------- Nystroem


@pytest.mark.parametrize("kernel, sigma", [("gaussian", 1.5), ("laplacian", 3.0)])
def test_all_points_as_landmarks_reproduces_K(kernel, sigma):
    X = _data(60)
    K = KERNEL_FUNCS[kernel](X, sigma=sigma)
    Z = Nystroem(60, kernel=kernel, sigma=sigma, random_state=0).fit_transform(X)
    assert Z.shape == (60, 60)
    np.testing.assert_allclose(Z @ Z.T, K, rtol=0, atol=1e-8)


@pytest.mark.parametrize("kernel, sigma", [("gaussian", 1.5), ("laplacian", 3.0)])
def test_features_are_C_W_pinv_C(kernel, sigma):
    X = _data(80)
    Y = _data(25, seed=1)
    nys = Nystroem(15, kernel=kernel, sigma=sigma, random_state=0).fit(X)
    L = nys.components_
    idx = _landmark_rows(X, L)
    assert nys.components_.shape == (15, 3) and np.all(np.diff(idx) > 0)
    kf = KERNEL_FUNCS[kernel]
    C_X, C_Y, W = kf(X, L, sigma=sigma), kf(Y, L, sigma=sigma), kf(L, sigma=sigma)
    expected = C_Y @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ C_X.T
    Zx, Zy = nys.transform(X), nys.transform(Y)
    assert Zy.shape == (25, 15) and nys.n_features_out_ == 15
    np.testing.assert_allclose(Zy @ Zx.T, expected, rtol=0, atol=1e-10)
    # on the landmarks themselves the approximation is exact
    np.testing.assert_allclose(Zx[idx] @ Zx[idx].T, W, rtol=0, atol=1e-10)


def test_normalization_is_inverse_square_root():
    X = _data(50)
    nys = Nystroem(10, sigma=2.0, random_state=0).fit(X)
    W = gaussian_kernel(nys.components_, sigma=2.0)
    M = nys.normalization_
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    np.testing.assert_allclose(M @ W @ M, np.eye(10), atol=1e-9)


def test_duplicate_landmarks_do_not_blow_up():
    # a rank-deficient K_mm: the pseudo-inverse square root drops its null space
    X = np.repeat(_data(10), 3, axis=0)
    nys = Nystroem(30, sigma=1.0, random_state=0).fit(X)
    Z = nys.transform(X)
    assert np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z @ Z.T, gaussian_kernel(X, sigma=1.0), atol=1e-8)


def test_nystroem_seeds():
    X = _data(100)
    Z1 = Nystroem(10, random_state=5).fit_transform(X)
    Z2 = Nystroem(10, random_state=5).fit_transform(X)
    Z3 = Nystroem(10, random_state=6).fit_transform(X)
    np.testing.assert_array_equal(Z1, Z2)
    assert np.abs(Z1 @ Z1.T - Z3 @ Z3.T).max() > 1e-3


def test_nystroem_float32():
    X = _data(100)
    nys64 = Nystroem(20, sigma=1.5, random_state=0).fit(X)
    nys32 = Nystroem(20, sigma=1.5, random_state=0).fit(X.astype(np.float32))
    Z64, Z32 = nys64.transform(X), nys32.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and nys32.components_.dtype == np.float32
    np.testing.assert_allclose(Z32 @ Z32.T, Z64 @ Z64.T, atol=1e-4)


def test_nystroem_more_components_than_rows_uses_every_row():
    """As scikit-learn's Nystroem: every row becomes a landmark, with a warning; exact on the rows."""
    X = _data(10)
    with pytest.warns(UserWarning, match="n_components=11 landmarks but only 10 rows"):
        nys = Nystroem(11, sigma=1.0, random_state=0).fit(X)
    assert nys.n_components_ == 10 and nys.transform(X).shape == (10, 10)
    Z = nys.transform(X)
    np.testing.assert_allclose(Z @ Z.T, gaussian_kernel(X, sigma=1.0), atol=1e-8)


@pytest.mark.parametrize("n_components", [0, -1, 3.0])
def test_nystroem_bad_n_components(n_components):
    with pytest.raises(ValueError, match="n_components"):
        Nystroem(n_components).fit(_data(10))


def test_nystroem_unknown_kernel_lists_valid_ones():
    with pytest.raises(ValueError, match=r"'kernel' .* among \{'gaussian', 'laplacian', 'polynomial'\}\. Got 'cauchy'"):
        Nystroem(5, kernel="cauchy").fit(_data(10))


def _unit_rows(n: int, d: int = 5, seed: int = 0) -> np.ndarray:
    X = _data(n, d, seed)
    return X / np.linalg.norm(X, axis=1, keepdims=True)  # the polynomial leaderboard's rows


@pytest.mark.parametrize("degree, offset", [(7, 1.0), (2, 0.5), (3, 0.0)])
def test_nystroem_polynomial_with_every_row_a_landmark_is_exact(degree, offset):
    X = _unit_rows(60)
    nys = Nystroem(60, kernel="polynomial", degree=degree, offset=offset, random_state=0).fit(X)
    Z = nys.transform(X)
    assert Z.shape == (60, 60) and not hasattr(nys, "sigma_")  # no bandwidth to resolve
    np.testing.assert_allclose(Z @ Z.T, polynomial_kernel(X, degree=degree, offset=offset), rtol=0, atol=1e-8)


def test_nystroem_polynomial_features_are_C_W_pinv_C():
    X, Y = _unit_rows(80), _unit_rows(20, seed=1)
    nys = Nystroem(25, kernel="polynomial", degree=7, offset=1.0, random_state=3).fit(X)
    L = nys.components_
    W, C_X, C_Y = (polynomial_kernel(A, B, degree=7, offset=1.0) for A, B in ((L, L), (X, L), (Y, L)))
    expected = C_Y @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ C_X.T
    np.testing.assert_allclose(nys.transform(Y) @ nys.transform(X).T, expected, rtol=0, atol=1e-9)


def test_nystroem_polynomial_error_falls_with_more_landmarks():
    X = _unit_rows(300, d=8)
    K = polynomial_kernel(X, degree=7, offset=1.0)
    errors = []
    for m in (10, 40, 160, 300):
        Z = Nystroem(m, kernel="polynomial", degree=7, offset=1.0, random_state=0).fit_transform(X)
        errors.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
    assert errors[0] > errors[1] > errors[2] > errors[3] and errors[-1] < 1e-8, errors
    assert errors[0] > 0.05  # 10 landmarks leave a visible error: the test tells the sizes apart


@pytest.mark.parametrize("bad, match", [({"degree": 0}, "degree"), ({"offset": -1.0}, "offset")])
def test_nystroem_polynomial_bad_parameters(bad, match):
    with pytest.raises(ValueError, match=match):
        Nystroem(5, kernel="polynomial", **bad).fit(_unit_rows(10))


def test_nystroem_median_sigma():
    X = _data(40)
    iu = np.triu_indices(40, k=1)
    dist = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))[iu]
    nys = Nystroem(5, sigma="median", random_state=0).fit(X)
    assert nys.sigma_ == pytest.approx(np.median(dist), rel=1e-12)


def test_nystroem_transform_other_number_of_features():
    nys = Nystroem(5, random_state=0).fit(_data(10))
    with pytest.raises(ValueError, match="features"):
        nys.transform(_data(10, 4))


# ---------------------------------------------------------------- ExactKernel


@pytest.mark.parametrize("kernel, sigma", [("gaussian", 1.5), ("laplacian", 3.0)])
def test_exact_kernel_transform_is_K_Y_X(kernel, sigma):
    X, Y = _data(40), _data(17, seed=1)
    ek = ExactKernel(kernel=kernel, sigma=sigma).fit(X)
    out = ek.transform(Y)
    assert out.shape == (17, 40) and ek.n_features_out_ == 40
    np.testing.assert_array_equal(out, KERNEL_FUNCS[kernel](Y, X, sigma=sigma))
    np.testing.assert_allclose(ek.transform(X), KERNEL_FUNCS[kernel](X, sigma=sigma), atol=1e-15)


def test_exact_kernel_polynomial():
    X, Y = _data(30), _data(11, seed=1)
    ek = ExactKernel(kernel="polynomial", degree=3, offset=0.5).fit(X)
    np.testing.assert_allclose(ek.transform(Y), (Y @ X.T + 0.5) ** 3, rtol=1e-12)
    np.testing.assert_allclose(
        ek.transform(Y), polynomial_kernel(Y, X, degree=3, offset=0.5), rtol=1e-14
    )
    assert not hasattr(ek, "sigma_")


def test_exact_kernel_float32():
    X = _data(30).astype(np.float32)
    out = ExactKernel(sigma=1.0).fit(X).transform(X)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, gaussian_kernel(X.astype(np.float64), sigma=1.0), atol=1e-5)


def test_exact_kernel_output_kind():
    assert ExactKernel.output_kind == "kernel"


def test_exact_kernel_cache_returns_the_same_block_and_zero_turns_it_off():
    X, Y = _data(30), _data(9, seed=2)
    cached = ExactKernel(sigma=1.0).fit(X)
    first = cached.transform(Y)
    assert cached.transform(Y) is first and not first.flags.writeable  # a hit: no recomputation
    fresh = ExactKernel(sigma=1.0, cache_bytes=0).fit(X)
    a, b = fresh.transform(Y), fresh.transform(Y)
    assert a is not b and a is not first and a.flags.writeable  # computed afresh each time
    np.testing.assert_array_equal(a, first)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1GB"])
def test_exact_kernel_rejects_a_bad_cache_size(bad):
    with pytest.raises(ValueError, match="cache_bytes"):
        ExactKernel(cache_bytes=bad).fit(_data(10))


def test_exact_kernel_unknown_kernel():
    with pytest.raises(ValueError, match=r"'kernel' .* among \{'gaussian', 'laplacian', 'polynomial'\}\. Got 'cosine'"):
        ExactKernel(kernel="cosine").fit_transform(_data(10))


def test_exact_kernel_median_sigma_is_deterministic():
    # above max_points rows, the median rule subsamples: ExactKernel has no
    # random_state parameter, so the subsample must still be fixed
    X = _data(2100, 2)
    sigmas = {ExactKernel(sigma="median").fit(X).sigma_ for _ in range(3)}
    assert len(sigmas) == 1
