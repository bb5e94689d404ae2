"""Time the structured maps of Chen et al. (2015): Fastfood, TEFM-S against TEFM-G, the FWHT.

Everything is measured in one process on one machine, best of ``--repeats``
runs, so the ratios are comparable even on a noisy machine:

  (a) Fastfood.transform against dense RKS (RandomFourierFeatures.transform)
      and against a bare float64 GEMM X @ W of the same shape
      (n = 20000, d = 1024, D = 4096): Fastfood must be faster than dense RKS,
      which is its whole point;
  (b) TEFM-S against TEFM-G fit time at the same (d, l) (n = 8000, l = 500,
      d = 2000 RKS features), whole fit and the sketch Y alone, on all cores
      and on one thread (the paper times single-threaded Matlab);
  (c) the compiled FWHT at d = 1024 against a numpy butterfly
      (log2(d) vectorised passes over the whole matrix).

    python scripts/bench_chen.py            # the sizes above
    python scripts/bench_chen.py --quick    # small sizes, a few seconds
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.linalg
from _timing import fastest, gemm_control
from threadpoolctl import threadpool_limits

from rfrepro.features.fastfood import Fastfood
from rfrepro.features.hadamard import fwht, fwht_inplace
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.features.tefm import TEFMG, TEFMS
from rfrepro.runner.env import summary_line


def environment() -> str:
    return summary_line()


def numpy_fwht(X: np.ndarray) -> np.ndarray:
    """The reference butterfly in numpy: one vectorised pass over the matrix per stage."""
    n, d = X.shape
    Y = X
    h = 1
    while h < d:
        Y = Y.reshape(n, d // (2 * h), 2, h)
        a, b = Y[:, :, 0, :], Y[:, :, 1, :]
        Y = np.stack((a + b, a - b), axis=2)
        h *= 2
    return Y.reshape(n, d)


def warm_up(d: int) -> None:
    """Compile (or load from cache) the numba kernels, serial and parallel, both dtypes."""
    rng = np.random.RandomState(0)
    for dtype in (np.float64, np.float32):
        for n in (4, 4096):  # below and above the serial/parallel switch
            X = rng.standard_normal((n, d)).astype(dtype)
            Fastfood(64, random_state=0).fit_transform(X)
            fwht_inplace(X[:, : 1 << (d.bit_length() - 1)].copy())
            RandomFourierFeatures(64, random_state=0).fit_transform(X)
        TEFMS(8, random_state=0).fit_transform(rng.standard_normal((300, 5)).astype(dtype))


def bench_fastfood(n: int, d: int, D: int, repeats: int) -> None:
    print(f"\n(a) Fastfood vs dense RKS vs bare GEMM: n = {n}, d = {d}, D = {D} (cos variant)")
    rng = np.random.RandomState(0)
    X = rng.standard_normal((n, d))
    sigma = np.sqrt(d)  # the scale of the data: a meaningful kernel, not a timing factor
    ff = Fastfood(D, sigma=sigma, random_state=0).fit(X[:10])
    rks = RandomFourierFeatures(D, sigma=sigma, random_state=0).fit(X[:10])
    W = rks.random_weights_
    t_gemm = gemm_control(X, W, repeats).best
    t_rks = fastest(lambda: rks.transform(X), repeats).best
    t_ff = fastest(lambda: ff.transform(X), repeats).best
    X32 = X.astype(np.float32)
    t_ff32 = fastest(lambda: ff.transform(X32), repeats).best
    t_rks32 = fastest(lambda: rks.transform(X32), repeats).best
    print(f"  bare GEMM float64          {t_gemm:8.3f} s")
    print(f"  RKS transform float64      {t_rks:8.3f} s   ({t_rks / t_gemm:.2f} x GEMM)")
    print(f"  Fastfood transform float64 {t_ff:8.3f} s   ({t_ff / t_gemm:.2f} x GEMM)")
    print(f"  RKS transform float32      {t_rks32:8.3f} s")
    print(f"  Fastfood transform float32 {t_ff32:8.3f} s")
    print(
        f"  RATIO Fastfood / RKS       float64 {t_ff / t_rks:.3f}   float32 {t_ff32 / t_rks32:.3f}"
    )
    print(f"  RATIO Fastfood / GEMM      float64 {t_ff / t_gemm:.3f}")
    print(f"  => Fastfood is {t_rks / t_ff:.1f}x faster than dense RKS (float64)")


def bench_tefm(n: int, m: int, n_up: int, n_out: int, repeats: int, threads: int | None) -> None:
    label = (
        "all cores" if threads is None else f"{threads} thread (the paper's single-thread setting)"
    )
    print(
        f"\n(b) TEFM-S vs TEFM-G: n = {n} rows of {m} inputs, d = {n_up} RKS features, "
        f"l = {n_out}; {label}"
    )
    import numba

    X = np.random.RandomState(1).standard_normal((n, m))
    sigma = np.sqrt(m)
    kw = dict(n_up_components=n_up, sigma=sigma, random_state=0)
    maps = {
        "TEFM-G q=0": TEFMG(n_out, **kw),
        "TEFM-G q=1": TEFMG(n_out, q=1, **kw),
        "TEFM-S": TEFMS(n_out, **kw),
    }
    numba_threads = numba.get_num_threads()
    with threadpool_limits(threads):
        numba.set_num_threads(threads or numba_threads)
        try:
            fit = {
                name: fastest(lambda est=est: est.fit(X), repeats).best for name, est in maps.items()
            }
            rff = maps["TEFM-S"].rff_
            F = rff.transform(X)
            t_rks = fastest(lambda: rff.transform(X), repeats).best
            sketch = {
                name: fastest(
                    lambda est=est: est._sketch(F, n_out, np.random.RandomState(0)), repeats
                ).best
                for name, est in maps.items()
            }
            Y = maps["TEFM-S"]._sketch(F, n_out, np.random.RandomState(0))
            t_qr = fastest(lambda: scipy.linalg.qr(Y, mode="economic"), repeats).best
        finally:
            numba.set_num_threads(numba_threads)
    print(f"  RKS features F alone       {t_rks:8.3f} s   QR of Y (d x l) {t_qr:.3f} s")
    for name in maps:
        print(f"  {name:12s} fit {fit[name]:8.3f} s   sketch Y {sketch[name]:8.3f} s")
    g, s = "TEFM-G q=0", "TEFM-S"
    print(f"  RATIO TEFM-S / TEFM-G (q=0) fit    {fit[s] / fit[g]:.3f}")
    print(f"  RATIO TEFM-S / TEFM-G (q=0) sketch {sketch[s] / sketch[g]:.3f}")


def bench_fwht(n: int, d: int, repeats: int) -> None:
    print(f"\n(c) FWHT of an n x d matrix, n = {n}, d = {d}")
    X = np.random.RandomState(2).standard_normal((n, d))
    small = X[:8, : min(d, 256)]
    assert np.allclose(numpy_fwht(small), small @ scipy.linalg.hadamard(small.shape[1]))
    assert np.allclose(fwht(small), numpy_fwht(small))
    t_np = fastest(lambda: numpy_fwht(X), repeats).best
    work = X.copy()
    t_nb = fastest(lambda: fwht_inplace(work, normalized=True), repeats).best
    work32 = X.astype(np.float32)
    t_nb32 = fastest(lambda: fwht_inplace(work32, normalized=True), repeats).best
    # 32 rows (256 KB) stay in cache and, being few, run on one core: the
    # per-vector cost that Fastfood pays on each core
    block = X[:32].copy()
    reps = 500
    t_cache = fastest(lambda: [fwht_inplace(block, normalized=True) for _ in range(reps)], 5).best
    per_vec = t_cache / (reps * block.shape[0]) * 1e6
    print(f"  numpy butterfly            {t_np:8.3f} s per transform of the matrix")
    print(f"  compiled FWHT float64      {t_nb:8.3f} s   ({t_nb / n * 1e6:.2f} us per row)")
    print(f"  compiled FWHT float32      {t_nb32:8.3f} s   ({t_nb32 / n * 1e6:.2f} us per row)")
    print(f"  compiled FWHT, 1 core, in cache {per_vec:5.2f} us per length-{d} row")
    print(f"  RATIO compiled / numpy     float64 {t_nb / t_np:.4f}   ({t_np / t_nb:.0f}x faster)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--repeats", type=int, default=None, help="best of this many runs")
    args = parser.parse_args(argv)
    repeats = args.repeats or (2 if args.quick else 3)
    print(environment())
    warm_up(1024)
    if args.quick:
        bench_fastfood(2000, 1024, 4096, repeats)
        for threads in (None, 1):
            bench_tefm(2000, 50, 400, 100, repeats, threads)
        bench_fwht(2000, 1024, repeats)
    else:
        bench_fastfood(20000, 1024, 4096, repeats)
        for threads in (None, 1):
            bench_tefm(8000, 100, 2000, 500, repeats, threads)
        bench_fwht(20000, 1024, repeats)


if __name__ == "__main__":
    main()
