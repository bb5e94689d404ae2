"""Tests of the fused cosine kernels behind random Fourier features."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.features._trig import cos_bias_inplace, cos_sin_into


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


def test_cos_sin_into_wide_range():
    x = np.linspace(-1e3, 1e3, 100_001)
    out = np.empty((1, 2 * x.size))
    cos_sin_into(x.reshape(1, -1), out, 1.0)
    bound = 1e-14 * np.maximum(1.0, np.abs(x))
    assert np.all(np.abs(out[0, : x.size] - np.cos(x)) <= bound)
    assert np.all(np.abs(out[0, x.size :] - np.sin(x)) <= bound)
