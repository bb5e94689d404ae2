"""``python -m rfrepro.reproduce <study>``: a study's sweep, then its outputs (see :mod:`rfrepro.harness.reproduce`)."""

import sys

from rfrepro.harness.reproduce import main

if __name__ == "__main__":
    sys.exit(main())
