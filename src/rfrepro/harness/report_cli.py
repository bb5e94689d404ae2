"""The ``python -m rfrepro.report`` command: REPORT.md and the site from the records and plans so far.

    python -m rfrepro.report [--smoke] [--no-rebuild | --rebuild-all]

See :mod:`rfrepro.harness.report.report` for what the report holds.
"""

import argparse
import sys
from pathlib import Path

from rfrepro.harness.catalog import options
from rfrepro.harness.paths import check_writable, results_root
from rfrepro.harness.planfile import plan_file
from rfrepro.harness.report.report import write_report
from rfrepro.harness.run.summary import EXIT_USAGE
from rfrepro.layout import ResultsLayout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="report on the smoke-mode results")
    ap.add_argument("--no-rebuild", action="store_true", help="do not rebuild tables/figures first")
    ap.add_argument("--rebuild-all", action="store_true",
                    help="redraw every study's outputs, even those whose plan, records and code did not change")
    args = ap.parse_args(argv)
    root = results_root(args.smoke)
    try:
        check_writable(root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    path = write_report(Path(root), rebuild=not args.no_rebuild, progress=True, reuse=not args.rebuild_all)
    print(f"wrote {path} and {ResultsLayout(root).site / 'index.html'}")
    layout = ResultsLayout(root)
    if not args.smoke and not any(plan_file(layout.root, s) for s in options("experiment")) \
            and any(plan_file(layout.smoke().root, s) for s in options("experiment")):
        print(f"no study has run at full settings here; the smoke report is {layout.smoke().report} "
              "(make report SMOKE=1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
