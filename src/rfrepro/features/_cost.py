"""What a transform costs: floating-point operations and compulsory memory traffic.

Every feature map declares ``cost(n, dtype)``, the work of transforming ``n``
rows once it is fitted, from the pieces below, so a run can be set against
the host's roofline (``max(flops / peak rate, bytes / bandwidth)``).

Conventions
-----------
- A multiply-add counts as 2 flops: a dense ``(m x k) @ (k x n)`` product is
  ``2 m k n`` (:func:`gemm`).
- One length-``L`` Walsh-Hadamard transform is ``L log2 L`` flops (one add or
  subtract per element per butterfly stage, :func:`fwht`); a real FFT of
  length ``L`` is ``2.5 L log2 L`` (half the ``5 L log2 L`` of a complex one,
  :func:`rfft`).
- A cosine, sine, exponential or power counts as :data:`TRANSCENDENTAL_FLOPS`
  = 40, whatever the dtype: the float64 ``scale * cos(x + b)`` of
  :mod:`rfrepro.features._trig` does a Cody-Waite range reduction (6 flops),
  ``r * r`` (1), 16 Horner steps of its degree-32 even polynomial (32) and
  the scale (1). Its float32 and ``[cos, sin]`` kernels use shorter
  polynomials; one constant keeps the flops of a map independent of the
  dtype, so the float32 roofline reads as "the same work at the float32 peak".
- Bytes are compulsory traffic at the dtypes the transform actually uses:
  read the input once, read the fitted parameters once, write the output
  once. Intermediates (the inner features of a composed map, the projections
  before the cosine) are not counted: a chunked transform keeps them in cache
  at best, so the bound stays a lower bound.
"""

from __future__ import annotations

import math

import numpy as np

#: flops of one cos / sin / exp (see the module docstring)
TRANSCENDENTAL_FLOPS = 40


def cost(flops: float, nbytes: float) -> dict:
    """The ``{"flops", "bytes"}`` dict every ``cost`` method returns (integers)."""
    return {"flops": int(round(flops)), "bytes": int(round(nbytes))}


def itemsize(dtype) -> int:
    return np.dtype(dtype).itemsize


def log2(length: int) -> float:
    return math.log2(length) if length > 1 else 0.0


def gemm(m: int, k: int, n: int) -> int:
    """Flops of a dense ``(m x k) @ (k x n)`` product."""
    return 2 * m * k * n


def fwht(rows: int, length: int) -> float:
    """Flops of ``rows`` Walsh-Hadamard transforms of length ``length`` (a power of two)."""
    return rows * length * log2(length)


def rfft(rows: int, length: int) -> float:
    """Flops of ``rows`` real FFTs (or inverse real FFTs) of length ``length``."""
    return 2.5 * rows * length * log2(length)


def transcendental(count: int) -> int:
    """Flops of ``count`` cosines, sines or exponentials."""
    return TRANSCENDENTAL_FLOPS * count


def fourier(n: int, d: int, n_freq: int, variant: str, project_flops: float, param_bytes: int,
            dtype) -> dict:
    """Random Fourier features from projections that cost ``project_flops``.

    ``"cos"``: ``n_freq`` outputs and ``n_freq`` phases to read;
    ``"cossin"``: ``2 n_freq`` outputs. ``param_bytes``: the projection's parameters.
    """
    size = itemsize(dtype)
    n_out = n_freq if variant == "cos" else 2 * n_freq
    phases = n_freq * size if variant == "cos" else 0
    return cost(project_flops + transcendental(n * n_out),
                size * (n * d + n * n_out) + param_bytes + phases)


def dense_fourier(n: int, d: int, n_freq: int, variant: str, dtype) -> dict:
    """Random Fourier features with a dense ``(d, n_freq)`` frequency matrix (RKS, ORF, QMC)."""
    return fourier(n, d, n_freq, variant, gemm(n, d, n_freq), d * n_freq * itemsize(dtype), dtype)


def chain(first: dict, second: dict, intermediate_bytes: int) -> dict:
    """The cost of ``second(first(x))``: the intermediate is neither written nor read back."""
    return cost(first["flops"] + second["flops"],
                first["bytes"] + second["bytes"] - 2 * intermediate_bytes)


def dense_projection(n: int, d_in: int, d_out: int, dtype) -> dict:
    """``X @ P`` with a dense ``(d_in, d_out)`` matrix P."""
    return cost(gemm(n, d_in, d_out), itemsize(dtype) * (n * d_in + d_in * d_out + n * d_out))


def kernel_block(n: int, m: int, d: int, dtype) -> dict:
    """``k(X, Y)`` of ``n`` rows against ``m`` fitted rows: a GEMM-shaped distance and one exp each."""
    return cost(gemm(n, d, m) + transcendental(n * m), itemsize(dtype) * (n * d + m * d + n * m))
