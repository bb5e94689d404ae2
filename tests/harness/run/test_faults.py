"""A sweep survives faults: a killed worker, a killed parent, two sweeps or reports at once."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
N_SMOKE = len(__import__("rfrepro.harness.run.grid", fromlist=["expand"]).expand("sun2018/fig1", smoke=True))
# runs long enough (~0.5 s each) to be caught mid-way
SLOW = ["dataset.n_train=300", "dataset.n_test=100000"]


def _start(results, *args):
    env = {**os.environ, "RFREPRO_RESULTS": str(results)}
    return subprocess.Popen([sys.executable, "-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_lock(runs: Path, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        for lock in runs.glob("*.lock") if runs.is_dir() else []:
            try:
                host, pid, _ = lock.read_text().split(" ", 2)
                return lock, int(pid)
            except (OSError, ValueError):
                continue
        time.sleep(0.02)
    raise AssertionError("no run started")


def _records(runs: Path):
    return [json.loads(p.read_text()) for p in runs.glob("*.json") if not p.name.startswith(".")]


@pytest.mark.parametrize("jobs", ["2", "1"])
def test_a_killed_worker_loses_no_run(tmp_path, jobs):
    # --jobs 1 (and JOBS=1, a study's sweep.max_jobs: 1, a single run left) runs in a one-worker pool:
    # the kill ends that run only, not the sweep
    runs = tmp_path / "smoke" / "runs" / "sun2018-fig1"
    proc = _start(tmp_path, "--jobs", jobs, *SLOW)
    try:
        lock, pid = _wait_for_lock(runs)
        assert pid != proc.pid  # a pool worker holds it, not the sweep's own process
        victim = lock.stem
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
    recs = {r["run_id"]: r for r in _records(runs)}
    assert len(recs) == N_SMOKE, err[-2000:]
    # every run ended finished or failed with its cause; the killed one was retried once
    assert all(r["status"] in ("ok", "failed") for r in recs.values())
    assert "worker died" in recs[victim].get("previous_attempt", {}).get("error", "") or \
        "worker died" in recs[victim].get("error", "")
    assert proc.returncode == (0 if all(r["status"] == "ok" for r in recs.values()) else 1)


def test_a_killed_parent_leaves_no_worker_writing(tmp_path):
    runs = tmp_path / "smoke" / "runs" / "sun2018-fig1"
    proc = _start(tmp_path, "--jobs", "2", *SLOW)
    try:
        _, worker = _wait_for_lock(runs)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        time.sleep(1.5)  # the workers notice within 0.2 s
        before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json")}
        time.sleep(3)
        after = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json")}
        assert before == after and len(after) < N_SMOKE
        with pytest.raises(ProcessLookupError):
            os.kill(worker, 0)
    finally:
        proc.kill()


def test_two_sweeps_of_one_study_compute_each_run_once(tmp_path):
    a = _start(tmp_path, "--jobs", "1", *SLOW)
    b = _start(tmp_path, "--jobs", "1", *SLOW)
    outs = [p.communicate(timeout=600) for p in (a, b)]
    computed = 0
    for out, _err in outs:
        line = next(line for line in out.splitlines() if line.startswith(f"sun2018/fig1: {N_SMOKE} runs"))
        counts = dict((v, int(k)) for k, v in (part.split(" ", 1) for part in line.split(": ", 2)[2].split(", ")))
        computed += counts.get("ok", 0) + counts.get("failed", 0)
    assert computed == N_SMOKE
    assert {a.returncode, b.returncode} <= {0, 3}  # 3: runs held by the other sweep were not run here


def test_concurrent_outputs_only_both_succeed(tmp_path):
    first = _start(tmp_path, "--jobs", "1", "dataset.n_train=150", "dataset.n_test=300")
    assert first.wait(timeout=300) == 0, first.stderr.read()[-2000:]
    procs = [_start(tmp_path, "--outputs-only", "dataset.n_train=150", "dataset.n_test=300") for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    assert (tmp_path / "smoke" / "figures" / "sun2018-fig1.png").stat().st_size > 1000
    assert not list((tmp_path / "smoke").rglob(".*.tmp")) and not list((tmp_path / "smoke").rglob(".sun2018*"))
