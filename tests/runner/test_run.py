"""One run -> one record: resume, force, failure records, identity."""

import json
import os

import numpy as np
import pytest

from rfrepro.harness.run.config import compose
from rfrepro.runner.record import identify, run_and_record
from rfrepro.runner.store import RecordStore


def run_id(cfg):
    return identify(cfg)[0]

FAST = ["experiment=sun2018/fig1", "method.n_components=1", "dataset.n_train=200", "dataset.n_test=500", "model.lam=0.01"]


def test_run_writes_one_finished_record_with_the_contract_fields(results_root):
    cfg = compose(FAST)
    rec = run_and_record(cfg)
    assert rec["status"] == "ok"
    stored = json.loads(RecordStore(results_root, "sun2018-fig1").path(rec["run_id"]).read_text())
    for key in ("paper", "figure", "dataset", "method", "model", "seed", "metrics", "timings",
                "memory", "env", "code_version", "data_fingerprint", "compute_id", "n_components",
                "threads", "executor"):
        assert key in stored, key
    assert stored["dataset"]["n_train"] == 200 and stored["dataset"]["n_test"] == 500
    assert 0.0 <= stored["metrics"]["accuracy"] <= 1.0
    assert stored["metrics"]["excess_risk"] == pytest.approx(stored["metrics"]["error"] - 0.1)
    for t in ("fit_s", "transform_train_s", "transform_test_s", "train_s", "predict_test_s", "total_s"):
        assert stored["timings"][t] >= 0.0
    assert stored["timings"]["total_s"] >= stored["timings"]["train_s"]
    # the run's own peak: at least the 200 x 2 float64 features it allocated
    assert stored["memory"]["peak_bytes"] >= 200 * 2 * 8 and "tracemalloc" in stored["memory"]["method"]
    assert stored["data_fingerprint"] == {"generated": "disk_annulus"}
    # the feature matrix of 200 rows x 2 features (N = 1: cos and sin), float64
    assert stored["memory"]["feature_bytes"] == 200 * 2 * 8
    assert stored["fitted"]["n_features_out"] == 2
    # sigma rule "mean" resolved to the average pairwise distance and recorded
    assert stored["kernel"]["sigma_rule"] == "mean" and stored["kernel"]["sigma"] > 0
    # the method's sigma is the number used, not the rule (the rule stays in kernel.sigma_rule)
    assert stored["method"]["sigma"] == stored["kernel"]["sigma"]
    assert "machine" in stored["env"] and "numpy" in stored["env"]["versions"]
    # the host's load around the run: the context its times were measured in
    load = stored["host_load"]
    assert load["cores"] == os.cpu_count() and load["start_1min"] >= 0 and load["end_1min"] >= 0


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")
def test_a_run_on_two_threads_records_how_far_apart_its_cores_were(results_root, monkeypatch):
    from rfrepro.runner import cores

    calls = iter([47.0, 331.5])
    monkeypatch.setattr(cores, "round_trip_ns", lambda: next(calls))
    rec = run_and_record(compose(FAST + ["threads=2"]))
    assert rec["host_load"]["core_round_trip_ns"] == {"start": 47.0, "end": 331.5}
    # one thread shares no cache line with another: nothing measured
    monkeypatch.setattr(cores, "round_trip_ns", lambda: pytest.fail("probed a one-thread run"))
    assert "core_round_trip_ns" not in run_and_record(compose(FAST + ["threads=1", "seed=1"]))["host_load"]


def test_second_run_is_skipped_and_force_redoes_it(results_root):
    first = run_and_record(compose(FAST))
    again = run_and_record(compose(FAST))
    assert again.get("_skipped") and again["run_id"] == first["run_id"]
    forced = run_and_record(compose(FAST + ["force=true"]))
    assert not forced.get("_skipped") and forced["status"] == "ok"
    assert forced["finished"] >= first["finished"]


def test_a_forced_rerun_that_fails_keeps_the_finished_record(results_root, monkeypatch):
    import rfrepro.runner.record as run_module

    first = run_and_record(compose(FAST))

    def boom(*args, **kwargs):
        raise RuntimeError("worker lost its data")

    monkeypatch.setattr(run_module, "execute", boom)
    forced = run_and_record(compose(FAST + ["force=true"]))
    assert forced["status"] == "failed" and "worker lost its data" in forced["error"]
    store = RecordStore(results_root, "sun2018-fig1")
    kept = store.read(first["run_id"])
    assert kept["status"] == "ok" and kept["metrics"] == first["metrics"]
    assert kept["forced_rerun"]["status"] == "failed" and store.is_finished(first["run_id"])


