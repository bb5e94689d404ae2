"""Fused, parallel ``scale * cos(Z + b)`` and ``scale * [cos(P), sin(P)]`` for random Fourier features.

``np.cos`` runs on one core and costs about as much as the GEMM before it.
Here each cosine is a branch-free Cody-Waite range reduction plus a short
polynomial, which LLVM vectorises; rows are split over the cores with
``prange``. Each dtype has its own kernel, so float32 data is reduced and
evaluated in float32 (twice the SIMD width, a third of the polynomial terms):

* float64 ``cos``: reduction modulo 2 pi, even Taylor polynomial of degree 32
  on [-pi, pi]. Absolute error within ``1e-14 * max(1, |x|)`` of ``np.cos``.
* float64 ``[cos, sin]``: one reduction modulo pi/2 (three-part pi/2), then
  cos and sin of the reduced argument r in [-pi/4, pi/4] (Taylor, degrees 16
  and 17), swapped and signed by the quadrant. Same bound as above.
* float32: reduction modulo pi (``cos``) or pi/2 (``[cos, sin]``) with a
  three-part constant whose leading parts have 12 significant bits, so that
  ``k * part`` is exact for |x| < 4096 pi; Taylor polynomials of degree 12
  (cos on [-pi/2, pi/2]) or 8 and 9 (on [-pi/4, pi/4]). Absolute error
  within :data:`FLOAT32_ABS_ERROR` (2.5 float32 ulps of 1) of the exact
  cosine and sine of the float32 argument for |x| <= :data:`FLOAT32_MAX_ARG`;
  most of it is the rounding of r to float32 near the zeros of cos.

The outputs depend on neither the thread count nor the row split: each value
is computed by the same straight-line code.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload
from threadpoolctl import ThreadpoolController

from rfrepro.jit import threaded_and_serial

# ---------------------------------------------------------------- float64 cos (mod 2 pi)

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


# ---------------------------------------------------------------- float64 sin and cos (mod pi/2)

# pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 (fdlibm's split): the first two have 33
# significant bits, so k * _PIO2_1 and k * _PIO2_2 are exact for |k| < 2^20.
_PIO2_1 = 1.57079632673412561417e00
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3 = 2.02226624879595063154e-21
_TWO_OVER_PI = 2.0 / math.pi
_SIN64 = [(-1.0) ** k / math.factorial(2 * k + 1) for k in range(9)]
_COS64 = [(-1.0) ** k / math.factorial(2 * k) for k in range(9)]
(_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7, _S8) = _SIN64
(_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8) = _COS64


@njit(inline="always", cache=True)
def _quadrant_swap_signs(k):
    """From the quadrant k of x = k pi/2 + r: (swap, cos sign, sin sign).

    cos x = +c, -s, -c, +s and sin x = +s, +c, -s, -c for k mod 4 = 0, 1, 2, 3,
    where c, s are the cosine and sine of r. Written with floor and
    comparisons (no integer casts) so the loop stays vectorised.
    """
    q = k - 4.0 * np.floor(k * 0.25)
    swap = (q == 1.0) | (q == 3.0)
    cos_sign = 1.0 - 2.0 * ((q == 1.0) | (q == 2.0))
    sin_sign = 1.0 - 2.0 * (q >= 2.0)
    return swap, cos_sign, sin_sign


@njit(inline="always", cache=True)
def _sincos64(x):
    k = np.rint(x * _TWO_OVER_PI)
    r = ((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    y = r * r
    c = _C8
    c = c * y + _C7
    c = c * y + _C6
    c = c * y + _C5
    c = c * y + _C4
    c = c * y + _C3
    c = c * y + _C2
    c = c * y + _C1
    c = c * y + _C0
    s = _S8
    s = s * y + _S7
    s = s * y + _S6
    s = s * y + _S5
    s = s * y + _S4
    s = s * y + _S3
    s = s * y + _S2
    s = s * y + _S1
    s = (s * y + _S0) * r
    swap, cos_sign, sin_sign = _quadrant_swap_signs(k)
    cos_x = cos_sign * (s if swap else c)
    sin_x = sin_sign * (c if swap else s)
    return sin_x, cos_x


# ---------------------------------------------------------------- float32


def _split_f32(value: float, head_bits: int) -> tuple[np.float32, np.float32, np.float32]:
    """``value`` as hi + mid + lo in float32; hi and mid have ``head_bits`` significant bits."""
    parts = []
    rest = value
    for _ in range(2):
        mant, exp = math.frexp(rest)
        head = math.ldexp(round(math.ldexp(mant, head_bits)), exp - head_bits)
        parts.append(np.float32(head))
        rest -= head
    parts.append(np.float32(rest))
    return tuple(parts)


#: float32 accuracy: absolute error bound (2.5 ulps of 1.0) for |x| up to FLOAT32_MAX_ARG
FLOAT32_ABS_ERROR = 2.5 * 2.0**-23
#: 4096 pi: beyond it ``k * hi`` in the reduction is no longer exact
FLOAT32_MAX_ARG = 4096 * math.pi

# |k| < 2^12 for the pi split and < 2^13 for the pi/2 split at FLOAT32_MAX_ARG
_PI32_1, _PI32_2, _PI32_3 = _split_f32(math.pi, 12)
_PIO2_32_1, _PIO2_32_2, _PIO2_32_3 = _split_f32(0.5 * math.pi, 11)
_INV_PI32 = np.float32(1.0 / math.pi)
_TWO_OVER_PI32 = np.float32(2.0 / math.pi)
(_F0, _F1, _F2, _F3, _F4, _F5, _F6) = (np.float32(c) for c in _COS64[:7])
(_G0, _G1, _G2, _G3, _G4) = (np.float32(c) for c in _COS64[:5])
(_H0, _H1, _H2, _H3, _H4) = (np.float32(c) for c in _SIN64[:5])
_ONE32, _TWO32, _QUARTER32, _FOUR32 = np.float32(1), np.float32(2), np.float32(0.25), np.float32(4)
_HALF32 = np.float32(0.5)


@njit(inline="always", cache=True)
def _cos32(x):
    # cos x = (-1)^k cos r with x = k pi + r, r in [-pi/2, pi/2]
    k = np.rint(x * _INV_PI32)
    r = ((x - k * _PI32_1) - k * _PI32_2) - k * _PI32_3
    y = r * r
    c = _F6
    c = c * y + _F5
    c = c * y + _F4
    c = c * y + _F3
    c = c * y + _F2
    c = c * y + _F1
    c = c * y + _F0
    odd = k - _TWO32 * np.floor(k * _HALF32)
    return (_ONE32 - _TWO32 * odd) * c


@njit(inline="always", cache=True)
def _sincos32(x):
    k = np.rint(x * _TWO_OVER_PI32)
    r = ((x - k * _PIO2_32_1) - k * _PIO2_32_2) - k * _PIO2_32_3
    y = r * r
    c = _G4
    c = c * y + _G3
    c = c * y + _G2
    c = c * y + _G1
    c = c * y + _G0
    s = _H4
    s = s * y + _H3
    s = s * y + _H2
    s = s * y + _H1
    s = (s * y + _H0) * r
    q = k - _FOUR32 * np.floor(k * _QUARTER32)
    swap = (q == _ONE32) | (q == np.float32(3))
    cos_sign = _ONE32 - _TWO32 * np.float32((q == _ONE32) | (q == _TWO32))
    sin_sign = _ONE32 - _TWO32 * np.float32(q >= _TWO32)
    cos_x = cos_sign * (s if swap else c)
    sin_x = sin_sign * (c if swap else s)
    return sin_x, cos_x


# ---------------------------------------------------------------- dtype dispatch


def _cos_of(x):  # pragma: no cover - replaced by the overload inside jitted code
    raise NotImplementedError


def _sincos_of(x):  # pragma: no cover - replaced by the overload inside jitted code
    raise NotImplementedError


@overload(_cos_of, inline="always")
def _cos_of_impl(x):
    if x == types.float32:
        return lambda x: _cos32(x)
    return lambda x: _cos(x)


@overload(_sincos_of, inline="always")
def _sincos_of_impl(x):
    if x == types.float32:
        return lambda x: _sincos32(x)
    return lambda x: _sincos64(x)


#: Below this many values, waking the thread pool costs more than it saves.
PARALLEL_MIN_VALUES = 1 << 16

#: what a fused structured-projection kernel (Fastfood's, SORF's) writes: the
#: projections themselves, sqrt(2/D) cos(v + b), or sqrt(1/D) [cos(v), sin(v)]
RAW, COS, COSSIN = 0, 1, 2
#: rows handled by one task of such a kernel's parallel loop: its length-d'
#: work vectors are allocated once per task, not once per row
ROWS_PER_TASK = 16


def _cos_bias_body(Z, b, scale):
    n, D = Z.shape
    for i in prange(n):
        row = Z[i]
        for j in range(D):
            row[j] = scale * _cos_of(row[j] + b[j])


def _cos_sin_body(P, out, scale):
    n, D = P.shape
    for i in prange(n):
        src = P[i]
        cos_dst = out[i, :D]
        sin_dst = out[i, D:]
        for j in range(D):
            s, c = _sincos_of(src[j])
            cos_dst[j] = scale * c
            sin_dst[j] = scale * s


def _cos_sin_inplace_body(out, scale):
    # P in the sine half: one array indexed j and D + j, so LLVM sees that no
    # write meets a later read and vectorises (two aliasing arrays would make
    # its runtime overlap check fail and the loop run scalar, about twice as slow)
    n, D = out.shape[0], out.shape[1] // 2
    for i in prange(n):
        row = out[i]
        for j in range(D):
            s, c = _sincos_of(row[D + j])
            row[j] = scale * c
            row[D + j] = scale * s


# nogil: the serial kernels also run on the row blocks of the projections below, a Python thread each
_cos_bias_par, _cos_bias_ser = threaded_and_serial(_cos_bias_body, nogil=True)
_cos_sin_par, _cos_sin_ser = threaded_and_serial(_cos_sin_body, nogil=True)
# serial only: it runs on the row blocks of project_cos_sin_into, one Python thread each
_cos_sin_inplace_ser = njit(cache=True, nogil=True)(_cos_sin_inplace_body)


@cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()  # made once: it inspects the loaded libraries


@cache
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="rfrepro-rows")


def _on_row_blocks(n_rows: int, n_values: int, work) -> None:
    """Run ``work(rows)`` on contiguous row blocks, one per numba thread, each GEMM on one BLAS thread.

    A projection then a cosine, each on all the cores, hands the cores from
    BLAS's threads to numba's, while BLAS's idle threads still spin: the
    cosine ran at about half speed (float32 RKS, n = 20000, d = 784,
    D = 4096: 1.13x the GEMM's time where blocks take 1.04x, medians of 7).
    Each block instead runs its GEMM on one BLAS thread and its cosine in
    the serial kernel, on a Python thread of its own (both release the GIL).
    One-thread GEMMs also make the features the same for any thread count
    and row split (a multi-threaded GEMM's rounding depends on its threads).
    """
    threads = max(1, min(numba.get_num_threads(), n_rows)) if n_values >= PARALLEL_MIN_VALUES else 1
    with _blas().limit(limits=1, user_api="blas"):
        if threads == 1:
            work(slice(0, n_rows))
            return
        bounds = np.linspace(0, n_rows, threads + 1).round().astype(int)
        list(_pool(threads).map(work, [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]))


def cos_bias_inplace(Z: np.ndarray, b: np.ndarray, scale: float) -> None:
    """Overwrite the C-contiguous 2-D array ``Z`` with ``scale * cos(Z + b)``."""
    kernel = _cos_bias_par if Z.size >= PARALLEL_MIN_VALUES else _cos_bias_ser
    kernel(Z, b.astype(Z.dtype, copy=False), Z.dtype.type(scale))


def cos_sin_into(P: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``scale * [cos(P), sin(P)]`` into ``out`` (shape n x 2D); ``P`` must not overlap ``out``."""
    kernel = _cos_sin_par if P.size >= PARALLEL_MIN_VALUES else _cos_sin_ser
    kernel(P.astype(out.dtype, copy=False), out, out.dtype.type(scale))


def project_cos_bias_into(X: np.ndarray, W: np.ndarray, b: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``scale * cos(X W + b)`` into ``out`` (n x D): the product in place, row blocks on the cores.

    >>> X, W, b = np.eye(2), np.array([[0.0, np.pi]] * 2), np.zeros(2)
    >>> out = np.empty((2, 2)); project_cos_bias_into(X, W, b, out, 1.0); out.round(12).tolist()
    [[1.0, -1.0], [1.0, -1.0]]
    """
    D = W.shape[1]
    if out.shape != (X.shape[0], D) or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous ({X.shape[0]}, {D}) array, got {out.shape}")
    W, b, scale = W.astype(out.dtype, copy=False), b.astype(out.dtype, copy=False), out.dtype.type(scale)

    def block(rows):
        np.matmul(X[rows], W, out=out[rows])
        _cos_bias_ser(out[rows], b, scale)

    _on_row_blocks(X.shape[0], out.size, block)


def project_cos_sin_into(X: np.ndarray, W: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``scale * [cos(X W), sin(X W)]`` into ``out`` (n x 2D) with no n x D temporary.

    The product goes into ``out``'s sine half (a strided view that BLAS
    writes in place), and each of its values is read before its cosine and
    sine overwrite it. A fresh n x D product would be allocated and
    page-faulted for every row chunk, about as many bytes again as the
    features. ``out`` must be C-contiguous in its rows (a row slice of a
    C-contiguous array is). Row blocks run on the cores as in
    :func:`project_cos_bias_into`.
    """
    D = W.shape[1]
    if out.shape != (X.shape[0], 2 * D) or out.strides[1] != out.itemsize:
        raise ValueError(f"out must be a row-contiguous ({X.shape[0]}, {2 * D}) array, got {out.shape}")
    W, scale = W.astype(out.dtype, copy=False), out.dtype.type(scale)

    def block(rows):
        np.matmul(X[rows], W, out=out[rows, D:])
        _cos_sin_inplace_ser(out[rows], scale)

    _on_row_blocks(X.shape[0], out.size // 2, block)


def project_fourier_into(X: np.ndarray, W: np.ndarray, offset: np.ndarray | None, out: np.ndarray,
                         variant: str) -> None:
    """Random Fourier features of the projections X W into ``out``, for the D = ``W.shape[1]`` columns of W.

    ``"cos"``: sqrt(2/D) cos(X W + offset) (:func:`project_cos_bias_into`);
    ``"cossin"``: sqrt(1/D) [cos(X W), sin(X W)] (:func:`project_cos_sin_into`,
    ``offset`` unused). The one transform of every map that projects by a
    dense W (RKS, ORF, RFF selection's kept frequencies).

    >>> X, W = np.eye(2), np.array([[0.0, np.pi]] * 2)
    >>> out = np.empty((2, 4)); project_fourier_into(X, W, None, out, "cossin"); out.round(12).tolist()[0]
    [0.707106781187, -0.707106781187, 0.0, 0.0]
    """
    D = W.shape[1]
    W = W.astype(out.dtype, copy=False)
    if variant == "cos":
        project_cos_bias_into(X, W, offset, out, math.sqrt(2.0 / D))
    else:
        project_cos_sin_into(X, W, out, math.sqrt(1.0 / D))
