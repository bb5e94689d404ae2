"""What OpenBLAS's idle spinning costs a run: one workload, timed with the spin and without it.

numpy and scipy each load their own OpenBLAS. After every call an OpenBLAS
keeps its idle threads spinning, runnable, for ``2^OPENBLAS_THREAD_TIMEOUT``
cycles (28 by default: about 0.1 s) before they sleep; rfrepro sets 4, so they
sleep at once (:data:`rfrepro.BLAS_IDLE_ENV`). The workload is a leaderboard
run's mix, repeated: a numpy Gram ``Z.T @ Z`` of random features, scipy's
Cholesky solve of it, the transform's ``cos`` and a little Python between.
Each setting runs in a fresh process (OpenBLAS reads the variable once, when
it loads), alternating A, B, A, B ...; a thread of this process samples how
many of the child's threads are runnable (Linux ``/proc``).

Printed per setting: the median wall time over ``--rounds`` processes, the
time of the Gram products inside it, the mean runnable threads of the child,
and the ratio spin / idle (above 1: the spin costs time). The control is the
same Gram products alone, numpy's OpenBLAS only, back to back: there no idle
thread waits while others work, and the spin should cost nothing.

    python scripts/bench_blas_idle.py            # n = 4096, D = 512, 40 iterations, 5 rounds
    python scripts/bench_blas_idle.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

CHILD = r"""
import json, sys, time
import numpy as np, scipy.linalg
n, D, iters, mixed = (int(a) for a in sys.argv[1:5])
rng = np.random.default_rng(0)
X = rng.standard_normal((n, 64)); W = rng.standard_normal((64, D)); y = rng.standard_normal(n)
t0 = time.perf_counter(); g = 0.0
Z = np.cos(X @ W)
for _ in range(iters):
    if mixed:
        Z = np.cos(X @ W)                              # the transform (numpy's OpenBLAS, then numpy)
    t1 = time.perf_counter(); G = Z.T @ Z; g += time.perf_counter() - t1   # the Gram
    if not mixed:
        continue
    G[np.diag_indices(D)] += 1e-3 * n
    c = scipy.linalg.cho_factor(G)                     # scipy's OpenBLAS
    w = scipy.linalg.cho_solve(c, Z.T @ y)
    s = sum(i * i for i in range(20000))               # Python between calls, as a run's bookkeeping
print(json.dumps({"wall": time.perf_counter() - t0, "gemm": g}))
"""


def runnable(pid: int, stop: threading.Event, out: list) -> None:
    """Sample the runnable threads of process ``pid`` every 10 ms until ``stop``."""
    while not stop.is_set():
        n = 0
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    s = f.read()
                n += s[s.rfind(")") + 2] == "R"
        except (FileNotFoundError, ProcessLookupError):
            break
        out.append(n)
        time.sleep(0.01)


def one(timeout: str, n: int, D: int, iters: int, mixed: bool) -> dict:
    """One child process with ``OPENBLAS_THREAD_TIMEOUT=timeout``: its times and mean runnable threads."""
    env = {**os.environ, "OPENBLAS_THREAD_TIMEOUT": timeout}
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(n), str(D), str(iters), str(int(mixed))], env=env,
                         stdout=subprocess.PIPE, text=True)
    samples: list[int] = []
    stop = threading.Event()
    t = threading.Thread(target=runnable, args=(p.pid, stop, samples))
    t.start()
    stdout, _ = p.communicate()
    stop.set()
    t.join()
    if p.returncode:
        raise SystemExit(f"error: the workload exited {p.returncode}")
    res = json.loads(stdout)
    res["runnable"] = float(np.mean(samples)) if samples else float("nan")
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--rounds", type=int, default=None, help="processes per setting (default 5; 2 with --quick)")
    args = ap.parse_args(argv)
    n, D, iters = (2048, 256, 10) if args.quick else (4096, 512, 40)
    rounds = args.rounds or (2 if args.quick else 5)
    if rounds < 1:
        ap.error("--rounds must be at least 1")
    settings = {"spin (OpenBLAS default, 28)": "28", "idle (rfrepro, 4)": "4"}
    print(f"n = {n}, D = {D}, {iters} iterations, {rounds} rounds; cores {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.2f}")
    for workload, mixed in (("a run's mix (numpy, scipy, Python)", True), ("control: numpy's Gram alone", False)):
        got: dict[str, list[dict]] = {k: [] for k in settings}
        for _ in range(rounds):
            for name, value in settings.items():
                got[name].append(one(value, n, D, iters, mixed))
        med = {name: {k: float(np.median([r[k] for r in rows])) for k in ("wall", "gemm", "runnable")}
               for name, rows in got.items()}
        print(workload)
        for name, m in med.items():
            print(f"  {name:28s} wall {m['wall']:7.3f} s   Gram {m['gemm']:7.3f} s   "
                  f"runnable threads {m['runnable']:.2f}")
        a, b = med.values()
        print(f"  spin / idle: wall {a['wall'] / b['wall']:.2f}, Gram {a['gemm'] / b['gemm']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