def test_failed_run_leaves_traceback_and_is_not_finished(results_root):
    cfg = compose(FAST + ["method.n_components=0"])
    rec = run_and_record(cfg)
    assert rec["status"] == "failed"
    assert "n_components" in rec["error"] and "Traceback" in rec["traceback"]
    store = RecordStore(results_root, "sun2018-fig1")
    assert store.path(rec["run_id"]).is_file()
    assert not store.is_finished(rec["run_id"])
    # the next attempt runs again (and fails again) instead of being skipped
    assert not run_and_record(cfg).get("_skipped")


def test_run_identity_ignores_labels_and_paths_but_not_seed():
    base = compose(FAST)
    assert run_id(base) == run_id(compose(FAST + ["arm=other", "paths.results=/elsewhere", "threads=1"]))
    assert run_id(base) != run_id(compose(FAST + ["seed=1"]))
    assert run_id(base) != run_id(compose(FAST + ["smoke=true"]))
    assert run_id(base) != run_id(compose(FAST + ["+cv.sigma_factors=[1,2]"]))


def test_damaged_record_counts_as_not_finished(results_root):
    rec = run_and_record(compose(FAST))
    store = RecordStore(results_root, "sun2018-fig1")
    store.path(rec["run_id"]).write_text('{"status": "ok", "run_')
    assert not store.is_finished(rec["run_id"])
    assert run_and_record(compose(FAST))["status"] == "ok"


def test_float32_runs_keep_float32_features(results_root):
    rec = run_and_record(compose(FAST + ["dtype=float32"]))
    assert rec["status"] == "ok"
    assert rec["memory"]["feature_bytes"] == 200 * 2 * 4


def test_kernel_error_run_on_generated_data(results_root):
    cfg = compose(FAST + ["eval.kernel_error=true", "eval.kernel_error_points=150",
                          "eval.predict=false", "method=rks_cos"] + ["method.n_components=256"])
    rec = run_and_record(cfg)
    assert rec["status"] == "ok"
    m = rec["metrics"]
    assert 0 < m["kerr_spec"] < 1 and 0 < m["kerr_fro"] < 1
    assert "accuracy" not in m


def test_incompatible_method_and_model_fail_clearly(results_root):
    rec = run_and_record(compose(FAST + ["method=rks_cossin", "model=kernel_svm"]))
    assert rec["status"] == "failed"
    assert "needs kernel input" in rec["error"]


def test_exact_kernel_with_krr_uses_the_dual():
    from rfrepro.runner.steps import execute

    cfg = compose(["dataset=disk_annulus", "dataset.n_train=100", "dataset.n_test=50",
                   "method=exact", "model=ls", "model.lam=0.1"])
    rec = execute(cfg, {"generated": "disk_annulus"})
    assert 0.5 < rec["metrics"]["accuracy"] <= 1.0
    assert np.isfinite(rec["timings"]["train_s"])


def test_identical_computation_in_another_study_is_reused_and_traced(results_root):
    common = ["dataset.n_train=200", "dataset.n_test=500", "model.lam=0.01",
              "method=exact", "model=kernel_svm"]
    first = run_and_record(compose(["experiment=sun2018/fig1", *common]))
    second = run_and_record(compose(["experiment=sun2018/fig2", *common]))
    assert first["compute_id"] == second["compute_id"] and first["run_id"] != second["run_id"]
    assert second["reused_from"] == f"sun2018-fig1/{first['run_id']}"
    assert second["metrics"] == first["metrics"] and second["figure"] == "fig2"
    # a different computation is not reused
    third = run_and_record(compose(["experiment=sun2018/fig2", *common[:-2], "model.lam=0.1",
                                    "method=exact", "model=kernel_svm"]))
    assert "reused_from" not in third


def test_cross_validation_picks_the_grid_minimum_and_is_cached(results_root):
    from rfrepro.runner.cv import cross_validate

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (400, 2))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.randn(400)
    cv = {"sigma_factors": [0.05, 1.0, 50.0], "lams": [1e-3, 1e3], "folds": 3, "n_components": 200}
    res = cross_validate(X, y, "regression", 0.5, cv)
    assert res["cv_error"] == min(g["cv_error"] for g in res["grid"])
    assert len(res["grid"]) >= 6  # widened where the choice sat on the edge of the grid
    # a huge ridge or a huge bandwidth cannot fit sin(3x): the middle sigma and small lam win
    assert res["sigma"] == 0.5 and res["lam"] == 1e-3

    overrides = FAST + ["+cv.enabled=true", "+cv.sigma_factors=[0.5,1]", "+cv.lams=[1e-4,1e-1]",
                        "+cv.folds=2", "+cv.n_components=32", "+cv.max_rows=150"]
    rec = run_and_record(compose(overrides))
    assert rec["status"] == "ok"
    # the choice lies inside the (possibly widened) grid and the kernel uses it
    lams = sorted({g["lam"] for g in rec["cv"].get("grid_points", [])}) or [rec["cv"]["lam"]]
    assert lams[0] <= rec["cv"]["lam"] <= lams[-1] and rec["kernel"]["sigma"] == rec["cv"]["sigma"]
    assert len(list((results_root / "cv").glob("*.json"))) == 1
    rec2 = run_and_record(compose(overrides + ["method.n_components=2"]))
    assert rec2["cv"] == rec["cv"]  # chosen once per training sample, reused by every method
    assert len(list((results_root / "cv").glob("*.json"))) == 1
    run_and_record(compose(overrides + ["seed=1"]))  # a generated dataset's new sample: a new choice
    assert len(list((results_root / "cv").glob("*.json"))) == 2


