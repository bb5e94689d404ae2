"""Time the pieces of Wu et al. (2016): RB hashing, CG per iteration, parallel RCD speedup, exact-kernel refusal.

Printed as ``name: value`` lines (medians of ``--repeats`` runs in one process,
so the ratios are comparable on a noisy machine):

  RB/CSR                      RandomBinning.fit_transform time over building the same CSR
                              matrix from precomputed (row, column) arrays with
                              coo_matrix((data, (row, col))).tocsr() (n = 100000, d = 22, R = 128)
  CG per iteration vs nnz     log-log slope of CG seconds per iteration against nnz(Z) over
                              R = 32 .. 512 (cadata at sigma = 0.56 when the data is at hand,
                              else data of cadata's shape)
  RCD speedup 2 threads       1-thread over 2-thread wall time of parallel RCD to the same
                              stopping rule (objectives within 1e-4 relative) on ijcnn1-sized
                              data (n = 35000, d = 22, R = 128) at a sigma where D >= 5e5; RF beside it,
                              and the 2-thread speedup of an embarrassingly parallel
                              kernel as a control of what the machine allows
  exact kernel refusal        the message ExactKernelRidge raises beyond max_memory_gb

    python scripts/bench_wu.py            # the sizes above
    python scripts/bench_wu.py --quick    # small sizes, a few seconds
    python scripts/bench_wu.py --only rb  # RB/CSR alone (cg, rcd: the others)
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable

import numba
import numpy as np
import scipy.sparse as sp

from rfrepro.features import RandomBinning, RandomFourierFeatures
from rfrepro.models import CGRidge, ExactKernelRidge, ParallelRCD
from rfrepro.runner.env import summary_line


def median_time(func: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median wall-clock time of ``repeats`` calls and the last result."""
    times, out = [], None
    for _ in range(repeats):
        del out
        gc.collect()
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def rb_over_csr(n: int, repeats: int) -> None:
    X = np.random.RandomState(0).uniform(-1, 1, size=(n, 22))
    rb = RandomBinning(n_components=128, sigma=1.12, random_state=0)
    rb.fit_transform(X[:500])  # compile
    Z = rb.fit_transform(X)
    row = np.repeat(np.arange(n), 128)
    col, data = Z.indices.copy(), Z.data.copy()
    del Z
    # the two timed alternately, so both medians see the same background load
    t_rb, t_csr = [], []
    for _ in range(repeats):
        t_rb.append(median_time(lambda: rb.fit_transform(X), 1)[0])
        t_csr.append(median_time(lambda: sp.coo_matrix((data, (row, col)), shape=(n, rb.n_features_out_)).tocsr(),
                                 1)[0])
    t_rb, t_csr = float(np.median(t_rb)), float(np.median(t_csr))
    print(f"RB fit_transform (n = {n}, d = 22, R = 128, D = {rb.n_features_out_}): {t_rb:.3f} s")
    print(f"coo -> csr of the same (row, col): {t_csr:.3f} s")
    print(f"RB/CSR: {t_rb / t_csr:.2f}  (goal <= 3; load average {os.getloadavg()[0]:.1f})")


def _cadata(quick: bool):
    mirror = os.environ.get("RFREPRO_MIRROR")
    if mirror:
        try:
            import yaml

            from rfrepro.data import load_dataset

            with open("conf/dataset/cadata.yaml") as fh:
                cfg = yaml.safe_load(fh)
            cfg["preprocess"] = "minmax"
            ds = load_dataset(cfg, seed=0, data_dir=os.environ.get("RFREPRO_DATA", "data"), mirror=mirror)
            return ds.X_train, ds.y_train, "cadata (minmax to [-1, 1])"
        except Exception as exc:  # noqa: BLE001 - fall back to synthetic data of the same shape
            print(f"(cadata not loaded: {type(exc).__name__}: {exc})")
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(16512, 8))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2], "synthetic 16512 x 8 in [-1, 1]"


def cg_slope(quick: bool, repeats: int) -> None:
    X, y, what = _cadata(quick)
    if quick:
        X, y = X[:4000], y[:4000]
    iters = 30
    nnz, per_iter = [], []
    for R in (32, 64, 128, 256, 512):
        Z = RandomBinning(n_components=R, sigma=0.56, random_state=0).fit_transform(X)
        model = CGRidge(lam=0.01, tol=1e-15, maxiter=iters)
        t, m = median_time(lambda model=model, Z=Z: model.fit(Z, y), repeats)
        nnz.append(Z.nnz)
        per_iter.append(t / m.n_iter_)
        print(f"  R = {R:4d}: D = {Z.shape[1]:8d}, nnz = {Z.nnz:8d}, {m.n_iter_} CG iterations, "
              f"{1e3 * per_iter[-1]:.3f} ms per iteration")
    slope = float(np.polyfit(np.log(nnz), np.log(per_iter), 1)[0])
    print(f"CG per iteration vs nnz ({what}, sigma = 0.56): {slope:.2f}  (goal <= 1.1)")


