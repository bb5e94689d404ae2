"""Records are written atomically and flattened into one tidy row per run."""

import json
import os
import stat

import numpy as np
import pytest

from rfrepro.atomic import atomic_write_text
from rfrepro.runner.store import RecordStore, records_to_table


def test_atomic_write_never_leaves_a_half_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    atomic_write_text(target, "old")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write_text(target, "new content")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # temp file removed


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="the umask is read from /proc")
def test_written_files_follow_the_umask_of_the_moment(tmp_path):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        old = os.umask(mask)
        try:
            atomic_write_text(tmp_path / f"{mask:o}.txt", "x")
        finally:
            os.umask(old)
        assert stat.S_IMODE((tmp_path / f"{mask:o}.txt").stat().st_mode) == mode


def test_records_round_trip_and_flatten(tmp_path):
    store = RecordStore(tmp_path, "p-f")
    store.write({"run_id": "b", "status": "ok", "metrics": {"accuracy": np.float64(0.5)},
                 "method": {"n_components": np.int64(3)}, "config": {"x": 1}, "lst": [1, 2]})
    store.write({"run_id": "a", "status": "failed", "metrics": {}, "error": "boom"})
    t = store.table()
    assert list(t["run_id"]) == ["a", "b"]
    assert t.loc[1, "metrics.accuracy"] == 0.5
    assert t.loc[1, "method.n_components"] == 3
    assert "config" not in t.columns  # the full config stays in the record only
    assert json.loads(t.loc[1, "lst"]) == [1, 2]
    assert store.is_finished("b") and not store.is_finished("a")
    t.to_parquet(tmp_path / "t.parquet")  # one type per column


def test_non_finite_metrics_become_null(tmp_path):
    store = RecordStore(tmp_path, "p-f")
    store.write({"run_id": "x", "status": "ok", "metrics": {"rmse": float("nan")}})
    assert json.loads(store.path("x").read_text())["metrics"]["rmse"] is None


def test_empty_table():
    assert records_to_table([]).empty

