"""Sweeps: expansion, resume after a crash, failures do not stop the sweep."""

import os

import pytest

from rfrepro.harness.run import pools as sweep_mod
from rfrepro.harness.run.grid import _sweep_spec, expand
from rfrepro.harness.run.pools import run_sweep
from rfrepro.runner.env import threads_for
from rfrepro.runner.store import RecordStore

N_SMOKE = len(expand("sun2018/fig1", smoke=True))


def test_expand_full_and_smoke_sizes():
    full = expand("sun2018/fig1")
    arms = {job.arm for job in full}
    # 17 lambdas x 10 seeds for each arm (KSVM, RFSVM unif and opt at N = 1, each without and with a bias)
    assert len(full) == len(arms) * 17 * 10 and {"ksvm", "rfsvm_unif", "rfsvm_opt"} <= arms
    smoke = expand("sun2018/fig1", smoke=True)
    assert len(smoke) == len(arms) * 3 * 2
    assert all("smoke=true" in job.overrides for job in smoke)
    assert {job.arm for job in smoke} == arms


def test_unknown_experiment_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown experiment 'nope/fig9'.*sun2018/fig1"):
        expand("nope/fig9")


def test_sweep_resumes_after_a_crash_and_keeps_finished_runs(results_root, monkeypatch):
    extra = [f"paths.results={results_root}", "dataset.n_train=150", "dataset.n_test=300"]
    calls = {"n": 0}
    real = sweep_mod.run_planned

    def crashing(p, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # the sweep dies half way
        return real(p, *args, **kw)

    monkeypatch.setattr(sweep_mod, "run_planned", crashing)
    with pytest.raises(KeyboardInterrupt):  # in this process, where the patch is
        run_sweep("sun2018/fig1", smoke=True, extra=extra, progress=False, in_process=True)
    store = RecordStore(results_root, "sun2018-fig1")
    assert len([r for r in store.records() if r["status"] == "ok"]) == 3

    monkeypatch.setattr(sweep_mod, "run_planned", real)
    res = run_sweep("sun2018/fig1", smoke=True, extra=extra, progress=False)
    assert len(res) == N_SMOKE
    assert sum(bool(r.get("_skipped")) for r in res) == 3
    assert all(r["status"] == "ok" for r in res)
    assert len(store.records()) == N_SMOKE


def test_a_failing_point_does_not_stop_the_sweep(results_root, monkeypatch):
    from rfrepro.models import LinearSVM

    def boom(self, X, y):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(LinearSVM, "fit", boom)
    extra = [f"paths.results={results_root}", "dataset.n_train=150", "dataset.n_test=300"]
    res = run_sweep("sun2018/fig1", smoke=True, extra=extra, progress=False, in_process=True)  # patched here
    status = {(r["arm"], r["status"]) for r in res}
    assert status == {(a, "ok" if a.startswith("ksvm") else "failed") for a, _ in status}
    failed = [r for r in RecordStore(results_root, "sun2018-fig1").records() if r["status"] == "failed"]
    assert len(failed) == sum(not r["arm"].startswith("ksvm") for r in res) > 0
    assert all("solver exploded" in r["traceback"] for r in failed)


def test_parallel_sweep_matches_serial(results_root):
    extra = [f"paths.results={results_root}", "dataset.n_train=150", "dataset.n_test=300"]
    res = run_sweep("sun2018/fig1", smoke=True, jobs=2, extra=extra, progress=False)
    assert sorted(r["status"] for r in res) == ["ok"] * N_SMOKE
    par = RecordStore(results_root, "sun2018-fig1").records()
    acc_par = {r["run_id"]: r["metrics"]["accuracy"] for r in par}
    # the pool's workers inherit the idle-BLAS setting and load their OpenBLAS after it (rfrepro.BLAS_IDLE_ENV)
    assert {r["threads"]["openblas_thread_timeout"] for r in par} == {os.environ["OPENBLAS_THREAD_TIMEOUT"]}
    res2 = run_sweep("sun2018/fig1", smoke=True, jobs=1, force=True, extra=extra, progress=False)
    assert len(res2) == N_SMOKE
    acc_ser = {r["run_id"]: r["metrics"]["accuracy"] for r in RecordStore(results_root, "sun2018-fig1").records()}
    assert acc_par == acc_ser


def test_threads_per_job_do_not_oversubscribe(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert threads_for(2) == 1
    assert threads_for(1) == 2  # one job at a time uses every core
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert threads_for(3) == 5


@pytest.mark.parametrize("study", ["sun2018/fig1", "sun2018/fig4", "spine/rff-kernel-approx"])
def test_cached_composition_equals_hydra_compose(study):
    from omegaconf import OmegaConf

    from rfrepro.harness.run.config import compose, compose_cached
    from rfrepro.runner.record import identify

    jobs = expand(study) + expand(study, smoke=True)
    for job in jobs[:: max(1, len(jobs) // 12)]:
        fast, slow = compose_cached(job.overrides), compose(job.overrides)
        assert OmegaConf.to_container(fast, resolve=True) == OmegaConf.to_container(slow, resolve=True)
        assert identify(fast)[0] == identify(slow)[0]


@pytest.mark.parametrize("study", ["wu2016/fig6", "chen2015/table1", "hamid2014/fig7"])
def test_timing_studies_run_one_at_a_time_with_their_own_threads(study, monkeypatch):
    from rfrepro.harness.run.grid import max_jobs
    from rfrepro.harness.run.plan import plan

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert max_jobs(study) == 1
    set_by_study = _sweep_spec(study, True, ())["threads"]
    p = plan(study, smoke=True, jobs=2)[0]
    # a study that fixes its threads keeps them whatever --jobs says; else one job gets every core
    assert p.cfg.threads == (set_by_study if set_by_study is not None else threads_for(2))
    assert p.user_threads == (set_by_study is not None)


def test_max_jobs_lowers_jobs_with_a_note(results_root, monkeypatch, capsys):
    widths = []
    real = sweep_mod._run_pool

    def one_worker(todo, jobs, *args, **kw):
        widths.append(jobs)
        return real(todo, jobs, *args, **kw)

    monkeypatch.setattr(sweep_mod, "_run_pool", one_worker)
    extra = [f"paths.results={results_root}", "dataset.n_train=150", "dataset.n_test=300", "++sweep.max_jobs=1"]
    res = run_sweep("sun2018/fig1", smoke=True, jobs=2, extra=extra, progress=False)
    assert [r["status"] for r in res] == ["ok"] * N_SMOKE
    assert widths == [1]  # a pool of one worker: one run at a time, and a killed run is still recorded
    assert "1 run(s) at a time, not 2 (sweep.max_jobs" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["0", "true", "1.5"])
def test_invalid_max_jobs_is_bad_input(bad):
    from rfrepro.harness.run.grid import max_jobs

    with pytest.raises(ValueError, match="sweep.max_jobs must be an integer >= 1"):
        max_jobs("sun2018/fig1", extra=[f"++sweep.max_jobs={bad}"])


def test_a_large_plan_shows_its_progress(monkeypatch, capsys):
    from rfrepro.harness.run import plan as plan_mod

    quiet = plan_mod.plan("sun2018/fig1", smoke=True, progress=True)  # below PLAN_PROGRESS_RUNS: no bar
    assert len(quiet) == N_SMOKE < plan_mod.PLAN_PROGRESS_RUNS and "planning" not in capsys.readouterr().err
    monkeypatch.setattr(plan_mod, "PLAN_PROGRESS_RUNS", N_SMOKE)
    shown = plan_mod.plan("sun2018/fig1", smoke=True, progress=True)
    assert f"| 0/{N_SMOKE} [" in capsys.readouterr().err  # the bar, from 0 of its runs (it is cleared at the end)
    assert [p.run_id for p in shown] == [p.run_id for p in quiet]
    plan_mod.plan("sun2018/fig1", smoke=True)  # progress is off by default (a library call)
    assert "planning" not in capsys.readouterr().err


def test_a_sweep_killed_while_planning_leaves_the_previous_plan(results_root, monkeypatch):
    """The plan is written once, whole, after every run is planned: a sweep stopped while planning
    (here its grid changed, so its runs are new) leaves the previous plan and its report as they were."""
    from rfrepro.layout import ResultsLayout
    from rfrepro.runner import record

    extra = [f"paths.results={results_root}", "dataset.n_train=150", "dataset.n_test=300"]
    run_sweep("sun2018/fig1", smoke=True, extra=extra, progress=False, in_process=True)
    path = ResultsLayout(results_root).plan("sun2018-fig1")
    before = path.read_bytes()
    calls = {"n": 0}
    real = record.identify

    def interrupted(cfg):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt  # killed half way through planning
        return real(cfg)

    monkeypatch.setattr(record, "identify", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_sweep("sun2018/fig1", smoke=True, extra=[*extra, "seed=7"], progress=False, in_process=True)
    assert calls["n"] == 5 and path.read_bytes() == before
