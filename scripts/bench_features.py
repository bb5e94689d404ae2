"""Time the random-feature transforms against a bare GEMM and scikit-learn.

Everything is measured in one process on one machine, best of ``--repeats``
runs, so the ratios are comparable even on a noisy machine:

  (a) bare GEMM X @ W in float64, (b) the same in float32,
  (c) scikit-learn RBFSampler(n_components=D).transform,
  (d) RandomFourierFeatures(variant="cos").transform in float64 and float32,
  (e) RandomFourierFeatures(variant="cossin") with D/2 frequencies (D outputs),
  (f) Nystroem.transform, ours against scikit-learn's (at --nystroem-D components).

Targets (see PERFORMANCE.md): RKS "cos" in float64 within 1.3x of the bare
float64 GEMM (the cosine must cost little next to the GEMM), and float32
faster than float64; both faster than RBFSampler, which pays a single-core
np.cos as large as the GEMM. At the BLAS limit: float32 "cos" within 1.1x of
the bare float32 GEMM of the same shape, and "cossin" (D/2 frequencies, D
outputs) within 1.1x of the bare float64 GEMM with D outputs.

    python scripts/bench_features.py            # n = 20000, d = 784, D = 4096
    python scripts/bench_features.py --quick    # small sizes, a few seconds
    python scripts/bench_features.py --threads 1 --clock cpu   # on a busy machine

On a machine shared with other jobs (load average above the core count,
printed in the header) wall-clock times are dominated by the other jobs;
single-threaded CPU time still compares the work each method does, though not
what the parallel cosine gains.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import interleaved, load_average
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_approximation import RBFSampler
from threadpoolctl import threadpool_limits

from rfrepro.features import (
    Nystroem,
    OrthogonalRandomFeatures,
    RandomFourierFeatures,
    StructuredOrthogonalRandomFeatures,
)
from rfrepro.runner.env import summary_line

TARGET_RKS_OVER_GEMM = 1.3
#: float32 "cos" over the float32 GEMM, and "cossin" over the float64 GEMM with as many outputs
TARGET_AT_BLAS_LIMIT = 1.1


def environment() -> str:
    return summary_line()


def warm_up(d: int) -> None:
    """Compile (or load from cache) the numba kernels for both dtypes and both paths."""
    rng = np.random.RandomState(0)
    for dtype in (np.float64, np.float32):
        for n in (4, 4096):  # below and above the serial/parallel switch
            X = rng.standard_normal((n, d)).astype(dtype)
            for variant in ("cos", "cossin"):
                RandomFourierFeatures(64, variant=variant, random_state=0).fit_transform(X)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="rows transformed")
    parser.add_argument("--d", type=int, default=784, help="input features")
    parser.add_argument("--D", type=int, default=4096, help="output features")
    parser.add_argument("--nystroem-D", type=int, default=1024, help="Nystroem landmarks")
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing (best kept)")
    parser.add_argument("--quick", action="store_true", help="n=2000, d=64, D=512, 2 repeats")
    parser.add_argument(
        "--threads", type=int, default=None, help="limit BLAS and numba threads (default: all)"
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: elapsed time; cpu: CPU time of this process, summed over its threads "
        "(with --threads 1 it is unaffected by other processes on a busy machine)",
    )
    args = parser.parse_args(argv)
    if args.threads is not None:
        import numba

        numba.set_num_threads(args.threads)
        threadpool_limits(args.threads)
    if args.quick:
        args.n, args.d, args.D, args.nystroem_D, args.repeats = 2000, 64, 512, 256, 2
    n, d, D, m, k = args.n, args.d, args.D, args.nystroem_D, args.repeats

    rng = np.random.RandomState(0)
    X64 = rng.standard_normal((n, d))
    X32 = X64.astype(np.float32)
    sigma = float(np.sqrt(d))  # about the median distance of standard normal rows / sqrt(2)
    gamma = 1.0 / (2.0 * sigma**2)
    W64 = rng.standard_normal((d, D)) / sigma
    W32 = W64.astype(np.float32)

    print(
        f"n = {n}, d = {d}, D = {D}, Nystroem components = {m}, best of {k}, "
        f"{args.clock} clock, load average {load_average()}"
    )
    print(environment())
    warm_up(d)

    rks64 = RandomFourierFeatures(D, sigma=sigma, random_state=0).fit(X64)
    rks32 = RandomFourierFeatures(D, sigma=sigma, random_state=0).fit(X32)
    cossin = RandomFourierFeatures(D // 2, sigma=sigma, variant="cossin", random_state=0).fit(X64)
    rbf = RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X64)
    orf = OrthogonalRandomFeatures(D, sigma=sigma, random_state=0).fit(X64)
    sorf = StructuredOrthogonalRandomFeatures(D, sigma=sigma, random_state=0).fit(X64)
    landmarks = min(m, n)
    nys = Nystroem(landmarks, sigma=sigma, random_state=0).fit(X64)
    sk_nys = SkNystroem(gamma=gamma, n_components=landmarks, random_state=0).fit(X64)

    def gemm_cos64():
        Z = X64 @ W64
        return np.cos(Z, out=Z)

    rows = [
        ("gemm64", "(a) bare GEMM X @ W, float64", lambda: X64 @ W64),
        ("gemm32", "(b) bare GEMM X @ W, float32", lambda: X32 @ W32),
        ("gemm_cos64", "    GEMM + in-place np.cos, float64", gemm_cos64),
        ("rbf", "(c) sklearn RBFSampler.transform", lambda: rbf.transform(X64)),
        ("rks64", "(d) ours RFF cos, float64", lambda: rks64.transform(X64)),
        ("rks32", "(d) ours RFF cos, float32", lambda: rks32.transform(X32)),
        ("cossin64", f"(e) ours RFF cossin, {D // 2} freq, float64", lambda: cossin.transform(X64)),
        ("orf", "(g) ours ORF cos, float64", lambda: orf.transform(X64)),
        ("sorf", "(g) ours SORF cos, float64 (3 HD blocks)", lambda: sorf.transform(X64)),
        ("nys", f"(f) ours Nystroem, {landmarks} comp, float64", lambda: nys.transform(X64)),
        ("sk_nys", f"(f) sklearn Nystroem, {landmarks} comp", lambda: sk_nys.transform(X64)),
    ]
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    timings = interleaved({key: func for key, _, func in rows}, k, clock=clock, shuffle=True)
    times = {key: t.best for key, t in timings.items()}
    print(f"\n{'operation':<44} {'time [s]':>9} {'/ GEMM64':>9} {'/ RBFSampler':>13} {'kernel [s]':>11}")
    for key, label, _ in rows:
        t = times[key]
        print(f"{label:<44} {t:9.3f} {t / times['gemm64']:9.2f} {t / times['rbf']:13.2f} {timings[key].best_kernel:11.3f}")
    print("kernel: the best call's system CPU time, mostly the page faults of its output; where it is a "
          "large share of the time, the host's memory management stalled the call")

    r64 = times["rks64"] / times["gemm64"]
    print(
        f"\nours / bare GEMM float64:  cos float64 {r64:.2f}x (target <= {TARGET_RKS_OVER_GEMM}x: "
        f"{'met' if r64 <= TARGET_RKS_OVER_GEMM else 'NOT met'}), "
        f"cos float32 {times['rks32'] / times['gemm64']:.2f}x, "
        f"cossin {times['cossin64'] / times['gemm64']:.2f}x"
    )
    print(
        f"ours / RBFSampler:         cos float64 {times['rks64'] / times['rbf']:.2f}x, "
        f"cos float32 {times['rks32'] / times['rbf']:.2f}x, "
        f"cossin {times['cossin64'] / times['rbf']:.2f}x"
    )
    print(
        f"float32 / float64 (ours):  {times['rks32'] / times['rks64']:.2f}x "
        f"(target < 1: {'met' if times['rks32'] < times['rks64'] else 'NOT met'})"
    )
    r32 = times["rks32"] / times["gemm32"]
    rcs = times["cossin64"] / times["gemm64"]
    print(
        f"ours / bare GEMM same dtype: cos float32 / GEMM32 {r32:.2f}x, "
        f"cossin / GEMM64 {rcs:.2f}x (target <= {TARGET_AT_BLAS_LIMIT}x: "
        f"{'met' if max(r32, rcs) <= TARGET_AT_BLAS_LIMIT else 'NOT met'})"
    )
    print(f"Nystroem ours / sklearn:   {times['nys'] / times['sk_nys']:.2f}x")
    print(f"ORF / RKS (cos, float64):  {times['orf'] / times['rks64']:.2f}x, "
          f"SORF / RKS: {times['sorf'] / times['rks64']:.2f}x "
          f"(target < 1: {'met' if times['sorf'] < times['rks64'] else 'NOT met'})")


if __name__ == "__main__":
    main()
