"""``python -m rfrepro.report``: REPORT.md from the records and plans (see :mod:`rfrepro.harness.report_cli`)."""

import sys

from rfrepro.harness.report_cli import main

if __name__ == "__main__":
    sys.exit(main())
