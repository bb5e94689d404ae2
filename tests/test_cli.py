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


#: a user's own map that declares no _parameter_constraints (it checks n_components in fit)
USER_MAP = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class MyMap(TransformerMixin, BaseEstimator):
    def __init__(self, n_components=10, kernel="gaussian", sigma=1.0, variant="cos", random_state=None):
        self.n_components, self.kernel, self.sigma = n_components, kernel, sigma
        self.variant, self.random_state = variant, random_state

    def fit(self, X, y=None):
        if self.n_components < 1:
            raise ValueError(f"n_components must be positive, got {self.n_components}")
        self.W_ = np.random.default_rng(self.random_state).standard_normal((X.shape[1], self.n_components))
        return self

    def transform(self, X):
        return np.cos(X @ self.W_ / self.sigma)
'''


def _bad_input(proc, results, line):
    """Exit 2, exactly one stderr line, and nothing under the results folder but the empty runs/ probe."""
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [line]
    written = [p for p in results.rglob("*") if p.is_file()] if results.exists() else []
    assert not written and not list(results.rglob("plans"))


@pytest.mark.parametrize("args, line", [
    (["-m", "rfrepro", "method.n_componets=512"],
     "error: bad config: Could not override 'method.n_componets': unknown key; did you mean method.n_components?"),
    (["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "method.n_componets=512"],
     "error: Could not override 'method.n_componets': unknown key; did you mean method.n_components?"),
    # an arm of Sun Fig. 1 uses method=exact (no n_components): the value is named, not "use +key"
    (["-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "method.n_components=-5"],
     "error: method.n_components must be an int in the range [1, inf), got -5 "
     "(the override method.n_components=-5, in the arm rfsvm_unif)"),
    (["-m", "rfrepro", "dataset=cpusmall,a9a", "-m"],
     "error: the datasets mix tasks (a9a: binary, cpusmall: regression) and the default model follows the "
     "task (krr for regression, linear_svm otherwise): give model= or run them apart"),
])
def test_a_newcomers_mistake_is_one_line_and_exit_2_before_anything_runs(tmp_path, args, line):
    results = tmp_path / "results"
    _bad_input(_run(args, results), results, line)


def test_a_bad_value_for_a_map_without_constraints_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "mymaps.py").write_text(USER_MAP)
    results = tmp_path / "results"
    env = {**os.environ, "RFREPRO_RESULTS": str(results), "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "rfrepro", "method._target_=mymaps.MyMap",
                           "method.n_components=-5"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    _bad_input(proc, results, "error: bad config: method.n_components=-5: MyMap rejected it: "
                              "ValueError: n_components must be positive, got -5")


@pytest.mark.parametrize("args, model", [
    (["dataset=cpusmall"], "krr"),                      # regression: ridge on the features
    (["dataset=a9a"], "linear_svm"),                    # classification: the linear SVM
    (["dataset=cpusmall", "model=cg_ridge"], "cg_ridge"),  # a model= given wins
    (["experiment=chen2015/fig2"], "krr"),              # a study keeps its own model
    (["experiment=sun2018/fig1", "dataset=cpusmall"], "linear_svm"),
])
def test_without_model_the_model_follows_the_datasets_task(tmp_path, args, model):
    results = tmp_path / "results"
    proc = _run(["-m", "rfrepro", *args, "--cfg", "job"], results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"model:\n  name: {model}\n" in proc.stdout
    assert not results.exists()


def test_help_states_the_default_model_rule(tmp_path):
    out = _run(["-m", "rfrepro", "--help"], tmp_path).stdout
    assert ("Without model= (and without experiment=, whose studies set their own) the model\n"
            "follows the dataset's task: model=krr (ridge regression on the features) for a\n"
            "regression dataset, model=linear_svm for a classification one.") in out
    assert 'an unknown key is refused with the closest keys ("did you mean method.n_components?")' in out
