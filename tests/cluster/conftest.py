"""Fixtures for the cluster tests: a real Dask scheduler and workers on 127.0.0.1.

The processes are started with the same interpreter, bounded in time (each
waits at most ``START_TIMEOUT`` seconds to come up) and killed afterwards,
whatever the test did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

START_TIMEOUT = 60.0
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@dataclass
class DaskProcs:
    """A scheduler and its workers, started as subprocesses."""

    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    # the worker CLI runs a nanny and the worker in its own process group: end them together
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, set_as_default=False, timeout="30s") as client:
        client.wait_for_workers(n, timeout=START_TIMEOUT)


@pytest.fixture
def dask_procs(tmp_path):
    """``dask scheduler`` + two ``dask worker`` processes (one thread each) on 127.0.0.1."""
    sched_file = tmp_path / "scheduler.json"
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    # the tasks of the tests are functions of the test modules here: the
    # scheduler (which unpickles the task graph) and the workers must import them
    path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
    procs: list[subprocess.Popen] = []

    def start(args: list[str], log_name: str) -> subprocess.Popen:
        with open(logs / log_name, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", *args], stdout=log,
                                    stderr=subprocess.STDOUT, cwd=REPO, env=env,
                                    start_new_session=True)
        procs.append(proc)
        return proc

    try:
        sched = start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                       "--no-dashboard", "--scheduler-file", str(sched_file)], "scheduler.log")
        deadline = time.monotonic() + START_TIMEOUT
        while not sched_file.is_file():
            if sched.poll() is not None or time.monotonic() > deadline:
                pytest.fail("dask scheduler did not start:\n"
                            + (logs / "scheduler.log").read_text()[-2000:])
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        workers = [start(["distributed.cli.dask_worker", address, "--host", "127.0.0.1",
                          "--nthreads", "1", "--no-dashboard", "--memory-limit", "2GiB"],
                         f"worker{i}.log") for i in range(2)]
        _wait_for_workers(address, 2)
        yield DaskProcs(address=address, scheduler=sched, workers=workers)
    finally:
        for proc in reversed(procs):
            _stop(proc)
