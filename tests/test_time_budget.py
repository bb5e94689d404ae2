"""scripts/time_budget.py adds up the runs' own timings per study, arm and phase (docs/performance.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tb():
    spec = importlib.util.spec_from_file_location("time_budget", ROOT / "scripts" / "time_budget.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _results(tmp_path: Path) -> Path:
    (tmp_path / "tables").mkdir(parents=True)
    (tmp_path / "provenance").mkdir()
    a = pd.DataFrame({
        "run_id": ["a1", "a2", "a3"], "status": ["ok", "ok", "failed"], "arm": ["x", "y", "x"],
        "compute_id": ["c1", "c2", "c3"],
        "timings.load_s": [1.0, 1.0, 9.0], "timings.fit_s": [2.0, 0.0, 9.0],
        "timings.transform_train_s": [3.0, 0.0, 9.0], "timings.fit_transform_s": [None, 4.0, None],
        "timings.train_s": [4.0, 4.0, 9.0], "timings.kernel_error_s": [5.0, None, None],
        "timings.transform_kernel_rows_s": [2.0, None, None],
        # repeated timings: 3 repetitions of the training, the fastest (4 s) is timings.train_s
        "timings_repeats.train_s": [json.dumps([5.0, 4.0, 6.0]), None, None],
        "timings.total_s": [30.0, 10.0, 99.0]})
    a.to_parquet(tmp_path / "tables" / "p-a.parquet")
    (tmp_path / "provenance" / "p-a.json").write_text(json.dumps({"wall_s": 30.0}))
    # a second study that reused run c1 (the same computation)
    a.iloc[[0]].assign(run_id="b1").to_parquet(tmp_path / "tables" / "p-b.parquet")
    return tmp_path


def test_phases_add_up_to_each_runs_total_and_shared_computations_count_once(tb, tmp_path):
    studies, arms = tb.budget(_results(tmp_path))
    a = studies.set_index("study").loc["p-a"]
    assert a["runs"] == 2 and a["wall_s"] == 30.0 and a["total"] == 40.0   # the failed run is left out
    assert (a["load"], a["fit"], a["train"]) == (2.0, 2.0, 8.0)
    assert a["transform"] == 3.0 + 4.0 + 2.0          # training rows, fit_transform, the kernel-error rows
    assert a["kernel ref"] == 5.0 - 2.0                # the kernel-error rows' transform counted once
    assert a["repeats"] == 5.0 + 6.0                   # beyond the fastest of three
    assert a["other"] == 40.0 - (2 + 2 + 9 + 8 + 3 + 11)
    assert sum(a[n] for n in tb.NAMES) == pytest.approx(a["total"])
    every = studies.set_index("study").loc["all"]
    assert every["runs"] == 2 and every["total"] == 40.0 and pd.isna(every["wall_s"])
    assert arms.set_index(["study", "arm"]).loc[("p-a", "x"), "compute_s"] == 30.0


def test_the_tables_are_written_between_the_markers_of_a_document(tb, tmp_path, capsys):
    results = _results(tmp_path / "r")
    doc = tmp_path / "perf.md"
    doc.write_text(f"# head\n{tb.BEGIN}\nold\n{tb.END}\ntail\n")
    assert tb.main(["--results", str(results), "--write", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and text.startswith("# head\n") and text.endswith(f"{tb.END}\ntail\n")
    assert "| p-a | 2 | 30 | 40 |" in text and "| p-a | 2 | 30 | 40 |" in capsys.readouterr().out
    assert tb.main(["--results", str(tmp_path / "nowhere")]) == 2


def test_a_pattern_keeps_its_studies_and_the_floor_line_divides_their_compute_by_the_cores(tb, tmp_path, capsys):
    results = _results(tmp_path)
    studies, _ = tb.budget(results, "p-b")
    assert list(studies["study"]) == ["p-b", "all"] and studies["total"].tolist() == [30.0, 30.0]
    assert tb.main(["--results", str(results), "--studies", "p-a", "--cores", "4"]) == 0
    out = capsys.readouterr().out
    assert "| p-b |" not in out
    assert "(repeats, 28%) cost nothing.\n" in out   # p-a's largest phase: 11 of 40 s
    assert out.endswith("Per paper, at least: p 0 min; make reproduce-all's studies 0 min.\n")  # 40 s, 4 cores
    # 2 h of compute, 80 min of it training: 60 min on 2 cores, 20 min without the training
    row = {"study": "all", "total": 7200.0, **{n: 0.0 for n in tb.NAMES}, "train": 4800.0, "fit": 1200.0}
    assert tb.floor(pd.DataFrame([row]), 2) == ("On 2 cores this compute needs at least 60 min of wall time; "
                                               "at least 20 min if its largest phase (train, 67%) cost nothing.")
    assert tb.floor(pd.DataFrame([row]), 1).startswith("On 1 core this compute needs at least 120 min")
    assert tb.main(["--results", str(results), "--studies", "q-*"]) == 2
    assert "matching 'q-*'" in capsys.readouterr().err
    assert tb.main(["--results", str(results), "--cores", "0"]) == 2


def test_the_per_paper_line_counts_a_shared_computation_once_and_a_timed_study_on_one_core(tb, tmp_path, capsys):
    results = _results(tmp_path)
    # q-c: another paper's study: p-a's run c1 (30 s) again and a run of its own (7200 s)
    pd.DataFrame({"run_id": ["c0", "c1"], "status": ["ok", "ok"], "arm": ["z", "z"], "compute_id": ["c1", "c9"],
                  "timings.total_s": [30.0, 7200.0]}).to_parquet(results / "tables" / "q-c.parquet")
    per_paper = tb.study_compute(results)
    assert per_paper.set_index("study")["compute_s"].to_dict() == {"p-a": 40.0, "p-b": 0.0, "q-c": 7230.0}
    assert per_paper["paper"].tolist() == ["p", "p", "q"]
    together = tb.study_compute(results, papers=["p", "q"])   # c1 counts once, in p-a
    assert together.set_index("study")["compute_s"].to_dict() == {"p-a": 40.0, "p-b": 0.0, "q-c": 7200.0}
    assert tb.study_compute(results, papers=["q"])["compute_s"].tolist() == [7230.0]
    assert tb.study_compute(results, "q-*")["study"].tolist() == ["q-c"]
    # on 2 cores: q-c alone 60 min; timed (one run at a time) 120 min, all of it on one core
    assert tb.least_wall_s(together, 2, {}) == (3620.0, 0.0)
    assert tb.least_wall_s(together, 2, {"q-c": 1}) == (7220.0, 7200.0)
    assert tb.least_wall_s(together, 1, {"q-c": 1}) == (7240.0, 0.0)   # one core: nothing apart
    assert tb.paper_floor(per_paper, 2, {"q-c": 1}, together=together) == (
        "Per paper, at least: p 0 min, q 120 min (120 of them one run at a time); "
        "make reproduce-all's studies 120 min (120 one run at a time).")
    assert tb.paper_floor(per_paper, 4, {}) == "Per paper, at least: p 0 min, q 30 min."
    # the limit is the study's own config: Wu Fig. 5's runs are timed against each other
    assert (tb.max_jobs("wu2016-fig5"), tb.max_jobs("sun2018-fig1"), tb.max_jobs("p-a")) == (1, None, None)
    assert tb.main(["--results", str(results)]) == 0
    assert capsys.readouterr().out.endswith(
        "cost nothing.\nPer paper, at least: p 0 min, q 60 min; make reproduce-all's studies 60 min.\n")
    # the leaderboard and the spine study are not make reproduce-all's
    (results / "tables" / "q-c.parquet").rename(results / "tables" / "leaderboard-c.parquet")
    assert tb.main(["--results", str(results)]) == 0
    assert capsys.readouterr().out.endswith("leaderboard 60 min, p 0 min; make reproduce-all's studies 0 min.\n")


def test_the_examples_in_the_scripts_docstrings_hold(tb):
    import doctest

    result = doctest.testmod(tb, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0
