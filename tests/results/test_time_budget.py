"""scripts/time_budget.py adds up the runs' own timings per study, arm and phase (docs/performance.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    assert out.endswith("Per paper, at least: p 0 min.\n")  # p-a's 40 s on 4 cores
    # 2 h of compute, 80 min of it training: 60 min on 2 cores, 20 min without the training
    row = {"study": "all", "total": 7200.0, **{n: 0.0 for n in tb.NAMES}, "train": 4800.0, "fit": 1200.0}
    assert tb.floor(pd.DataFrame([row]), 2) == ("On 2 cores this compute needs at least 60 min of wall time; "
                                               "at least 20 min if its largest phase (train, 67%) cost nothing.")
    assert tb.floor(pd.DataFrame([row]), 1).startswith("On 1 core this compute needs at least 120 min")
    assert tb.main(["--results", str(results), "--studies", "q-*"]) == 2
    assert "matching 'q-*'" in capsys.readouterr().err
    assert tb.main(["--results", str(results), "--cores", "0"]) == 2


def test_the_per_paper_line_counts_a_shared_computation_once_in_its_paper(tb, tmp_path, capsys):
    results = _results(tmp_path)
    # q-c: another paper's study with one run of 60 s
    pd.DataFrame({"run_id": ["c1"], "status": ["ok"], "arm": ["z"], "compute_id": ["c9"],
                  "timings.total_s": [60.0]}).to_parquet(results / "tables" / "q-c.parquet")
    compute = tb.paper_compute(results)
    assert compute.to_dict() == {"p": 40.0, "q": 60.0}     # p-b's run is p-a's c1: counted once
    assert tb.paper_compute(results, "q-*").to_dict() == {"q": 60.0}
    assert tb.paper_floor(compute, 1) == "Per paper, at least: p 1 min, q 1 min."
    assert tb.main(["--results", str(results)]) == 0
    assert capsys.readouterr().out.endswith("cost nothing.\nPer paper, at least: p 0 min, q 0 min.\n")
