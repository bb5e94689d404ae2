"""Reproduce one study: run its sweep (resumable, parallel), then build its outputs.

    python -m rfrepro.reproduce sun2018/fig1 [--smoke] [--jobs 2] [--force] [override ...]

Target names as in the Makefile (``sun2018-fig1``, ``rff-kernel-approx``) are accepted too.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rfrepro.config import options


def resolve_study(name: str) -> str:
    """Map ``sun2018-fig1`` / ``sun2018/fig1`` / ``rff-kernel-approx`` to a study name."""
    valid = options("experiment")
    if name in valid:
        return name
    for study in valid:
        paper, item = study.split("/", 1)
        if name in (f"{paper}-{item}", item if paper == "spine" else None):
            return study
    raise ValueError(f"unknown experiment {name!r}; valid experiments: {', '.join(valid)}")


def results_root(smoke: bool) -> str:
    base = os.environ.get("RFREPRO_RESULTS", "results")
    return os.path.join(base, "smoke") if smoke else base


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.reproduce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", help="paper/item or paper-item; 'list' lists them")
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run")
    ap.add_argument("--smoke", action="store_true", help="the subsampled CI version")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("RFREPRO_JOBS", os.cpu_count() or 1)))
    ap.add_argument("--force", action="store_true", help="redo finished runs")
    ap.add_argument("--outputs-only", action="store_true", help="rebuild outputs from the records")
    args = ap.parse_intermixed_args(argv)  # overrides may come before or after options
    if args.study == "list":
        print("\n".join(options("experiment")))
        return 0
    from rfrepro.results.outputs import build_outputs
    from rfrepro.runner.sweep import run_sweep

    try:
        study = resolve_study(args.study)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    root = results_root(args.smoke)
    extra = [f"paths.results={root}", *args.overrides]
    t0 = time.perf_counter()
    if not args.outputs_only:
        res = run_sweep(study, smoke=args.smoke, jobs=args.jobs, force=args.force, extra=extra)
        counts: dict[str, int] = {}
        for r in res:
            key = "skipped (finished before)" if r.get("_skipped") else r.get("status", "?")
            counts[key] = counts.get(key, 0) + 1
        print(f"{study}: {len(res)} runs: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        for r in res:
            if r.get("status") == "failed":
                print(f"  FAILED {r.get('arm')} {r.get('run_id')}: {r.get('error')}", file=sys.stderr)
    written = build_outputs(study, root)
    for kind, path in written.items():
        print(f"  {kind}: {path}")
    print(f"{study}: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
