"""Tests of the fused cosine kernels behind random Fourier features."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rfrepro.features import _trig
from rfrepro.features._trig import (
    FLOAT32_ABS_ERROR,
    FLOAT32_MAX_ARG,
    cos_bias_inplace,
    cos_sin_into,
    project_cos_sin_into,
)


def _fused_cos(x: np.ndarray) -> np.ndarray:
    """cos(x) through cos_bias_inplace with zero offset and unit scale."""
    Z = np.array(x, dtype=np.float64).reshape(1, -1)
    cos_bias_inplace(Z, np.zeros(Z.shape[1]), 1.0)
    return Z.ravel()


def _wide_grid() -> np.ndarray:
    rng = np.random.RandomState(0)
    return np.concatenate(
        [
            np.linspace(-1e3, 1e3, 400_001),
            rng.uniform(-1e3, 1e3, 200_000),
            # multiples of pi/2 and their neighbours: where cos and sin cross zero
            np.arange(-636, 637) * (np.pi / 2),
            np.nextafter(np.arange(-636, 637) * (np.pi / 2), np.inf),
        ]
    )


def _typical_arguments() -> np.ndarray:
    # W^T x + b with W ~ N(0, 1/sigma^2), b ~ U[0, 2 pi): a few units at most
    rng = np.random.RandomState(1)
    return np.concatenate([rng.standard_normal(200_000) * 3.0, rng.uniform(0, 2 * np.pi, 100_000)])


@pytest.mark.parametrize("make_x", [_wide_grid, _typical_arguments], ids=["wide", "typical"])
def test_fused_cos_matches_numpy(make_x):
    x = make_x()
    err = np.abs(_fused_cos(x) - np.cos(x))
    bound = 1e-14 * np.maximum(1.0, np.abs(x))
    worst = np.argmax(err / bound)
    assert err[worst] <= bound[worst], f"x={x[worst]!r}: error {err[worst]:.3g}"


def test_cos_bias_inplace_adds_offset_and_scales():
    rng = np.random.RandomState(2)
    Z = rng.standard_normal((37, 53)) * 5.0
    b = rng.uniform(0, 2 * np.pi, 53)
    expected = 0.25 * np.cos(Z + b)
    cos_bias_inplace(Z, b, 0.25)
    np.testing.assert_allclose(Z, expected, rtol=0, atol=1e-14)


def test_cos_bias_inplace_float32():
    rng = np.random.RandomState(3)
    Z = (rng.standard_normal((20, 30)) * 4.0).astype(np.float32)
    b = rng.uniform(0, 2 * np.pi, 30)
    expected = 0.5 * np.cos(Z.astype(np.float64) + b.astype(np.float32))
    cos_bias_inplace(Z, b, 0.5)
    assert Z.dtype == np.float32
    np.testing.assert_allclose(Z, expected, rtol=0, atol=2e-6)


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-14), (np.float32, 2e-6)])
def test_cos_sin_into_matches_numpy(dtype, atol):
    rng = np.random.RandomState(4)
    P = (rng.standard_normal((41, 29)) * 6.0).astype(dtype)
    out = np.full((41, 58), np.nan, dtype=dtype)
    cos_sin_into(P, out, 0.75)
    P64 = P.astype(np.float64)
    np.testing.assert_allclose(out[:, :29], 0.75 * np.cos(P64), rtol=0, atol=atol)
    np.testing.assert_allclose(out[:, 29:], 0.75 * np.sin(P64), rtol=0, atol=atol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows", [1, 700])  # one row; a block on the parallel kernel
def test_project_cos_sin_into_is_cos_sin_into_of_the_product_without_a_temporary(dtype, rows):
    """The product written into out's sine half, then overwritten in place: the same bits
    as cos_sin_into(X @ W), and no array of the product's size allocated beside out."""
    rng = np.random.RandomState(5)
    X = rng.standard_normal((rows, 13)).astype(dtype)
    W = rng.standard_normal((13, 200)).astype(dtype)
    want = np.full((rows, 400), np.nan, dtype=dtype)
    cos_sin_into(X @ W, want, 0.5)
    got = np.full((rows, 400), np.nan, dtype=dtype)
    project_cos_sin_into(X, W, np.empty_like(got), 0.5)  # compile (or load) the kernel outside the trace
    tracemalloc.start()
    try:
        project_cos_sin_into(X, W, got, 0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, want)
    assert peak < (X @ W).nbytes / 4 + 4096


