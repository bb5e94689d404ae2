"""``python -m rfrepro.report``: REPORT.md from the records and plans (see :mod:`rfrepro.harness.report`)."""

import sys

from rfrepro.harness.report import main

if __name__ == "__main__":
    sys.exit(main())
