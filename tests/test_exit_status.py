"""Exit statuses tell the truth; bad input gets one clear line; no study blocks another."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rfrepro.atomic import atomic_write_text
from rfrepro.harness.run.summary import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, EXIT_USAGE
from rfrepro.runner.store import RecordStore

ROOT = Path(__file__).resolve().parents[1]
N_SMOKE = len(__import__("rfrepro.harness.run.grid", fromlist=["expand"]).expand("sun2018/fig1", smoke=True))
SMALL = ["dataset.n_train=150", "dataset.n_test=300"]


def _run(args, tmp_path, mirror=False, timeout=600):
    env = {k: v for k, v in os.environ.items() if k != "RFREPRO_MIRROR" or mirror}
    env.update(RFREPRO_RESULTS=str(tmp_path / "results"), RFREPRO_DATA=str(tmp_path / "data"))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_reproduce_exits_1_and_names_each_failure(tmp_path):
    # one training row: every run fails inside (the median rule needs two rows), not at validation
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "--jobs", "1", "dataset.n_train=1",
                 "dataset.n_test=300"], tmp_path)
    assert proc.returncode == EXIT_FAILED, proc.stderr[-2000:]
    assert f"{N_SMOKE} failed" in proc.stdout
    failed = [line for line in proc.stderr.splitlines() if line.startswith("  FAILED")]
    assert len(failed) == N_SMOKE
    assert all("ValueError" in line and "sigma" in line and "traceback in" in line for line in failed)
    # the outputs are still built: a not-run figure and not-run claims
    root = tmp_path / "results" / "smoke"
    assert (root / "figures" / "sun2018-fig1.png").is_file()
    assert {c["verdict"] for c in json.loads((root / "claims" / "sun2018-fig1.json").read_text())} == {"not-run"}


def test_hydra_run_that_fails_exits_nonzero(tmp_path):
    # a regressor on class labels passes validation and fails in the run: a failed record, exit 1
    proc = _run(["-m", "rfrepro", "model=krr", "model.lam=0.1", *SMALL], tmp_path)
    assert proc.returncode == EXIT_FAILED
    assert "[failed]" in proc.stdout and "is a regressor" in proc.stderr
    proc = _run(["-m", "rfrepro", "model=krr,linear_svm", "model.lam=0.1", *SMALL, "-m"], tmp_path)
    assert proc.returncode == EXIT_FAILED and "[ok]" in proc.stdout and "[failed]" in proc.stdout


@pytest.mark.parametrize("entry", ["rfrepro", "rfrepro.reproduce"])
@pytest.mark.parametrize("bad, line", [
    ("method.n_components=-5", "method.n_components must be an int in the range [1, inf), got -5"),
    ("method.n_components=0", "method.n_components must be an int in the range [1, inf), got 0"),
    ("model.lam=-1", "model.lam must be None"),  # the KSVM arm's lam: None or > 0; the RFSVM arms' also "cv"
])
def test_a_bad_value_is_refused_before_anything_runs(tmp_path, entry, bad, line):
    # through reproduce, a study whose every arm has the key (Sun's KSVM arm has no n_components)
    study = "sun2018/fig1" if bad.startswith("model.") else "chen2015/fig1"
    args = (["-m", "rfrepro", "experiment=sun2018/fig1", "arm=rfsvm_unif", "method=rks_cossin"]
            if entry == "rfrepro" else ["-m", "rfrepro.reproduce", study, "--smoke"])
    proc = _run([*args, bad, *(SMALL if "sun2018/fig1" in args or entry == "rfrepro" else [])], tmp_path)
    assert proc.returncode == EXIT_USAGE, proc.stderr[-2000:]
    assert len(proc.stderr.strip().splitlines()) == 1 and line in proc.stderr, proc.stderr
    assert f"got {bad.split('=')[1]}" in proc.stderr
    assert not list((tmp_path / "results").rglob("*.json"))  # no record, no plan, nothing ran


def test_an_unknown_key_through_reproduce_is_one_line(tmp_path):
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "no_such_key.x=1"], tmp_path)
    assert proc.returncode == EXIT_USAGE
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: Could not override 'no_such_key.x': unknown key; the config has paths, ")


def test_a_key_no_arm_has_is_one_line_with_a_suggestion(tmp_path):
    # Sun's arms: the RFF ones have method.n_components, the KSVM arm (method=exact) has not; none has the typo
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "method.n_componets=5",
                 f"paths.results={tmp_path / 'out'}"], tmp_path)
    assert proc.returncode == EXIT_USAGE, proc.stderr[-2000:]
    (line,) = proc.stderr.strip().splitlines()
    assert "method.n_componets" in line and "did you mean method.n_components?" in line
    assert "paths.results" not in line
    assert not list((tmp_path / "out").rglob("*.json"))


def test_default_run_is_a_classifier_on_classification_data(tmp_path):
    proc = _run(["-m", "rfrepro", "dataset.n_train=300", "dataset.n_test=2000"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    acc = float(proc.stdout.split("accuracy=")[1].split(",")[0])
    assert 0.6 < acc <= 0.95  # Bayes accuracy of disk/annulus is 0.9


def test_a_regressor_on_labels_is_rejected(tmp_path):
    proc = _run(["-m", "rfrepro", "model=krr", *SMALL], tmp_path)
    assert proc.returncode != 0 and "is a regressor but the dataset is a binary" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["sun2018/fig9"], "did you mean"),
    (["sun2018/fig1", "dataset=disk_anulus"], "did you mean disk_annulus"),
    (["sun2018/fig1", "method=rks_coss"], "did you mean"),
    (["sun2018/fig1", "seed=abc"], "seed must be an int in the range [0, inf), got 'abc'"),
    (["sun2018/fig1", "seed=-1"], "seed must be an int in the range [0, inf), got -1"),
    (["sun2018/fig1", "dataset.n_train=-5"], "dataset.n_train must be None or an int in the range [1, inf), got -5"),
    (["sun2018/fig1", "dataset.n_train=0"], "dataset.n_train must be None or an int in the range [1, inf), got 0"),
    (["sun2018/fig1", "--jobs", "0"], "must be a positive integer"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    proc = _run(["-m", "rfrepro.reproduce", *args, "--smoke"], tmp_path)
    assert proc.returncode == EXIT_USAGE, proc.stderr[-2000:]
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unwritable_results_path_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    env = {**os.environ, "RFREPRO_RESULTS": str(blocker / "results")}
    proc = subprocess.run([sys.executable, "-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == EXIT_USAGE and "cannot write results under" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_subsample_larger_than_the_data_fails_clearly(tmp_path):
    mirror = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    if not mirror.is_dir():
        pytest.skip("needs the offline dataset mirror")
    from rfrepro.harness.run.config import compose
    from rfrepro.runner.record import run_and_record

    cfg = compose(["dataset=cpusmall", "method=rks_cos", "model=krr", "dataset.subsample.n_train=10000000",
                   f"paths.results={tmp_path}", f"paths.data={tmp_path / 'data'}", f"mirror=file://{mirror}"])
    rec = run_and_record(cfg)
    assert rec["status"] == "failed" and "exceeds the" in rec["error"]


def test_unavailable_data_exits_3_with_the_urls_and_both_ways_out(tmp_path):
    proc = _run(["-m", "rfrepro.reproduce", "spine/rff-kernel-approx", "--smoke", "--jobs", "1",
                 "mirror=file:///nonexistent-mirror"], tmp_path)
    assert proc.returncode == EXIT_NOT_RUN, proc.stderr[-3000:]
    assert "unavailable" in proc.stdout
    assert "NOT RUN" in proc.stderr and "www.csie.ntu.edu.tw" in proc.stderr
    assert "RFREPRO_MIRROR" in proc.stderr and "mirror=" in proc.stderr
    root = tmp_path / "results" / "smoke"
    # the study still has its not-run figure and not-run claims, and the report is written
    assert (root / "figures" / "spine-rff-kernel-approx.png").stat().st_size > 1000
    claims = json.loads((root / "claims" / "spine-rff-kernel-approx.json").read_text())
    assert claims and {c["verdict"] for c in claims} == {"not-run"}
    proc = _run(["-m", "rfrepro.report", "--smoke"], tmp_path)
    assert proc.returncode == 0
    assert "Not run, data unavailable" in (root / "REPORT.md").read_text()


def test_exit_code_rules():
    from rfrepro.harness.run.summary import exit_code

    assert exit_code([{"status": "ok"}, {"status": "ok", "_skipped": True}]) == EXIT_OK
    assert exit_code([{"status": "ok"}, {"status": "unavailable"}]) == EXIT_NOT_RUN
    assert exit_code([{"status": "busy"}]) == EXIT_NOT_RUN
    assert exit_code([{"status": "unavailable"}, {"status": "failed"}]) == EXIT_FAILED


def test_records_and_reports_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.json", "{}")
        RecordStore(tmp_path, "x-y").write({"run_id": "r1", "status": "ok"})
    finally:
        os.umask(old)
    for path in (tmp_path / "a.json", tmp_path / "runs" / "x-y" / "r1.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_extra_runs_are_reported_but_not_drawn(tmp_path):
    env_root = tmp_path / "results"
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "--jobs", "1", *SMALL], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # an ad-hoc multirun into the same study folder
    proc = _run(["-m", "rfrepro", "experiment=sun2018/fig1", "method.n_components=3", "seed=0,1", "smoke=true",
                 f"paths.results={env_root / 'smoke'}", *SMALL, "-m"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "--outputs-only", *SMALL], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import pandas as pd

    table = pd.read_parquet(env_root / "smoke" / "tables" / "sun2018-fig1.parquet")
    assert len(table) == N_SMOKE and set(table["method.n_components"].dropna()) == {1}
    status = json.loads((env_root / "smoke" / "tables" / "sun2018-fig1.status.json").read_text())
    assert len(status["extra_runs"]) == 2


def test_hydra_bad_value_is_one_line_without_traceback(tmp_path):
    proc = _run(["-m", "rfrepro", "seed=abc", *SMALL], tmp_path)
    assert proc.returncode == EXIT_USAGE
    assert "seed must be an int in the range [0, inf), got 'abc'" in proc.stderr and "Traceback" not in proc.stderr


def test_a_results_override_gets_the_runs_and_the_outputs(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    proc = _run(["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "--jobs", "1", *SMALL,
                 f"paths.results={elsewhere}"], tmp_path)
    assert proc.returncode == EXIT_OK, proc.stderr[-2000:]
    status = json.loads((elsewhere / "tables" / "sun2018-fig1.status.json").read_text())
    assert status["recorded"] == status["expected_runs"] == N_SMOKE and status["missing"] == 0
    # the grid was changed by key=value overrides: the status (and so the report) says which
    assert status["overrides"][:2] == SMALL
    from rfrepro.harness.report.report import study_section

    assert "**Not the paper's settings:** this study's grid was run with the overrides `dataset.n_train=150`" \
        in study_section("sun2018/fig1", elsewhere)
    assert {c["verdict"] for c in json.loads((elsewhere / "claims" / "sun2018-fig1.json").read_text())} != {"not-run"}
    assert not (tmp_path / "results").exists()  # nothing written to the default root


def test_report_names_runs_refused_by_the_memory_budget(tmp_path):
    import pandas as pd

    from rfrepro.harness.report.report import study_section

    slug = "wu2016-fig5"
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / f"{slug}.json").write_text(json.dumps({"study": "wu2016/fig5", "runs": []}))
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / f"{slug}.status.json").write_text(
        json.dumps({"expected_runs": 3, "counts": {"ok": 1, "refused": 2}}))
    err = "MemoryBudgetExceeded: exact kernel of 60000 training rows needs 26.8 GB, over the budget"
    pd.DataFrame({"run_id": ["a", "b", "c"], "status": ["ok", "refused", "refused"],
                  "error": [None, err, err], "arm": ["rb", "exact", "exact"]}).to_parquet(
        tmp_path / "tables" / f"{slug}.parquet")
    text = study_section("wu2016/fig5", tmp_path)
    assert "1 ok, 2 refused" in text
    assert "Not run, over the memory budget: 2 runs (e.g. `MemoryBudgetExceeded: exact kernel of 60000" in text
    assert "Failed runs" not in text


def test_summary_of_a_killed_worker_points_at_its_record_not_a_traceback():
    from rfrepro.harness.run.summary import summarize

    died = {"status": "failed", "arm": "a", "run_id": "r1", "error_type": "worker died",
            "error": "worker died (TerminatedWorkerError: A worker process was killed), after one retry"}
    raised = {"status": "failed", "arm": "a", "run_id": "r2", "error_type": "ValueError", "error": "bad"}
    lines = summarize("x/y", [died, raised], "res")
    assert "record res/runs/x-y/r1.json; no traceback, the process was killed" in lines[1]
    assert "traceback in res/runs/x-y/r2.json" in lines[2]