@pytest.mark.parametrize("make_x", [_wide_grid, _typical_arguments], ids=["wide", "typical"])
def test_cos_sin_into_matches_numpy_float64(make_x):
    # one reduction modulo pi/2 for both outputs: the quadrant logic is exercised
    # at the multiples of pi/2 and their neighbours of the wide grid
    x = make_x()
    out = np.empty((1, 2 * x.size))
    cos_sin_into(x.reshape(1, -1), out, 1.0)
    bound = 1e-14 * np.maximum(1.0, np.abs(x))
    for got, want in ((out[0, : x.size], np.cos(x)), (out[0, x.size :], np.sin(x))):
        err = np.abs(got - want)
        worst = np.argmax(err / bound)
        assert err[worst] <= bound[worst], f"x={x[worst]!r}: error {err[worst]:.3g}"


# ---------------------------------------------------------------- float32 kernels


def _float32_arguments() -> np.ndarray:
    """Random and adversarial float32 arguments with |x| <= FLOAT32_MAX_ARG."""
    rng = np.random.RandomState(5)
    m = np.float32(FLOAT32_MAX_ARG)
    near_zeros = (np.arange(-8192, 8193) * (np.pi / 2)).astype(np.float32)
    x = np.concatenate(
        [
            np.linspace(-m, m, 400_001, dtype=np.float32),
            rng.uniform(-m, m, 200_000).astype(np.float32),
            rng.standard_normal(200_000).astype(np.float32) * 3,
            # multiples of pi/2 rounded to float32 and their float32 neighbours
            near_zeros,
            np.nextafter(near_zeros, np.float32(np.inf)),
            np.nextafter(near_zeros, np.float32(-np.inf)),
            np.float32([0.0, -0.0, 1e-30, m, -m]),
        ]
    )
    # float32 rounding can carry the end points just past the bound
    return x[np.abs(x) <= FLOAT32_MAX_ARG]


def test_float32_bound_is_a_few_ulps():
    assert FLOAT32_ABS_ERROR <= 3 * np.finfo(np.float32).eps  # eps = 1 ulp of 1.0
    assert FLOAT32_MAX_ARG >= 1e4


def test_float32_cos_within_bound():
    x = _float32_arguments()
    Z = x.reshape(1, -1).copy()
    cos_bias_inplace(Z, np.zeros(x.size, dtype=np.float32), 1.0)
    assert Z.dtype == np.float32
    # against the exact cosine of the float32 argument
    err = np.abs(Z[0].astype(np.float64) - np.cos(x.astype(np.float64)))
    worst = np.argmax(err)
    assert err[worst] <= FLOAT32_ABS_ERROR, f"x={x[worst]!r}: error {err[worst]:.3g}"


def test_float32_cos_sin_within_bound():
    x = _float32_arguments()
    out = np.empty((1, 2 * x.size), dtype=np.float32)
    cos_sin_into(x.reshape(1, -1), out, 1.0)
    x64 = x.astype(np.float64)
    for got, want in ((out[0, : x.size], np.cos(x64)), (out[0, x.size :], np.sin(x64))):
        err = np.abs(got.astype(np.float64) - want)
        worst = np.argmax(err)
        assert err[worst] <= FLOAT32_ABS_ERROR, f"x={x[worst]!r}: error {err[worst]:.3g}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_parallel_and_serial_kernels_agree_bitwise(dtype):
    # the transforms must not depend on the thread count or the row split
    rng = np.random.RandomState(6)
    P = (rng.standard_normal((300, 257)) * 20).astype(dtype)
    b = rng.uniform(0, 2 * np.pi, 257).astype(dtype)
    scale = dtype(0.3)
    Z_par, Z_ser = P.copy(), P.copy()
    _trig._cos_bias_par(Z_par, b, scale)
    _trig._cos_bias_ser(Z_ser, b, scale)
    np.testing.assert_array_equal(Z_par, Z_ser)
    out_par = np.empty((300, 514), dtype=dtype)
    out_ser = np.empty((300, 514), dtype=dtype)
    _trig._cos_sin_par(P, out_par, scale)
    _trig._cos_sin_ser(P, out_ser, scale)
    np.testing.assert_array_equal(out_par, out_ser)
    assert out_par.dtype == dtype and Z_par.dtype == dtype


def test_row_blocks_cover_the_rows_once_and_pass_on_a_failure(monkeypatch):
    # one block per numba thread: every row once; a failing block raises in the caller, BLAS's limit restored
    from threadpoolctl import threadpool_info

    monkeypatch.setattr(_trig.numba, "get_num_threads", lambda: 3)
    seen = np.zeros(1000, dtype=int)

    def mark(rows):
        seen[rows] += 1

    _trig._on_row_blocks(1000, _trig.PARALLEL_MIN_VALUES, mark)
    assert seen.tolist() == [1] * 1000
    blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    def fail(rows):
        if rows.start > 0:
            raise FloatingPointError(f"block {rows}")

    with pytest.raises(FloatingPointError, match="block"):
        _trig._on_row_blocks(1000, _trig.PARALLEL_MIN_VALUES, fail)
    assert [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] == blas
