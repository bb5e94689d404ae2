"""Time the maps of Hamid et al. (2014, CRAFTMaps): Tensor Sketch, the SRHT down-projection, Random Maclaurin.

Everything runs in one process on one machine, best of ``--repeats`` runs, so
the ratios are comparable even on a noisy machine. Each figure is printed as
``name: ratio``:

  TensorSketch/PolynomialCountSketch   our TensorSketch.transform over
      scikit-learn's PolynomialCountSketch.transform (n = 5000, d = 784,
      D = 4096, degree 7, float64; goal <= 0.5), with float32 and the peak
      memory (tracemalloc) of both;
  SRHT/Gaussian down-projection        SRHT of n rows of length D = 8192 to
      E = 1024 over the dense GEMM with a (D, E) Gaussian matrix (goal <= 0.25),
      and the log-log slope of the SRHT time over D = 2^11..2^14 (goal ~ 1);
  RM/GEMM                              RandomMaclaurin.transform over one bare
      GEMM of the same (n, d, D) (dense draws, degree 7, no H0/1; also H0/1 and
      Hadamard draws).

    python scripts/bench_hamid.py            # the sizes above
    python scripts/bench_hamid.py --quick    # small sizes, a few seconds
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import fastest, gemm_control, loglog_slope, peak_bytes
from sklearn.kernel_approximation import PolynomialCountSketch

from rfrepro.features import RandomMaclaurin, TensorSketch
from rfrepro.features.hadamard import SRHT
from rfrepro.runner.env import summary_line


def sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def bench_tensor_sketch(n: int, d: int, D: int, degree: int, repeats: int) -> None:
    print(f"\n(a) TensorSketch vs scikit-learn PolynomialCountSketch: n = {n}, d = {d}, D = {D}, degree {degree}")
    X = sphere(n, d)
    ts = TensorSketch(D, degree=degree, offset=1.0, random_state=0).fit(X[:10])
    sk = PolynomialCountSketch(degree=degree, gamma=1.0, coef0=1.0, n_components=D, random_state=0).fit(X[:10])
    # the same hashes: both compute the same features, so only the speed differs
    ts.index_hash_, ts.bit_hash_ = sk.indexHash_, sk.bitHash_.astype(float)
    ts._fit_sketch()
    assert np.allclose(ts.transform(X[:50]), sk.transform(X[:50]), atol=1e-8)
    t_sk = fastest(lambda: sk.transform(X), repeats).best
    t_ts = fastest(lambda: ts.transform(X), repeats).best
    X32 = X.astype(np.float32)
    t_ts32 = fastest(lambda: ts.transform(X32), repeats).best
    m_sk = peak_bytes(lambda: sk.transform(X))
    m_ts = peak_bytes(lambda: ts.transform(X))
    m_ts32 = peak_bytes(lambda: ts.transform(X32))
    out_mb = n * D * 8 / 2**20
    print(f"  PolynomialCountSketch float64 {t_sk:8.3f} s   peak {m_sk / 2**20:8.1f} MiB")
    print(f"  TensorSketch float64          {t_ts:8.3f} s   peak {m_ts / 2**20:8.1f} MiB "
          f"(output alone {out_mb:.1f} MiB)")
    print(f"  TensorSketch float32          {t_ts32:8.3f} s   peak {m_ts32 / 2**20:8.1f} MiB")
    print(f"TensorSketch/PolynomialCountSketch: {t_ts / t_sk:.3f}")
    print(f"TensorSketch float32/PolynomialCountSketch: {t_ts32 / t_sk:.3f}")
    print(f"TensorSketch/PolynomialCountSketch peak memory: {m_ts / m_sk:.3f}")


def bench_down_projection(n: int, D: int, E: int, Ds: list[int], repeats: int) -> None:
    print(f"\n(b) SRHT vs Gaussian down-projection: n = {n} rows of length D = {D} to E = {E}")
    rng = np.random.RandomState(1)
    F = rng.standard_normal((n, D))
    P = rng.standard_normal((D, E)) / np.sqrt(E)
    srht = SRHT(D, E, random_state=0)
    srht.apply(F[:8])  # compile / load the kernels outside the timing
    srht.apply(F[:4096])
    t_gauss = gemm_control(F, P, repeats).best
    t_srht = fastest(lambda: srht.apply(F), repeats).best
    print(f"  Gaussian (GEMM)  {t_gauss:8.3f} s")
    print(f"  SRHT             {t_srht:8.3f} s")
    print(f"SRHT/Gaussian down-projection: {t_srht / t_gauss:.3f}")
    times = []
    for Dk in Ds:
        Fk = rng.standard_normal((n, Dk))
        sk = SRHT(Dk, E, random_state=0)
        times.append(fastest(lambda sk=sk, Fk=Fk: sk.apply(Fk), repeats).best)
        print(f"  SRHT D = {Dk:6d}  {times[-1]:8.4f} s")
    print(f"SRHT time slope over D (log-log, D = {Ds[0]}..{Ds[-1]}): {loglog_slope(Ds, times):.3f}")


def bench_maclaurin(n: int, d: int, D: int, degree: int, repeats: int) -> None:
    print(f"\n(c) RandomMaclaurin vs a bare GEMM: n = {n}, d = {d}, D = {D}, degree {degree}")
    X = sphere(n, d)
    W = np.random.RandomState(2).choice([-1.0, 1.0], size=(d, D))
    t_gemm = gemm_control(X, W, repeats).best
    print(f"  bare GEMM (n, d) x (d, D)   {t_gemm:8.3f} s")
    variants = {
        "RM/GEMM": dict(),
        "RM H0/1/GEMM": dict(h01=True),
        "RM Hadamard draws/GEMM": dict(draws="hadamard"),
    }
    for name, kw in variants.items():
        rm = RandomMaclaurin(D, degree=degree, offset=1.0, random_state=0, **kw).fit(X[:10])
        rm.transform(X[:10])  # cast the draws / compile once
        t = fastest(lambda rm=rm: rm.transform(X), repeats).best
        factors = int(sum(len(rm.degrees_) - s for s in rm.starts_[:-1]))
        print(f"  {name:24s} {t:8.3f} s   ({factors} Rademacher vectors for {D} features)")
        print(f"{name}: {t / t_gemm:.3f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--repeats", type=int, default=None, help="best of this many runs")
    args = parser.parse_args(argv)
    repeats = args.repeats or (2 if args.quick else 3)
    print(summary_line())
    if args.quick:
        bench_tensor_sketch(500, 784, 1024, 7, repeats)
        bench_down_projection(500, 8192, 1024, [2048, 4096, 8192, 16384], repeats)
        bench_maclaurin(1000, 784, 1024, 7, repeats)
    else:
        bench_tensor_sketch(5000, 784, 4096, 7, repeats)
        bench_down_projection(5000, 8192, 1024, [2048, 4096, 8192, 16384], repeats)
        bench_maclaurin(5000, 784, 4096, 7, repeats)


if __name__ == "__main__":
    main()
