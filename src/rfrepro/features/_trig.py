"""Fused, parallel ``scale * cos(Z + b)`` for random Fourier features.

``np.cos`` on float64 runs on one core and costs as much as the GEMM before
it. Here the cosine is a branch-free Cody-Waite range reduction plus an even
Taylor polynomial of degree 32 on [-pi, pi], which LLVM vectorises; rows are
split over the cores with ``prange``. The absolute error is within a few
float64 ulps of the argument (checked against ``np.cos`` in the tests).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_COS_COEF = np.array([(-1.0) ** k / math.factorial(2 * k) for k in range(17)])
_TWO_PI_HI = 6.283185307179586
_TWO_PI_LO = 2.4492935982947064e-16
_INV_TWO_PI = 1.0 / (2.0 * math.pi)
_HALF_PI = 0.5 * math.pi


@njit(inline="always", cache=True)
def _cos(x):
    k = np.rint(x * _INV_TWO_PI)
    r = (x - k * _TWO_PI_HI) - k * _TWO_PI_LO
    y = r * r
    p = _COS_COEF[16]
    for i in range(15, -1, -1):
        p = p * y + _COS_COEF[i]
    return p


#: Below this many values, waking the thread pool costs more than it saves.
PARALLEL_MIN_VALUES = 1 << 16


def _cos_bias_body(Z, b, scale):
    n, D = Z.shape
    for i in prange(n):
        row = Z[i]
        for j in range(D):
            row[j] = scale * _cos(row[j] + b[j])


def _cos_sin_body(P, out, scale):
    n, D = P.shape
    for i in prange(n):
        src = P[i]
        dst = out[i]
        for j in range(D):
            x = src[j]
            dst[j] = scale * _cos(x)
            dst[D + j] = scale * _cos(x - _HALF_PI)


_cos_bias_par = njit(parallel=True, cache=True)(_cos_bias_body)
_cos_bias_ser = njit(cache=True)(_cos_bias_body)
_cos_sin_par = njit(parallel=True, cache=True)(_cos_sin_body)
_cos_sin_ser = njit(cache=True)(_cos_sin_body)


def cos_bias_inplace(Z: np.ndarray, b: np.ndarray, scale: float) -> None:
    """Overwrite the C-contiguous 2-D array ``Z`` with ``scale * cos(Z + b)``."""
    kernel = _cos_bias_par if Z.size >= PARALLEL_MIN_VALUES else _cos_bias_ser
    kernel(Z, b.astype(Z.dtype, copy=False), Z.dtype.type(scale))


def cos_sin_into(P: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``scale * [cos(P), sin(P)]`` into ``out`` (shape n x 2D)."""
    kernel = _cos_sin_par if P.size >= PARALLEL_MIN_VALUES else _cos_sin_ser
    kernel(P, out, out.dtype.type(scale))
