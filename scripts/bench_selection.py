"""Benchmark of RFF selection (Schleif, Kaban and Tino 2016): cost against n.

Claim C2.3: at fixed landmarks m and D_max, selection costs time linear in n,
and (our requirement) memory O(n (m + D_max)), never n x n. For each n this
times two fits on the same data:

- ``rule``: the paper's stopping rule (eps = 1e-3, iter_max = 5). The number
  of tried chunks varies with the data and the draw, so the time per try is
  the comparable number;
- ``full``: eps = -inf keeps every chunk, so exactly D_max / chunk_size tries
  are made: the worst case, the same work at every n.

It reports the least time over ``--repeats`` fits (the machines are shared and
noisy), the fitted log-log slope of time against n (1 = linear), and the peak
memory of one ``full`` fit traced by tracemalloc, beside the sizes of an
n x (m + D_max) and an n x n float64 array.

Usage: ``python scripts/bench_selection.py [--quick] [--data checker|gauss50]``.
"""

from __future__ import annotations

import argparse
import os

import numba
import numpy as np
from _timing import fastest, loglog_slope, peak_bytes
from threadpoolctl import threadpool_limits

from rfrepro.data.synthetic import checkerboard
from rfrepro.features.rff_selection import RFFSelection
from rfrepro.kernels import resolve_bandwidth

FULL_SIZES = (1_000, 3_000, 10_000, 30_000, 100_000)
QUICK_SIZES = (1_000, 3_000, 10_000)

#: sigma 0.15 on the unit square resolves the 3 x 3 board's cells (1/3 wide);
#: the z-score divides coordinates by 1 / sqrt(12), so 0.15 * sqrt(12) = 0.52
CHECKER_SIGMA = 0.15 * np.sqrt(12.0)


def make_data(kind: str, n: int, seed: int) -> tuple[np.ndarray, float]:
    """Z-scored data and the bandwidth to use on it."""
    if kind == "checker":
        X, _ = checkerboard(n, size=3, random_state=seed)
    else:
        X = np.random.RandomState(seed).standard_normal((n, 50))
    X = np.ascontiguousarray((X - X.mean(0)) / X.std(0))
    if kind == "checker":
        return X, CHECKER_SIGMA
    # the median rule, resolved here so its fixed cost (2000 rows) stays out of the timings
    return X, resolve_bandwidth(X, "median", random_state=seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 1e4, D_max 200, 1 repeat")
    parser.add_argument("--data", choices=("checker", "gauss50"), default="checker")
    parser.add_argument("--max-components", type=int, default=None, help="D_max (default 1000)")
    parser.add_argument("--chunk-size", type=int, default=10)
    parser.add_argument("--landmarks", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=None, help="fits per timing (default 3)")
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS and numba threads (1: clean scaling)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sizes = np.array(QUICK_SIZES if args.quick else FULL_SIZES)
    d_max = args.max_components or (200 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    m, chunk = args.landmarks, args.chunk_size
    common = dict(max_components=d_max, chunk_size=chunk, n_landmarks=m, random_state=args.seed)

    print(
        f"RFF selection, data={args.data}, m={m}, D_max={d_max}, chunk={chunk}, "
        f"repeats={repeats}, threads={args.threads}, cpus={os.cpu_count()}, "
        f"numpy {np.__version__}"
    )
    header = (
        f"{'n':>7} {'rule s':>8} {'D*':>5} {'tries':>5} {'ms/try':>7} {'full s':>8} "
        f"{'ms/try':>7} {'peak MB':>8} {'n(m+Dmax) MB':>12} {'n^2 MB':>9}"
    )
    print(header)
    rows = []
    # the fused cosine runs on numba's threads, the GEMMs on the BLAS's: limit both
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    with threadpool_limits(args.threads):
        # compile the fused cosine and warm the BLAS before timing
        X0, sigma0 = make_data(args.data, 500, args.seed)
        RFFSelection(**{**common, "max_components": 2 * chunk}, sigma=sigma0).fit(X0)
        for n in sizes:
            X, sigma = make_data(args.data, int(n), args.seed)
            rule = RFFSelection(**common, sigma=sigma)
            t_rule = fastest(lambda X=X, rule=rule: rule.fit(X), repeats).best
            full = RFFSelection(**common, sigma=sigma, eps=-np.inf)
            t_full = fastest(lambda X=X, full=full: full.fit(X), repeats).best
            peak = peak_bytes(lambda X=X, full=full: full.fit(X))
            tries_rule, tries_full = len(rule.error_trace_), len(full.error_trace_)
            rows.append((n, t_rule, t_rule / tries_rule, t_full, t_full / tries_full, peak))
            print(
                f"{n:>7d} {t_rule:>8.3f} {rule.n_selected_:>5d} {tries_rule:>5d} "
                f"{1e3 * t_rule / tries_rule:>7.2f} {t_full:>8.3f} {1e3 * t_full / tries_full:>7.2f} "
                f"{peak / 2**20:>8.1f} {n * (m + d_max) * 8 / 2**20:>12.1f} "
                f"{n * n * 8 / 2**20:>9.0f}",
                flush=True,
            )
    n_arr = np.array([r[0] for r in rows], dtype=float)
    cols = np.array([r[1:] for r in rows])
    print(
        "log-log slope of time against n (1 = linear): "
        f"rule total {loglog_slope(n_arr, cols[:, 0]):.2f}, rule per try {loglog_slope(n_arr, cols[:, 1]):.2f}, "
        f"full (fixed {d_max // chunk} tries) {loglog_slope(n_arr, cols[:, 2]):.2f}; "
        f"peak memory {loglog_slope(n_arr, cols[:, 4]):.2f}"
    )


if __name__ == "__main__":
    main()
