"""Harness overhead per run: compose, identity, lock, record, for runs that compute (almost) nothing.

    .venv/bin/python scripts/bench_harness.py [--runs-from sun2018/fig1] [--jobs 1]

Prints, as ``name: value``:

- ``plan ms/run``: composing a run's config and computing its identity (parent side);
- ``worker ms/run``: the rest of a run's wall time that is not its own computation
  (``timings.total_s``): lock, provenance, record writing, dispatch;
- ``unavailable ms/run``: a sweep whose data is unavailable (each source tried once per sweep);
- ``resume ms/run``: a second sweep of the same runs, all finished (skipped);
- ``report s``: building the study's outputs, REPORT.md and the HTML site from the saved
  plan and the records, with the configs composed and the data files fingerprinted or
  hashed meanwhile (goal: 0; the report never plans).

Goal (issue: trustworthy runs): worker time under 50 ms per run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rfrepro.harness.run.plan import plan
from rfrepro.harness.run.pools import run_sweep
from rfrepro.runner.env import summary_line

TRIVIAL = ["dataset.n_train=20", "dataset.n_test=20", "eval.predict=false", "method=rks_cos",
           "method.n_components=1"]


def _report(study: str, root: str) -> tuple[float, dict[str, int]]:
    """Wall time of outputs + REPORT.md + site for ``root``, and what it composed or hashed."""
    import hydra

    import rfrepro.data as data
    import rfrepro.data.download as download
    from rfrepro.harness.report.outputs import build_outputs
    from rfrepro.harness.report.report import write_report

    calls: dict[str, int] = {}
    patched = [(hydra, "compose"), (data, "fingerprint"), (data, "load_dataset"),
               (download, "fetch"), (download, "sha256_file")]
    saved = [(mod, name, getattr(mod, name)) for mod, name in patched if hasattr(mod, name)]

    def counting(name, fn):
        def wrapper(*a, **k):
            calls[name] = calls.get(name, 0) + 1
            return fn(*a, **k)
        return wrapper

    for mod, name, fn in saved:
        setattr(mod, name, counting(name, fn))
    try:
        t0 = time.perf_counter()
        build_outputs(study, root)
        write_report(Path(root), rebuild=True)
        return time.perf_counter() - t0, calls
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


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
        t_report, touched = _report(args.runs_from, tmp)
        print(f"report s: {t_report:.2f}   (configs composed / data fingerprinted or hashed meanwhile: "
              f"{touched.get('compose', 0)} / {sum(v for k, v in touched.items() if k != 'compose')}; goal 0 / 0)")
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
