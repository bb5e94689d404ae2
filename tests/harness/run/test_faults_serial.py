"""Serial sweeps get the pool's fault protection: every run goes to a worker, never into the sweep's process."""

import pytest

from rfrepro.harness.run import pools as sweep_mod
from rfrepro.harness.run.grid import expand

SMALL = ["dataset.n_train=150", "dataset.n_test=300"]


@pytest.fixture
def widths(monkeypatch):
    """Stand in for the pool: note its width, compute nothing."""
    seen = []

    def fake_pool(todo, jobs, bar, results, submit=None):
        seen.append((len(todo), jobs))
        results.extend({"status": "ok", "run_id": p.run_id, "arm": p.job.arm} for p in todo)

    def no_in_process(*args, **kw):
        raise AssertionError("a run ran in the sweep's own process")

    monkeypatch.setattr(sweep_mod, "_run_pool", fake_pool)
    monkeypatch.setattr(sweep_mod, "run_planned", no_in_process)
    return seen


@pytest.mark.parametrize("jobs, extra, width", [
    (1, [], 1),                          # --jobs 1 / JOBS=1
    (2, ["++sweep.max_jobs=1"], 1),      # a timing study's sweep.max_jobs: 1
    (2, [], 2),
])
def test_serial_sweeps_go_to_a_one_worker_pool(results_root, widths, jobs, extra, width):
    n = len(expand("sun2018/fig1", smoke=True, extra=extra))
    res = sweep_mod.run_sweep("sun2018/fig1", smoke=True, jobs=jobs, progress=False,
                              extra=[f"paths.results={results_root}", *SMALL, *extra])
    assert len(res) == n and widths == [(n, width)]


def test_a_single_run_left_goes_to_the_pool_too(results_root, widths):
    extra = [f"paths.results={results_root}", *SMALL]
    planned = sweep_mod.plan("sun2018/fig1", smoke=True, extra=extra)
    from rfrepro.runner.store import RecordStore

    store = RecordStore(results_root, "sun2018-fig1")
    for p in planned[1:]:  # every run but one finished before
        store.write({"run_id": p.run_id, "status": "ok"})
    res = sweep_mod.run_sweep("sun2018/fig1", smoke=True, jobs=2, progress=False, extra=extra)
    assert len(res) == len(planned) and widths == [(1, 1)]


def test_workers_see_the_callers_current_paths(tmp_path, monkeypatch):
    # run configs read RFREPRO_DATA / RFREPRO_MIRROR in the worker: a changed variable gets new workers
    import os

    monkeypatch.setenv("RFREPRO_DATA", str(tmp_path / "a"))
    first = sweep_mod._pool(1)
    assert first.submit(os.environ.get, "RFREPRO_DATA").result() == str(tmp_path / "a")
    assert sweep_mod._pool(1) is first  # unchanged: reused
    monkeypatch.setenv("RFREPRO_DATA", str(tmp_path / "b"))
    assert sweep_mod._pool(1).submit(os.environ.get, "RFREPRO_DATA").result() == str(tmp_path / "b")
