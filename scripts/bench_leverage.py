"""Benchmark of the leverage-weighted RFF's candidate scores (Sun et al. 2018 "opt").

A fit of ``LeverageRFF(sampler="opt")`` draws M = 100 N candidate frequencies and
scores each by the ridge leverage of its cos and sin rows of Phi (2M x L, L
training rows). This times the scores two ways on the same candidates:

- ``blocked``: :func:`rfrepro.features.leverage.candidate_leverage_scores`, what
  the map runs: the L x L Gram added up over blocks of candidates, then each
  block scored against its eigenvectors; Phi is never held whole;
- ``one-shot`` (the baseline, the map's former form): Phi built whole and scored by
  :func:`rfrepro.features.leverage.ridge_leverage_scores` (a GEMM for the Gram, an
  ``eigh``, a GEMM of Phi with the eigenvectors).

It prints the least time of ``--repeats`` of each (interleaved, one process, one
thread), their ratio, the largest relative difference of the scores, and the
peak memory of each traced by tracemalloc. The default sizes are the
leaderboard's: L = 500 rows (its ``max_subsample``), N = D / 2 for D = 1024 and
4096, d = 8 (cadata) and 57 (spambase).

Usage: ``python scripts/bench_leverage.py [--quick] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import math

import numba
import numpy as np
from _timing import interleaved, peak_bytes
from threadpoolctl import threadpool_limits

from rfrepro.features._trig import cos_sin_into
from rfrepro.features.leverage import candidate_leverage_scores, ridge_leverage_scores
from rfrepro.features.sampling import sample_frequencies

MU = 1e-3
OVERSAMPLING = 100


def one_shot(X_sub: np.ndarray, candidates: np.ndarray, mu: float) -> np.ndarray:
    """The baseline: Phi whole, then :func:`ridge_leverage_scores`."""
    n_sub, n_cand = X_sub.shape[0], candidates.shape[1]
    Phi_t = np.empty((n_sub, 2 * n_cand))
    cos_sin_into(X_sub @ candidates, Phi_t, 1.0 / math.sqrt(n_sub * n_cand))
    row_scores = ridge_leverage_scores(Phi_t.T, mu)
    return row_scores[:n_cand] + row_scores[n_cand:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 8, D = 256 and 1024 only, 1 repeat")
    parser.add_argument("--repeats", type=int, default=None, help="timings of each form (default 3)")
    parser.add_argument("--rows", type=int, default=500, help="L, the rows the scores use")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    budgets = (256, 1024) if args.quick else (1024, 4096)
    dims = (8,) if args.quick else (8, 57)
    repeats = args.repeats or (1 if args.quick else 3)
    rng = np.random.RandomState(args.seed)
    print(f"leverage scores: L = {args.rows} rows, M = {OVERSAMPLING} N candidates, mu = {MU}, "
          f"one thread, least of {repeats}")
    print(f"{'d':>3} {'D':>5} {'M':>7} {'one-shot s':>10} {'blocked s':>9} {'ratio':>6} {'max rel diff':>12} "
          f"{'one-shot MB':>11} {'blocked MB':>10}")
    numba.set_num_threads(1)
    with threadpool_limits(1):
        for d in dims:
            X = rng.standard_normal((args.rows, d))
            candidate_leverage_scores(X, sample_frequencies("gaussian", d, 64, math.sqrt(d), rng), MU)  # compile
            for D in budgets:
                candidates = sample_frequencies("gaussian", d, OVERSAMPLING * (D // 2), math.sqrt(d), rng)
                forms = {
                    "one-shot": lambda X=X, c=candidates: one_shot(X, c, MU),
                    "blocked": lambda X=X, c=candidates: candidate_leverage_scores(X, c, MU),
                }
                t = interleaved(forms, repeats, keep=True)
                t_one, t_blk = t["one-shot"].best, t["blocked"].best
                ref, new = t["one-shot"].out, t["blocked"].out
                rel = float(np.max(np.abs(new - ref) / ref))
                peak_one, peak_blk = (peak_bytes(form) for form in forms.values())
                print(f"{d:>3} {D:>5} {candidates.shape[1]:>7} {t_one:>10.2f} {t_blk:>9.2f} "
                      f"{t_blk / t_one:>6.2f} {rel:>12.1e} {peak_one / 2**20:>11.0f} "
                      f"{peak_blk / 2**20:>10.0f}", flush=True)


if __name__ == "__main__":
    main()
