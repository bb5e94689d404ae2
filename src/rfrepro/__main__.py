"""``python -m rfrepro``: one run per composed config (see :mod:`rfrepro.harness.cli`)."""

from rfrepro.harness.cli import main

if __name__ == "__main__":
    main()
