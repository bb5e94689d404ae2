"""The command lines a user types: Hydra multirun (basic and joblib launchers) and the report."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args, results, timeout=300):
    env = {**os.environ, "RFREPRO_RESULTS": str(results)}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _records(results):
    return [json.loads(p.read_text()) for p in (results / "runs" / "sun2018-fig1").glob("*.json")]


@pytest.mark.parametrize("launcher", ["basic", "parallel"])
def test_hydra_multirun_from_the_shell(tmp_path, launcher):
    args = ["-m", "rfrepro", "experiment=sun2018/fig1", "method.n_components=1,3", "seed=0,1",
            "dataset.n_train=200", "dataset.n_test=500", "-m"]
    if launcher == "parallel":
        args.insert(-1, "hydra/launcher=parallel")
    proc = _run(args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the multirun ends with reproduce's summary, whichever process ran the jobs
    assert "sun2018/fig1: 4 runs: 4 ok" in proc.stdout
    recs = _records(tmp_path)
    assert len(recs) == 4
    assert {(r["method"]["n_components"], r["seed"]) for r in recs} == {(1, 0), (1, 1), (3, 0), (3, 1)}
    assert {r["status"] for r in recs} == {"ok"}
    assert {r["arm"] for r in recs} == {"rfsvm_unif"}
    if launcher == "parallel":
        # 2 jobs on this machine's cores: each limited to cores // 2 BLAS threads
        assert {r["config"]["threads"] for r in recs} == {max(1, (os.cpu_count() or 1) // 2)}


def test_unknown_names_exit_with_a_clear_message(tmp_path):
    proc = _run(["-m", "rfrepro", "dataset=nope"], tmp_path)
    assert proc.returncode == 2
    assert "unknown dataset 'nope'" in proc.stderr and "disk_annulus" in proc.stderr
    proc = _run(["-m", "rfrepro.reproduce", "nope-fig1"], tmp_path)
    assert proc.returncode == 2 and "unknown experiment 'nope-fig1'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1  # one line, no traceback


def test_report_without_runs(tmp_path):
    proc = _run(["-m", "rfrepro.report"], tmp_path)
    assert proc.returncode == 0
    text = (tmp_path / "REPORT.md").read_text()
    # every study is listed, each saying it has not run
    assert "sun2018/fig1" in text and "Not run yet" in text
    assert "## What reproduced" in text.split("## Contents")[0]


def test_help_says_what_the_command_does_and_lists_user_facing_configs(tmp_path):
    proc = _run(["-m", "rfrepro", "--help"], tmp_path)
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("usage: python -m rfrepro") and "powered by Hydra" not in out
    assert "python -m rfrepro.reproduce" in out and "Exit status: 0" in out and "2 bad input" in out
    assert "sun2018/fig1" in out and "rks_cos" in out and "_base" not in out and "_arms" not in out


def test_an_ad_hoc_run_prints_where_its_record_went(tmp_path):
    proc = _run(["-m", "rfrepro", "dataset.n_train=200", "dataset.n_test=300"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("[ok] adhoc/run"))
    record = Path(line.split("(record: ")[1].rstrip(")"))
    assert record.parent == tmp_path / "runs" / "adhoc-run" and json.loads(record.read_text())["status"] == "ok"
