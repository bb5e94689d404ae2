"""The console summary of a sweep: counts, failures with their record path, and the way out for missing data."""

from __future__ import annotations

from rfrepro.harness.run.summary import MIRROR_HELP, run_row, summarize


def _unavailable(mirror: str | None) -> dict:
    return run_row({"status": "unavailable", "arm": "rks", "run_id": "r1", "dataset": {"name": "covtype"},
                    "urls_tried": ["https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/covtype.bz2"],
                    "config": {"mirror": mirror}})


def test_without_a_mirror_the_hint_says_how_to_set_one():
    lines = summarize("wu2016/fig5", [_unavailable(None)], "res")
    assert lines[-1].strip() == MIRROR_HELP
    assert "NOT RUN (1 runs): dataset covtype unavailable; URLs tried: https://www.csie" in lines[1]


def test_with_a_mirror_the_hint_names_the_mirror_that_lacks_the_file():
    lines = summarize("wu2016/fig5", [_unavailable("file:///srv/mirror")], "res")
    assert "export RFREPRO_MIRROR" not in lines[-1]
    assert "not in the mirror that was tried (file:///srv/mirror)" in lines[-1]


def test_a_failure_names_its_record_under_the_results_layout():
    failed = run_row({"status": "failed", "arm": "a", "run_id": "abc", "error": "ValueError: bad\ntrace",
                      "error_type": "ValueError"})
    lines = summarize("sun2018/fig1", [failed], "res")
    assert lines[0] == "sun2018/fig1: 1 runs: 1 failed"
    assert lines[1].endswith("(traceback in res/runs/sun2018-fig1/abc.json)")