def test_kernel_image_artifact_is_saved_sorted_by_class(results_root):
    rec = run_and_record(compose(FAST + ["eval.kernel_image_points=60", "method.n_components=50"]))
    assert rec["status"] == "ok"
    data = np.load(results_root / rec["artifacts"]["kernel_image"])
    assert data["approx"].shape == data["exact"].shape == (60, 60)
    assert np.all(np.diff(data["labels"]) >= 0)
    assert np.allclose(np.diag(data["exact"]), 1.0)
    # 50 cos/sin pairs: an unbiased but rough estimate of the exact kernel
    assert np.abs(data["approx"] - data["exact"]).mean() < 0.25


def test_warnings_are_recorded_not_printed(results_root, recwarn):
    # C = 1 / (lam m) = 10^4 with 5 iterations: liblinear cannot converge
    rec = run_and_record(compose(FAST + ["model.lam=1e-7", "model.max_iter=5"]))
    assert rec["status"] == "ok"
    assert rec["fitted"]["model_converged"] is False
    assert any("ConvergenceWarning" in w for w in rec["warnings"])
    assert not [w for w in recwarn if "converge" in str(w.message)]


def test_a_run_over_the_memory_budget_is_refused_not_failed(results_root):
    from rfrepro.harness.run.summary import EXIT_NOT_RUN, exit_code, summarize

    # the exact kernel of 400 rows is 1.2 MB, over a 1 MB budget: refused before anything is allocated
    exact = ["dataset.n_train=400", "dataset.n_test=500", "method=raw_inputs", "model=exact_krr"]
    cfg = compose(exact + ["model.max_memory_gb=0.001"])
    rec = run_and_record(cfg)
    assert rec["status"] == "refused" and rec["error_type"] == "MemoryBudgetExceeded"
    assert "needs 0.0 GB, over the budget max_memory_gb = 0.001 GB" in rec["error"]
    assert not RecordStore(results_root, "adhoc-run").is_finished(rec["run_id"])
    assert exit_code([rec, {"status": "ok"}]) == EXIT_NOT_RUN
    lines = summarize("adhoc/run", [rec], str(results_root))
    assert "1 refused" in lines[0] and "NOT RUN (1 runs): over the memory budget" in lines[1]
    # within the budget the same run finishes
    assert run_and_record(compose(exact + ["model.max_memory_gb=0.01"]))["status"] == "ok"


def test_warm_up_runs_a_copy_and_leaves_the_map_and_the_record_alone(results_root):
    from rfrepro.features import Nystroem, RandomFourierFeatures
    from rfrepro.runner.steps import warm_up

    X = np.random.RandomState(0).randn(50, 3)
    fmap = RandomFourierFeatures(n_components=8, random_state=0)
    warm_up(fmap, X, None, 10, transform=True)
    assert not hasattr(fmap, "n_features_out_")  # a copy was fitted, not the map
    warm_up(Nystroem(n_components=40), X, None, 10, transform=True)  # cannot fit 10 rows: stays cold, no error
    cold = run_and_record(compose(FAST))
    warm = run_and_record(compose(FAST + ["eval.warmup_rows=64"]))
    assert warm["run_id"] != cold["run_id"]  # a different computation of the times
    assert warm["metrics"] == cold["metrics"] and not warm.get("warnings")
    with pytest.raises(ValueError, match=r"eval.warmup_rows must be an int in the range \[0, inf\), got -1"):
        from rfrepro.harness.run.validate import check_run_config

        check_run_config(compose(FAST + ["eval.warmup_rows=-1"]))


