"""dask_map on real Dask engines: an in-process cluster (fast) and scheduler + worker processes."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from distributed import Client, KilledWorker, LocalCluster

from rfrepro.harness.run import distributed as rdist
from rfrepro.harness.run.distributed import dask_map, threads_per_task
from rfrepro.harness.run.pools import run_sweep


def square(item):
    """Task: log the attempt to a file (so attempts are counted across processes), square x."""
    x, log = item
    with open(log, "a") as f:
        f.write(f"{x}\n")
    if x == 3:
        raise ValueError("three is refused")
    return {"x": x, "y": x * x, "pid": os.getpid()}


def slow_pid(item):
    time.sleep(0.5)
    return {"x": item, "pid": os.getpid()}


def _attempts(log: Path) -> dict[int, int]:
    out: dict[int, int] = {}
    for line in log.read_text().split():
        out[int(line)] = out.get(int(line), 0) + 1
    return out


@pytest.fixture
def local_cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                      host="127.0.0.1",
                      dashboard_address=None) as cluster:
        yield cluster


def test_every_item_once_with_result_or_exception(local_cluster, tmp_path):
    log = tmp_path / "attempts.txt"
    items = [(x, str(log)) for x in range(8)]
    out = list(dask_map(square, items, address=local_cluster.scheduler_address, retries=1,
                        progress=False, check_env=False))
    assert sorted(item[0] for item, _, _ in out) == list(range(8))
    by_x = {item[0]: (res, exc) for item, res, exc in out}
    for x in range(8):
        res, exc = by_x[x]
        if x == 3:
            assert res is None and isinstance(exc, ValueError) and "three" in str(exc)
        else:
            assert exc is None and res["y"] == x * x
    attempts = _attempts(log)
    assert attempts[3] == 2  # retries=1: the failing task ran twice
    assert all(attempts[x] == 1 for x in range(8) if x != 3)  # pure=False, no duplicates


def test_worker_outside_the_lock_refuses(local_cluster, tmp_path, monkeypatch):
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==0.0.1 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    monkeypatch.setenv("RFREPRO_LOCK", str(lock))  # in-process workers share the environment
    rdist._check_env_once.cache_clear()
    try:
        out = list(dask_map(square, [(1, str(tmp_path / "log"))],
                            address=local_cluster.scheduler_address, retries=0, progress=False))
    finally:
        rdist._check_env_once.cache_clear()
    [(_, res, exc)] = out
    assert res is None and isinstance(exc, RuntimeError)
    assert "numpy" in str(exc) and "locked 0.0.1" in str(exc) and "make setup" in str(exc)
    assert not (tmp_path / "log").exists()  # the run itself never started


def test_threads_per_task_divides_the_host(local_cluster):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert threads_per_task(local_cluster.scheduler_address) == max(1, cores // 2)


@pytest.mark.slow
def test_scheduler_and_worker_processes(dask_procs, tmp_path):
    log = tmp_path / "attempts.txt"
    items = [(x, str(log)) for x in range(6)]
    out = list(dask_map(square, items, address=dask_procs.address, progress=False,
                        check_env=False))
    done = {item[0]: res for item, res, exc in out if exc is None}
    assert sorted(done) == [0, 1, 2, 4, 5]
    assert {r["y"] for r in done.values()} == {0, 1, 4, 16, 25}
    with Client(dask_procs.address, set_as_default=False) as client:
        worker_pids = set(client.run(os.getpid).values())
    # the tasks ran in the two worker processes (children of the nannies), not here
    assert {r["pid"] for r in done.values()} <= worker_pids and len(worker_pids) == 2


@pytest.mark.slow
def test_killed_worker_loses_no_item(dask_procs):
    items = list(range(12))
    with Client(dask_procs.address, set_as_default=False) as client:
        worker_pids = client.run(os.getpid)  # the worker processes themselves
    seen: dict[int, tuple] = {}
    killed = None
    for item, res, exc in dask_map(slow_pid, items, address=dask_procs.address, retries=1,
                                   progress=False, check_env=False):
        assert item not in seen
        seen[item] = (res, exc)
        if killed is None:
            # a result is in, so both workers are busy with the next tasks: kill one mid-task
            killed = next(iter(worker_pids.values()))
            os.kill(killed, signal.SIGKILL)
    assert sorted(seen) == items  # none missing
    for res, exc in seen.values():
        assert (res is not None and exc is None) or isinstance(exc, KilledWorker)
    assert killed is not None
    # its tasks were rescheduled (the scheduler allows 3 deaths per task), so all finished
    assert all(res is not None for res, _ in seen.values())


@pytest.mark.slow
def test_sun_smoke_on_dask_equals_local(dask_procs, tmp_path):
    from rfrepro.runner.store import FINISHED, RecordStore

    name = "sun2018/fig1"
    local, remote = tmp_path / "local", tmp_path / "remote"
    loc = run_sweep(name, smoke=True, jobs=1, extra=[f"paths.results={local}"], progress=False)
    rem = run_sweep(name, smoke=True, jobs=1, scheduler=dask_procs.address,
                    extra=[f"paths.results={remote}"], progress=False)
    assert len(rem) == len(loc) > 0
    assert [r["status"] for r in rem] == [FINISHED] * len(rem)
    t_loc = RecordStore(local, "sun2018-fig1").table()
    t_rem = RecordStore(remote, "sun2018-fig1").table()
    keys = ["arm", "seed", "model.lam"]
    metrics = sorted(c for c in t_loc.columns if c.startswith("metrics."))
    assert metrics and len(t_loc) == len(t_rem) == len(loc)
    a = t_loc.sort_values(keys).reset_index(drop=True)
    b = t_rem.sort_values(keys).reset_index(drop=True)
    assert a[keys].equals(b[keys])
    for col in metrics:
        assert a[col].tolist() == b[col].tolist(), col


def test_slurm_config_makes_a_job_script(tmp_path):
    """conf/cluster/slurm.yaml is valid for SLURMCluster: one worker per run slot, threads apart."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(rdist.SLURM_CONFIG)
    cfg.cluster.scheduler_options = {"port": 0, "dashboard_address": None}  # no fixed port here
    cfg.cluster.queue = "cpu"
    OmegaConf.save(cfg, tmp_path / "slurm.yaml")
    with rdist.slurm_cluster(tmp_path / "slurm.yaml", jobs=0) as cluster:
        script = cluster.job_script()
    assert "#SBATCH -p cpu" in script and "#SBATCH --cpus-per-task=8" in script
    assert "#SBATCH -t 04:00:00" in script
    assert "--nthreads 1" in script and "--nworkers 4" in script
    assert 'cd "$SLURM_SUBMIT_DIR"' in script.splitlines()[-3:-1][0]


