"""Time the kernel-error metric (``rfrepro.metrics.kernel_errors``) against a bare GEMM Z Z^T.

The relative errors ||K - ZZ^T|| / ||K|| (Frobenius and spectral) of every run
with ``eval.kernel_error``: up to 4096 rows the residual is held whole, a dense
Z's product from syrk (one triangle) and the Lanczos iterations of the spectral
norm read it. Printed per (n, D), best of ``--repeats`` in one process:

  whole/GEMM       kernel_errors over one bare GEMM Z @ Z.T of the same shape
                   (the residual's product alone; goal <= 1: syrk does half its flops);
  through-K-Z/GEMM the same errors with the residual formed in row blocks and the
                   iterations applying K v - Z (Z^T v) (the path above 4096 rows);
  spectral rel. diff |kerr_spec| of the two paths, relative (rounding only).

Sizes: the leaderboard's (n = 1000, D = 4096), Chen et al.'s Fig. 1 (n = 3000)
and the spine study's (n = 4000). One thread by default, as each run of a
sweep at ``--jobs 2`` on 2 cores has.

    python scripts/bench_kernel_errors.py            # the sizes above
    python scripts/bench_kernel_errors.py --quick    # small sizes, a second
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import fastest, gemm_control
from threadpoolctl import threadpool_limits

from rfrepro.kernels import gaussian_kernel
from rfrepro.metrics import kernel as kernel_metrics
from rfrepro.runner.env import summary_line

SIZES = ((1000, 512), (1000, 4096), (3000, 512), (3000, 2048), (4000, 1024))
QUICK_SIZES = ((300, 64), (300, 512))


def errors_through_blocks(ref, Z):
    """kernel_errors with the residual never held whole (the path above RESIDUAL_WHOLE_VALUES)."""
    saved = kernel_metrics.RESIDUAL_WHOLE_VALUES
    kernel_metrics.RESIDUAL_WHOLE_VALUES = 0
    try:
        return kernel_metrics.kernel_errors(ref, Z)
    finally:
        kernel_metrics.RESIDUAL_WHOLE_VALUES = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1, as a run at --jobs 2)")
    args = ap.parse_args(argv)
    print(summary_line())
    rng = np.random.RandomState(0)
    with threadpool_limits(args.threads):
        for n, D in QUICK_SIZES if args.quick else SIZES:
            X = rng.standard_normal((n, 20))
            sigma = float(np.sqrt(20))
            ref = kernel_metrics.KernelReference.from_matrix(gaussian_kernel(X, sigma=sigma))
            W = rng.standard_normal((20, D)) / sigma
            Z = np.sqrt(2.0 / D) * np.cos(X @ W + rng.uniform(0, 2 * np.pi, D))
            gemm = gemm_control(Z, Z.T, args.repeats).best
            whole = fastest(lambda ref=ref, Z=Z: kernel_metrics.kernel_errors(ref, Z), args.repeats, keep=True)
            blocks = fastest(lambda ref=ref, Z=Z: errors_through_blocks(ref, Z), args.repeats, keep=True)
            a, b = whole.out["kerr_spec"], blocks.out["kerr_spec"]
            diff = abs(a - b) / b
            print(f"n = {n}, D = {D}: GEMM {gemm:.3f} s, whole {whole.best:.3f} s, "
                  f"through K and Z {blocks.best:.3f} s")
            print(f"  whole/GEMM: {whole.best / gemm:.2f}")
            print(f"  through-K-Z/GEMM: {blocks.best / gemm:.2f}")
            print(f"  spectral rel. diff: {diff:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