def test_warm_up_of_a_model_fits_a_copy_on_the_first_rows_and_leaves_the_model_cold():
    from sklearn.base import BaseEstimator

    from rfrepro.runner.steps import warm_up

    class Spy(BaseEstimator):
        seen: list = []

        def fit(self, X, y):
            if X.shape[0] < 5:
                raise ValueError("too few rows")
            Spy.seen.append((X.shape[0], list(y)))
            self.coef_ = 1.0
            return self

    Z, y = np.arange(40.0).reshape(20, 2), np.arange(20)
    model = Spy()
    warm_up(model, Z, y, 8)
    assert Spy.seen == [(8, list(range(8)))] and not hasattr(model, "coef_")
    warm_up(model, Z, y, 3)  # the copy cannot fit 3 rows: no error, nothing fitted
    warm_up(model, Z, y, 0)  # off
    assert len(Spy.seen) == 1


def test_runs_that_differ_only_in_their_model_share_one_fit(results_root):
    """eval.share_fit: the second model loads the first run's fitted map and records its fit time."""
    sel = ["dataset=checkerboard", "dataset.n_train=300", "dataset.n_test=300", "method=rff_selection",
           "method.max_components=60", "method.chunk_size=5", "eval.share_fit=true"]
    svm = run_and_record(compose(sel + ["model=linear_svm"]))
    ls = run_and_record(compose(sel + ["model=ls"]))
    assert "fit_shared_from" not in svm and ls["fit_shared_from"] == f"adhoc-run/{svm['run_id']}"
    assert ls["fitted"]["n_selected"] == svm["fitted"]["n_selected"]
    assert ls["timings"]["fit_s"] == svm["timings"]["fit_s"]  # the selection's own time, not the load's
    assert "fit_load_s" in ls["timings"] and "fit_load_s" not in svm["timings"]
    assert len(list((results_root / "fits").glob("*.joblib"))) == 1
    # the same as fitting afresh: an LS run without sharing has the same selection and accuracy
    alone = run_and_record(compose(sel[:-1] + ["model=ls"]))
    assert alone["fitted"] == ls["fitted"] and alone["metrics"] == ls["metrics"]
    # another seed (or any map setting) is another fit; a damaged file is fitted again
    other = run_and_record(compose(sel + ["model=ls", "seed=1"]))
    assert "fit_shared_from" not in other
    for f in (results_root / "fits").glob("*.joblib"):
        f.write_bytes(b"damaged")
    again = run_and_record(compose(sel + ["model=ls", "force=true"]))
    assert "fit_shared_from" not in again and again["fitted"] == ls["fitted"]
    with pytest.raises(ValueError, match="eval.share_fit must be an instance of 'bool'"):
        from rfrepro.harness.run.validate import check_run_config

        check_run_config(compose(FAST + ["eval.share_fit=3"]))


def test_time_repeats_keeps_each_steps_fastest_and_every_repetition(results_root, monkeypatch):
    from rfrepro.runner import steps

    once = run_and_record(compose(FAST))
    assert "timings_repeats" not in once
    # every timed step takes a known time per repetition (slow, fast, middle): the fastest is kept
    ticks: dict = {}
    durations = [3.0, 1.0, 2.0]  # seconds of the 1st, 2nd and 3rd repetition of every step

    class Fake(dict):
        def __call__(self, key):
            import contextlib

            @contextlib.contextmanager
            def step():
                yield
                rep = ticks.setdefault(key, 0)
                self[key] = self.get(key, 0.0) + durations[rep % 3]
                ticks[key] = rep + 1
            return step()

    monkeypatch.setattr(steps, "Timer", Fake)
    rec = run_and_record(compose(FAST + ["eval.time_repeats=3"]))
    assert rec["status"] == "ok" and rec["run_id"] != once["run_id"]
    assert rec["metrics"] == once["metrics"]  # the scores are those of the first repetition
    reps = rec["timings_repeats"]
    assert set(reps) == {"fit_s", "transform_train_s", "train_s"}
    for key, values in reps.items():
        assert values == durations, key
        assert rec["timings"][key] == 1.0
    # a budget below the first repetition's 3 x 3 s: timed once; above it: three times, as without one
    ticks.clear()
    once_long = run_and_record(compose(FAST + ["eval.time_repeats=3", "eval.time_repeats_budget_s=8.5"]))
    assert once_long["timings_repeats"] == {k: [3.0] for k in reps} and once_long["timings"]["train_s"] == 3.0
    ticks.clear()
    thrice = run_and_record(compose(FAST + ["eval.time_repeats=3", "eval.time_repeats_budget_s=9.5"]))
    assert thrice["timings_repeats"] == reps
    from rfrepro.harness.run.validate import check_run_config

    with pytest.raises(ValueError, match=r"eval.time_repeats must be an int in the range \[1, inf\), got 0"):
        check_run_config(compose(FAST + ["eval.time_repeats=0"]))
    with pytest.raises(ValueError, match=r"eval.time_repeats_budget_s must be .*got 0"):
        check_run_config(compose(FAST + ["eval.time_repeats_budget_s=0"]))