@pytest.mark.slow
def test_sun_smoke_survives_a_killed_worker(dask_procs, tmp_path):
    """A worker SIGKILLed mid-sweep: every run still ends finished, or failed with its cause."""
    import threading

    from rfrepro.runner.store import FAILED, FINISHED, RecordStore

    with Client(dask_procs.address, set_as_default=False) as client:
        victim = next(iter(client.run(os.getpid).values()))
    out: dict = {}

    def sweep():
        out["results"] = run_sweep("sun2018/fig1", smoke=True, jobs=1, scheduler=dask_procs.address,
                                   extra=[f"paths.results={tmp_path}"], progress=False)

    thread = threading.Thread(target=sweep, daemon=True)
    thread.start()
    runs = tmp_path / "runs" / "sun2018-fig1"
    deadline = time.monotonic() + 300
    while not list(runs.glob("*.json")) and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.1)
    assert thread.is_alive(), "the sweep ended before a worker could be killed"
    os.kill(victim, signal.SIGKILL)  # mid-sweep: runs are queued and in flight
    thread.join(timeout=600)
    assert not thread.is_alive()
    results = out["results"]
    statuses = [r["status"] for r in results]
    assert set(statuses) <= {FINISHED, FAILED}
    assert all(r["error"] for r in results if r["status"] == FAILED)  # each failure says why
    run_ids = [r["run_id"] for r in results]
    assert len(set(run_ids)) == len(run_ids) > 0  # every run once, none missing
    records = {r["run_id"]: r["status"] for r in RecordStore(tmp_path, "sun2018-fig1").records()}
    assert set(records) == set(run_ids)
    assert not list(runs.glob("*.lock"))  # no run left claimed by the dead worker
