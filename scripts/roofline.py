"""Every Gaussian-kernel feature map against this host's roofline.

For each map: fit on ``n`` random rows of dimension ``d`` with ``D`` features,
time ``transform`` of the same rows (best of ``--repeats``, the maps taken
round-robin so a burst of load from other processes slows them alike), and
set it against the time the map's declared cost predicts on this host:
``max(flops / peak GEMM rate at the dtype, bytes / copy bandwidth)``
(``cost(n)`` of each map, :mod:`rfrepro.features._cost`; the peaks of
:mod:`rfrepro.harness.run.roofline`, measured once per host and cached). The
fraction of peak is predicted over measured time: 1 is at the roofline.

    python scripts/roofline.py                 # n = 5000, d = 784, D = 1024: about a minute
    python scripts/roofline.py --full          # n = 20000, d = 784, D = 4096
    python scripts/roofline.py --n 2000 --D 512 --dtype float32 --refresh

On a machine shared with other jobs (load average printed in the header)
measured times, and so the fractions, are lower bounds of what the code does
alone; the host peaks are measured once and cached (``--refresh`` measures
them again).
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable

import numpy as np

from rfrepro.features import (
    TEFMG,
    TEFMS,
    CompRFF,
    Fastfood,
    LeverageRFF,
    Nystroem,
    OrthogonalRandomFeatures,
    QuasiRandomFourierFeatures,
    RandomFourierFeatures,
    RFFSelection,
    StructuredOrthogonalRandomFeatures,
)
from rfrepro.harness.run.roofline import cache_path, host_peaks
from rfrepro.runner.env import summary_line

FULL = {"n": 20000, "d": 784, "D": 4096}
MODERATE = {"n": 5000, "d": 784, "D": 1024}


def gaussian_maps(D: int, sigma: float) -> dict[str, Callable[[], object]]:
    """Every map of the package for the Gaussian kernel, at D output features (D frequencies)."""
    common = {"sigma": sigma, "random_state": 0}
    return {
        "rks_cos": lambda: RandomFourierFeatures(D, variant="cos", **common),
        "rks_cossin": lambda: RandomFourierFeatures(D // 2, variant="cossin", **common),
        "quasi": lambda: QuasiRandomFourierFeatures(D, **common),
        "orf": lambda: OrthogonalRandomFeatures(D, **common),
        "sorf": lambda: StructuredOrthogonalRandomFeatures(D, **common),
        "fastfood": lambda: Fastfood(D, **common),
        "nystroem": lambda: Nystroem(D, **common),
        "comp_gaussian": lambda: CompRFF(D, projection="gaussian", **common),
        "comp_srht": lambda: CompRFF(D, projection="srht", **common),
        "tefm_g": lambda: TEFMG(D, **common),
        "tefm_s": lambda: TEFMS(D, **common),
        # a small candidate pool and subsample: the fit is not what is measured here
        "leverage": lambda: LeverageRFF(D // 2, mu=1e-3, oversampling=2, max_subsample=500, **common),
        "rff_selection": lambda: RFFSelection(max_components=D // 2, chunk_size=max(1, D // 8),
                                              n_landmarks=50, eps=-np.inf, **common),
    }


def best_transform_times(fitted: dict, X: np.ndarray, repeats: int) -> dict[str, float]:
    best = dict.fromkeys(fitted, np.inf)
    for _ in range(repeats):
        for name, fmap in fitted.items():
            gc.collect()
            t0 = time.perf_counter()
            out = fmap.transform(X)
            best[name] = min(best[name], time.perf_counter() - t0)
            del out
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="n = 20000, d = 784, D = 4096")
    ap.add_argument("--n", type=int)
    ap.add_argument("--d", type=int)
    ap.add_argument("--D", type=int)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="map names to run (default: all)")
    ap.add_argument("--refresh", action="store_true", help="measure the host peaks again")
    args = ap.parse_args(argv)
    size = dict(FULL if args.full else MODERATE)
    size.update({k: getattr(args, k) for k in ("n", "d", "D") if getattr(args, k) is not None})
    n, d, D = size["n"], size["d"], size["D"]

    os.environ.setdefault("RFREPRO_ROOFLINE", "on")
    peaks = host_peaks(refresh=args.refresh)
    if peaks is None:
        print("host peaks unavailable (RFREPRO_ROOFLINE is off)")
        return 1
    dtype = np.dtype(args.dtype)
    rate = peaks["gemm_f32" if dtype == np.float32 else "gemm_f64"]
    print(summary_line())
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    print(f"host peaks ({cache_path()}): GEMM float32 {peaks['gemm_f32'] / 1e9:.1f} GFlop/s, "
          f"float64 {peaks['gemm_f64'] / 1e9:.1f} GFlop/s, copy bandwidth {peaks['bandwidth'] / 1e9:.1f} GB/s")
    print(f"n = {n}, d = {d}, D = {D}, {dtype.name}, best of {args.repeats}\n")

    X = np.random.RandomState(0).standard_normal((n, d)).astype(dtype)
    sigma = float(np.sqrt(d))  # the median distance of standard normal rows, about sqrt(2 d) / sqrt(2)
    makers = gaussian_maps(D, sigma)
    fitted = {}
    for name, make in makers.items():
        if args.only and name not in args.only:
            continue
        fitted[name] = make().fit(X)
        fitted[name].transform(X[:64])  # untimed: compiles or loads numba kernels, wakes thread pools
    times = best_transform_times(fitted, X, args.repeats)

    head = f"{'map':<15}{'GFlop':>9}{'MB':>9}{'bound':>9}{'predicted s':>13}{'measured s':>12}{'fraction':>10}"
    print(head)
    print("-" * len(head))
    for name, fmap in fitted.items():
        c = fmap.cost(n, dtype)
        t_flops, t_bytes = c["flops"] / rate, c["bytes"] / peaks["bandwidth"]
        predicted = max(t_flops, t_bytes)
        print(f"{name:<15}{c['flops'] / 1e9:>9.2f}{c['bytes'] / 1e6:>9.1f}"
              f"{'compute' if t_flops >= t_bytes else 'memory':>9}{predicted:>13.4f}{times[name]:>12.4f}"
              f"{predicted / times[name]:>10.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