def _rcd_pair(Z, y, repeats: int, lam: float, tol: float) -> tuple[float, float, float, float]:
    """(median 1-thread time, median 2-thread time, objectives' relative gap, epochs of the 1-thread run)."""
    def fit(threads):
        return ParallelRCD(lam=lam, task="binary", n_threads=threads, tol=tol, max_epochs=500,
                           random_state=0).fit(Z, y)

    fit(1)  # compile
    t1, m1 = median_time(lambda: fit(1), repeats)
    t2, m2 = median_time(lambda: fit(2), repeats)
    return t1, t2, abs(m1.objective_ - m2.objective_) / m1.objective_, m1.n_iter_


def rcd_speedup(n: int, repeats: int) -> None:
    if numba.config.NUMBA_NUM_THREADS < 2:
        print("RCD speedup 2 threads: not measured (numba has 1 thread on this machine)")
        return
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(n, 22))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.randn(n) > 0, 1, -1)
    rb = RandomBinning(n_components=128, sigma=3.0, random_state=0)
    Z = rb.fit_transform(X)
    # tol is the solver's relative stopping bound; 1e-5 leaves both runs within
    # 1e-4 of each other (the same objective to 1e-4 relative), which the gap line checks
    lam, tol = 1e-5, 1e-5
    t1, t2, gap, ep = _rcd_pair(Z, y, repeats, lam, tol)
    print(f"RB: n = {n}, D = {Z.shape[1]} (sigma = 3.0), 1 thread {t1:.2f} s ({ep} epochs), 2 threads {t2:.2f} s, "
          f"objective gap {gap:.1e} ({'within' if gap <= 1e-4 else 'NOT within'} 1e-4)")
    print(f"RCD speedup 2 threads: {t1 / t2:.2f}  (goal >= 1.6; Lasso, lambda = {lam:g}, tol = {tol:g})")
    F = RandomFourierFeatures(n_components=128, kernel="laplacian", sigma=3.0, variant="cos",
                              random_state=0).fit_transform(X)
    t1, t2, gap, ep = _rcd_pair(F, y, repeats, lam, tol)
    print(f"RF: 1 thread {t1:.2f} s ({ep} epochs), 2 threads {t2:.2f} s, objective gap {gap:.1e} "
          f"({'within' if gap <= 1e-4 else 'NOT within'} 1e-4)")
    print(f"RCD speedup 2 threads (RF, dense, D = 128): {t1 / t2:.2f}")


@numba.njit(parallel=True, cache=True)
def _independent_work(parts: int, n: int) -> float:
    out = np.zeros(parts)
    for t in numba.prange(parts):
        s = 0.0
        for i in range(n // parts):
            s += np.sin(i * 1e-3)
        out[t] = s
    return out.sum()


def parallel_control(repeats: int) -> None:
    """The speedup of an embarrassingly parallel kernel: what the machine allows right now."""
    times = {}
    for threads in (1, 2):
        numba.set_num_threads(threads)
        _independent_work(threads, 1000)
        times[threads] = median_time(lambda threads=threads: _independent_work(threads, 20_000_000), repeats)[0]
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    print(f"control: 2-thread speedup of an embarrassingly parallel kernel: {times[1] / times[2]:.2f} "
          f"(the most any 2-thread speedup can show on this machine now; load average "
          f"{os.getloadavg()[0]:.1f})")


def exact_refusal() -> None:
    X = np.zeros((60000, 2))
    try:
        ExactKernelRidge(max_memory_gb=4.0).fit(X, np.zeros(60000))
        print("exact kernel refusal: NOT refused")
    except MemoryError as exc:
        print(f"exact kernel refusal: {exc}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--only", choices=["rb", "cg", "rcd"], default=None,
                    help="run only this figure (rb: RB/CSR, cg: CG slope, rcd: RCD speedup with its control)")
    args = ap.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    print(summary_line())
    print(f"numba threads: {numba.config.NUMBA_NUM_THREADS}, cores: {os.cpu_count()}")
    if args.only in (None, "rb"):
        rb_over_csr(20000 if args.quick else 100000, repeats)
    if args.only in (None, "cg"):
        cg_slope(args.quick, repeats)
    if args.only in (None, "rcd"):
        if numba.config.NUMBA_NUM_THREADS >= 2:
            parallel_control(repeats)
        rcd_speedup(8000 if args.quick else 35000, repeats)
    if args.only is None:
        exact_refusal()


if __name__ == "__main__":
    main()
