"""Harness overhead per run: compose, identity, lock, record, for runs that compute (almost) nothing.

    .venv/bin/python scripts/bench_harness.py [--runs-from sun2018/fig1] [--jobs 1]

Prints, as ``name: value``:

- ``plan ms/run``: composing a run's config and computing its identity (parent side);
- ``worker ms/run``: the rest of a run's wall time that is not its own computation
  (``timings.total_s``): lock, provenance, record writing, dispatch;
- ``unavailable ms/run``: a sweep whose data is unavailable (each source tried once per sweep);
- ``resume ms/run``: a second sweep of the same runs, all finished (skipped).

Goal (issue: trustworthy runs): worker time under 50 ms per run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rfrepro.harness.plan import plan
from rfrepro.harness.pools import run_sweep
from rfrepro.runner.env import summary_line

TRIVIAL = ["dataset.n_train=20", "dataset.n_test=20", "eval.predict=false", "method=rks_cos",
           "method.n_components=1"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs-from", default="sun2018/fig1", help="study whose grid gives the runs")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    print(summary_line())
    with tempfile.TemporaryDirectory() as tmp:
        extra = [f"paths.results={tmp}", f"paths.data={tmp}/data", *TRIVIAL]
        # the grid's method overrides would undo TRIVIAL for some arms: keep the rks arms' points only
        t0 = time.perf_counter()
        planned = plan(args.runs_from, extra=extra)
        t_plan = time.perf_counter() - t0
        n = len(planned)
        t0 = time.perf_counter()
        res = run_sweep(args.runs_from, extra=extra, jobs=args.jobs, progress=False)
        t_run = time.perf_counter() - t0
        compute = 0.0
        for p in Path(tmp, "runs").rglob("*.json"):
            compute += (json.loads(p.read_text()).get("timings") or {}).get("total_s", 0.0)
        t0 = time.perf_counter()
        run_sweep(args.runs_from, extra=extra, jobs=args.jobs, progress=False)
        t_resume = time.perf_counter() - t0
        print(f"runs: {n} ({sum(r['status'] == 'ok' for r in res)} ok)")
        print(f"plan ms/run: {1000 * t_plan / n:.1f}")
        print(f"worker ms/run: {1000 * (t_run - t_plan - compute) / n:.1f}   (goal < 50)")
        print(f"compute ms/run: {1000 * compute / n:.1f}")
        print(f"resume ms/run: {1000 * t_resume / n:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        extra = [f"paths.results={tmp}", f"paths.data={tmp}/data", "mirror=file:///nonexistent-mirror"]
        t0 = time.perf_counter()
        res = run_sweep("chen2015/fig1", smoke=True, extra=extra, jobs=args.jobs, progress=False)
        dt = time.perf_counter() - t0
        print(f"unavailable ms/run: {1000 * dt / len(res):.1f}   ({len(res)} runs of chen2015/fig1 smoke, "
              f"{sum(r['status'] == 'unavailable' for r in res)} unavailable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
