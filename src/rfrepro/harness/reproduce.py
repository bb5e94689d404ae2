"""Reproduce one study: run its sweep (resumable, parallel), then build its outputs.

    python -m rfrepro.reproduce sun2018/fig1 [--smoke] [--jobs 2] [--force] [--scheduler ADDR] [override ...]

Target names as in the Makefile (``sun2018-fig1``, ``rff-kernel-approx``) are accepted too.
Exit status: 0 all runs finished, 1 a run failed (or the results folder is full:
one line, the finished runs are kept and the same command resumes), 2 bad input,
3 runs not run (data unavailable, or being computed by another process); see
rfrepro.harness.run.summary.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rfrepro.harness.paths import (
    DiskFull,
    check_writable,
    disk_full_line,
    is_disk_full,
    results_root,
)
from rfrepro.harness.planfile import load_plan
from rfrepro.harness.run.grid import resolve_study
from rfrepro.harness.run.plan import user_overrides
from rfrepro.harness.run.summary import (
    EXIT_FAILED,
    EXIT_USAGE,
    exit_code,
    summarize,
)


def _disk_full(study: str, root: str) -> int:
    """Say in one line (stderr) that ``root`` is full and how many of the study's planned runs are kept; 1."""
    from rfrepro.layout import study_slug
    from rfrepro.runner.store import RecordStore

    finished = total = None
    try:
        plan = load_plan(study, root)
        if plan is not None:
            ids = [r.get("run_id") for r in plan.get("runs", [])]
            store = RecordStore(root, study_slug(study))
            finished, total = sum(1 for i in ids if i and store.is_finished(i)), len(ids)
    except (OSError, ValueError):
        pass
    print(disk_full_line(root, finished, total), file=sys.stderr)
    return EXIT_FAILED


def prune(study: str, root: str) -> int:
    """Remove the records of ``study`` under ``root`` that its saved plan does not list; say which.

    Records of runs in progress (their lock is held) are kept. Exit status 0,
    or 2 when the study was never planned there (nothing is removed).
    """
    from rfrepro.layout import ResultsLayout, study_slug

    plan = load_plan(study, root)
    if plan is None:
        print(f"error: {study} has no saved plan under {root}: nothing to prune against", file=sys.stderr)
        return EXIT_USAGE
    keep = {r.get("run_id") for r in plan.get("runs", [])}
    layout, slug = ResultsLayout(root), study_slug(study)
    removed = []
    for path in sorted(layout.study_runs(slug).glob("*.json")):
        if path.stem not in keep and not layout.run_lock(slug, path.stem).exists():
            path.unlink()
            removed.append(path)
    for path in removed:
        print(f"removed {path}")
    print(f"{study}: {len(removed)} records outside its plan removed, {len(keep)} planned runs kept")
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.reproduce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", help="paper/item or paper-item; 'list' lists them")
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run")
    ap.add_argument("--smoke", action="store_true", help="the subsampled CI version")
    ap.add_argument("--jobs", type=_positive, default=None,
                    help="runs in parallel (default $RFREPRO_JOBS or the number of cores); "
                         "each run gets cores / jobs BLAS threads unless threads= is given")
    ap.add_argument("--force", action="store_true", help="redo finished runs")
    ap.add_argument("--outputs-only", action="store_true", help="rebuild outputs from the saved plan and records")
    ap.add_argument("--prune", action="store_true",
                    help="remove the study's records that are not in its saved plan (lists them), then exit")
    ap.add_argument("--scheduler", default=os.environ.get("RFREPRO_SCHEDULER") or None,
                    help="address of a Dask scheduler (tcp://host:8786) to run on instead of locally")
    try:
        args = ap.parse_intermixed_args(argv)  # overrides may come before or after options
    except SystemExit as exc:  # argparse already printed one line
        return EXIT_USAGE if exc.code else 0
    if args.study == "list":
        from rfrepro.harness.report.scorecard import listing

        print("\n".join(listing(results_root(args.smoke))))
        return 0
    from rfrepro.harness.report.outputs import build_outputs
    from rfrepro.harness.run.config import check_composes, check_overrides
    from rfrepro.harness.run.pools import run_sweep

    jobs = args.jobs or int(os.environ.get("RFREPRO_JOBS") or os.cpu_count() or 1)
    root = results_root(args.smoke, args.overrides)
    try:
        study = resolve_study(args.study)
        check_overrides(args.overrides)
        # the study's config with the user's overrides composes (an unknown key is one line, not a traceback)
        check_composes([f"experiment={study}", f"smoke={'true' if args.smoke else 'false'}",
                        *[o for o in args.overrides if not o.lstrip("+~").startswith("paths.results=")]])
        check_writable(root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except DiskFull:
        return _disk_full(study, root)
    if args.prune:
        return prune(study, root)
    extra = [f"paths.results={root}", *args.overrides]
    t0 = time.perf_counter()
    code = 0
    if not args.outputs_only:
        try:
            res = run_sweep(study, smoke=args.smoke, jobs=jobs, force=args.force, extra=extra,
                            scheduler=args.scheduler)
        except ValueError as exc:  # a bad override for the whole study
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except DiskFull as exc:  # no run started after it; the finished ones are kept
            print(exc.line(), file=sys.stderr)
            return EXIT_FAILED
        lines = summarize(study, res, root)
        print(lines[0])
        for line in lines[1:]:
            print(line, file=sys.stderr)
        code = exit_code(res)
    if args.outputs_only:  # outputs come from the saved plan: a different grid needs its sweep run

        saved = load_plan(study, root)
        if saved is None:
            print(f"error: {study} has no saved plan under {root}: run `python -m rfrepro.reproduce {study}"
                  f"{' --smoke' if args.smoke else ''}` first", file=sys.stderr)
            return EXIT_USAGE
        asked = user_overrides(args.overrides)
        if asked and asked != saved.get("overrides"):
            print(f"error: --outputs-only builds outputs from the saved plan (overrides: "
                  f"{' '.join(saved.get('overrides') or []) or 'none'}), not from {' '.join(asked)}: "
                  "run the sweep with those overrides", file=sys.stderr)
            return EXIT_USAGE
    try:
        written = build_outputs(study, root)
    except Exception as exc:  # noqa: BLE001 - the runs are safe in their records; say what broke
        if is_disk_full(exc):
            return _disk_full(study, root)
        print(f"error: building the outputs of {study} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    for kind, path in written.items():
        print(f"  {kind}: {path}")
    print(f"{study}: done in {time.perf_counter() - t0:.1f} s (exit status {code})")
    return code


if __name__ == "__main__":
    sys.exit(main())
