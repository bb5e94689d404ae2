"""`python -m rfrepro` (one run or a Hydra multirun) and `python -m rfrepro.report` exit as reproduce does:
0 all finished, 1 a run failed, 2 bad input (one line, nothing runs), 3 runs not run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rfrepro.harness.run.summary import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["dataset.n_train=150", "dataset.n_test=300"]


def _run(args, tmp_path, results=None, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "RFREPRO_MIRROR"}
    env.update(RFREPRO_RESULTS=str(results or tmp_path / "results"), RFREPRO_DATA=str(tmp_path / "data"))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _errors(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("args", [
    ["-m", "rfrepro"],
    ["-m", "rfrepro", "seed=0,1", "-m"],
    ["-m", "rfrepro.report"],
    ["-m", "rfrepro.report", "--smoke"],
])
def test_unwritable_results_path_is_one_line_and_exit_2(tmp_path, args):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = _run(args, tmp_path, results=blocker / "results")
    assert proc.returncode == EXIT_USAGE, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot write results under" in proc.stderr


def test_an_unwritable_results_override_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = _run(["-m", "rfrepro", f"paths.results={blocker}/x"], tmp_path)
    assert proc.returncode == EXIT_USAGE and "Traceback" not in proc.stderr
    assert _errors(proc) == [f"error: cannot write results under '{blocker}/x': Not a directory "
                             "(set RFREPRO_RESULTS or paths.results= to a writable folder)"]


@pytest.mark.parametrize("args, lines", [
    (["seed=abc"], ["seed must be an int in the range [0, inf), got 'abc'"]),
    (["threads=0"], ["threads must be None or an int in the range [1, inf), got 0"]),
    (["dataset.subsample.n_train=-5", "dataset=cpusmall"],
     ["dataset.subsample.n_train must be None or an int in the range [1, inf)"]),
    (["method.n_components=-5"], ["method.n_components must be an int in the range [1, inf), got -5"]),
    (["model.lam=-1"], ["model.lam must be None, a float in the range (0.0, inf) or a str among {'cv'}, got -1"]),
    (["nokey=1"], ["Could not override 'nokey'"]),
    (["seed=0,1"], ["add -m"]),
    (["kernel.sigma=[1"], ["cannot read the override 'kernel.sigma=[1'"]),
    (["seed=abc,1", "-m"], ["got 'abc' (in the run seed=abc)"]),
    (["seed=-1,1,-2", "-m"], ["got -1 (in the run seed=-1)", "got -2 (in the run seed=-2)"]),
])
def test_bad_input_is_one_line_per_bad_run_and_exit_2(tmp_path, args, lines):
    proc = _run(["-m", "rfrepro", *args], tmp_path)
    assert proc.returncode == EXIT_USAGE, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = _errors(proc)
    assert len(errors) == len(lines) == len(proc.stderr.strip().splitlines())
    assert all(want in got for want, got in zip(lines, errors))
    assert not list((tmp_path / "results" / "runs").glob("*/*.json"))  # nothing ran


def test_a_failed_single_run_exits_1(tmp_path):
    proc = _run(["-m", "rfrepro", "model=krr", "model.lam=0.1", *SMALL], tmp_path)  # a regressor on labels
    assert proc.returncode == EXIT_FAILED, proc.stderr[-2000:]
    assert "[failed]" in proc.stdout and len(_errors(proc)) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("launcher", ["basic", "parallel"])
def test_multirun_ends_with_the_summary_and_its_exit_status(tmp_path, launcher):
    args = ["-m", "rfrepro", "model=krr,linear_svm", "model.lam=0.1", *SMALL, "-m"]
    if launcher == "parallel":
        args.insert(-1, "hydra/launcher=parallel")
    proc = _run(args, tmp_path)
    assert proc.returncode == EXIT_FAILED, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert "[ok]" in proc.stdout and "[failed]" in proc.stdout
    assert "adhoc/run: 2 runs: 1 failed, 1 ok" in proc.stdout
    failed = [line for line in proc.stderr.splitlines() if line.startswith("  FAILED")]
    assert len(failed) == 1 and "rks_cos+krr" in failed[0] and "ValueError" in failed[0]
    record = failed[0].split("traceback in ")[1].rstrip(")")
    assert json.loads(Path(record).read_text())["status"] == "failed"


def test_runs_not_run_exit_3_in_a_single_run_and_a_multirun(tmp_path):
    base = ["-m", "rfrepro", "dataset=cpusmall", "model=krr", "mirror=file:///nonexistent-mirror"]
    proc = _run(base, tmp_path)
    assert proc.returncode == EXIT_NOT_RUN, proc.stderr[-2000:]
    assert "[unavailable]" in proc.stdout and "RFREPRO_MIRROR" in proc.stderr
    proc = _run([*base, "seed=0,1", "-m"], tmp_path)
    assert proc.returncode == EXIT_NOT_RUN, proc.stderr[-2000:]
    assert "adhoc/run: 2 runs: 2 unavailable" in proc.stdout and "NOT RUN (2 runs)" in proc.stderr


def _job(status=None, bad=None, n=0):
    result = None if status is None else {"status": status, "arm": "a", "run_id": f"r{n}", "error": "boom",
                                          "error_type": "ValueError"}
    return {"job": n, "study": "x/y", "results": "res", "result": result, "bad_input": bad}


def test_multirun_exit_status_rules(capsys):
    from rfrepro.harness.multirun import multirun_summary

    assert multirun_summary([_job("ok"), _job("ok", n=1)], expected=2) == EXIT_OK
    assert "x/y: 2 runs: 2 ok" in capsys.readouterr().out
    assert multirun_summary([_job("ok"), _job("unavailable", n=1)]) == EXIT_NOT_RUN
    assert multirun_summary([_job("failed"), _job("unavailable", n=1)]) == EXIT_FAILED
    assert "FAILED a r0: ValueError boom (traceback in res/runs/x-y/r0.json)" in capsys.readouterr().err
    assert multirun_summary([_job("failed"), _job(bad="bad config: seed", n=1)]) == EXIT_USAGE
    # a job that left no result (its process killed) is not a success
    assert multirun_summary([_job("ok")], expected=2) == EXIT_FAILED
    assert "1 of 2 jobs left no result" in capsys.readouterr().err
