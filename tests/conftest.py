"""Settings every test shares."""

import os

import pytest
from threadpoolctl import threadpool_limits

# Runs record ``roofline: null`` unless a test turns the host measurement on (with tiny sizes
# and a temporary cache): the suite must not spend seconds measuring, nor write to the user's cache.
os.environ.setdefault("RFREPRO_ROOFLINE", "off")

# `make test` runs the suite in pytest-xdist workers (-n JOBS). Each worker's own BLAS gets its share of
# the cores, as each run of a parallel sweep does: on 2 cores, two workers with two BLAS threads each
# would wait on each other's spinning threads. A test that needs more threads sets them itself
# (threadpool_limits, numba.set_num_threads); the sweeps a test starts limit their runs' threads anyway.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    threadpool_limits(limits=max(1, (os.cpu_count() or 1) // _workers), user_api="blas")

# --doctest-modules would import this file a second time as a test module, under the name
# another directory's conftest already holds; it has no doctests
collect_ignore = ["conftest.py"]


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    """Send results and downloads of the test to a temporary folder."""
    root = tmp_path / "results"
    monkeypatch.setenv("RFREPRO_RESULTS", str(root))
    monkeypatch.setenv("RFREPRO_DATA", str(tmp_path / "data"))
    return root
