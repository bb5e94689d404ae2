"""The host's peaks (measured once, cached) and each record's transform against them."""

import json

import numpy as np
import pandas as pd
import pytest

from rfrepro.features import RandomFourierFeatures
from rfrepro.harness.run import roofline as hr
from rfrepro.runner.steps import roofline

TINY = {"gemm_size": 32, "copy_mb": 0.25, "repeats": 1}
PEAKS = {"gemm_f32": 2e9, "gemm_f64": 1e9, "bandwidth": 1e8}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RFREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RFREPRO_ROOFLINE", "on")
    return tmp_path / "cache"


def test_host_peaks_are_measured_once_and_cached_per_host(cache, monkeypatch):
    peaks = hr.host_peaks(**TINY)
    assert set(peaks) == {"gemm_f32", "gemm_f64", "bandwidth"} and all(v > 0 for v in peaks.values())
    path = hr.cache_path()
    assert path.parent == cache / "roofline"
    saved = json.loads(path.read_text())
    assert saved["identity"]["cores"] >= 1 and saved["sizes"]["gemm_size"] == 32
    assert {k: saved[k] for k in peaks} == peaks

    def no_measurement(**_):
        raise AssertionError("measured again")

    monkeypatch.setattr(hr, "measure", no_measurement)
    assert hr.host_peaks(**TINY) == peaks  # read back, not measured
    # another host (or BLAS) has another file
    assert hr.cache_path({**hr.host_identity(), "hostname": "elsewhere"}) != path


def test_a_refresh_keeps_the_higher_of_each_peak(cache, monkeypatch):
    monkeypatch.setattr(hr, "measure", lambda **_: {"gemm_f32": 3.0, "gemm_f64": 2.0, "bandwidth": 5.0})
    hr.host_peaks()
    monkeypatch.setattr(hr, "measure", lambda **_: {"gemm_f32": 1.0, "gemm_f64": 4.0, "bandwidth": 5.0})
    assert hr.host_peaks(refresh=True) == {"gemm_f32": 3.0, "gemm_f64": 4.0, "bandwidth": 5.0}


def test_switched_off_or_unreadable_cache(cache, monkeypatch):
    monkeypatch.setenv("RFREPRO_ROOFLINE", "off")
    assert hr.host_peaks(**TINY) is None and not cache.exists()
    monkeypatch.setenv("RFREPRO_ROOFLINE", "on")
    hr.cache_path().parent.mkdir(parents=True)
    hr.cache_path().write_text("{not json")
    assert hr.host_peaks(**TINY)["gemm_f64"] > 0  # measured again, file repaired
    assert json.loads(hr.cache_path().read_text())["gemm_f64"] > 0


def test_the_tiny_measurement_is_fast(cache):
    import time

    t0 = time.perf_counter()
    hr.measure(**TINY)
    assert time.perf_counter() - t0 < 2.0


def _rff(dtype=np.float64):
    X = np.random.RandomState(0).randn(50, 5).astype(dtype)
    return RandomFourierFeatures(8, sigma=1.0, random_state=0).fit(X)


def test_roofline_predicts_from_the_cost_and_the_peak_at_the_dtype():
    fmap = _rff()
    timings = {"transform_train_s": 0.002, "transform_test_s": 0.5, "fit_s": 1.0}
    out = roofline(fmap, {"train": 1000, "test": 100}, timings, np.float64, PEAKS)
    c = fmap.cost(1000)  # 2 * 1000 * 5 * 8 + 40 * 8000 = 400000 flops; 8 * 13048 bytes
    assert c == {"flops": 400_000, "bytes": 8 * (5000 + 40 + 8 + 8000)}
    assert out["host"] == PEAKS and out["dtype"] == "float64" and out["rows"] == 1000
    assert out["flops"] == 400_000 and out["bytes"] == 104_384
    # compute: 400000 / 1e9 = 4e-4 s; memory: 104384 / 1e8 = 1.04e-3 s -> memory bound
    assert out["predicted_s"] == pytest.approx(1.04384e-3)
    assert out["measured_s"] == 0.002 and out["fraction"] == pytest.approx(1.04384e-3 / 0.002)
    test = out["test"]
    assert test["rows"] == 100 and test["predicted_s"] == pytest.approx(8 * (500 + 48 + 800) / 1e8)
    assert test["fraction"] == pytest.approx(test["predicted_s"] / 0.5)
    json.dumps(out)  # plain JSON


def test_roofline_uses_the_float32_peak_and_skips_untimed_transforms():
    fmap = _rff(np.float32)
    out = roofline(fmap, {"train": 10**6, "test": 0}, {"transform_train_s": 1.0}, np.float32,
                   {**PEAKS, "bandwidth": 1e12})
    assert out["predicted_s"] == pytest.approx(4e8 / 2e9)  # compute bound at the float32 peak
    assert "test" not in out
    fitted_together = roofline(fmap, {"train": 100, "test": 10}, {"fit_transform_s": 1.0, "transform_test_s": 0.1},
                               np.float32, PEAKS)
    assert "flops" not in fitted_together and fitted_together["test"]["rows"] == 10
    assert roofline(fmap, {"train": 100}, {"transform_train_s": 1.0}, np.float64, None) is None


FAST = ["experiment=sun2018/fig1", "method.n_components=4", "dataset.n_train=200", "dataset.n_test=300",
        "model.lam=0.01"]


def test_a_run_records_its_roofline(results_root):
    from rfrepro.harness.run.config import compose
    from rfrepro.runner.record import run_and_record
    from rfrepro.runner.store import RecordStore

    rec = run_and_record(compose(FAST), host_peaks=PEAKS)
    stored = json.loads(RecordStore(results_root, "sun2018-fig1").path(rec["run_id"]).read_text())
    r = stored["roofline"]
    assert r["host"] == PEAKS and r["rows"] == 200 and r["test"]["rows"] == 300
    assert r["measured_s"] == stored["timings"]["transform_train_s"]
    assert r["test"]["measured_s"] == stored["timings"]["transform_test_s"]
    assert r["predicted_s"] == pytest.approx(max(r["flops"] / PEAKS["gemm_f64"], r["bytes"] / PEAKS["bandwidth"]))
    assert r["fraction"] == pytest.approx(r["predicted_s"] / r["measured_s"])
    # without peaks (switched off): null, and the run still finishes
    off = run_and_record(compose(FAST + ["force=true"]))
    assert off["status"] == "ok" and off["roofline"] is None


def test_a_kernel_error_run_records_its_kernel_rows_transform(results_root):
    from rfrepro.harness.run.config import compose
    from rfrepro.runner.record import run_and_record

    cfg = compose(FAST + ["eval.kernel_error=true", "eval.kernel_error_points=150", "eval.predict=false",
                          "method=rks_cos", "method.n_components=64"])
    r = run_and_record(cfg, host_peaks=PEAKS)["roofline"]
    assert "flops" not in r and "test" not in r  # neither the training nor the test rows were transformed
    k = r["kernel_rows"]
    # 150 rows of the 2-d disk data, 64 cosines: 2 * 150 * 2 * 64 + 40 * 150 * 64 flops
    assert k["rows"] == 150 and k["flops"] == 2 * 150 * 2 * 64 + 40 * 150 * 64
    assert k["fraction"] == pytest.approx(k["predicted_s"] / k["measured_s"])


def test_report_table_per_method_and_nothing_for_records_without_roofline(tmp_path):
    from rfrepro.harness.report.report import roofline_lines
    from rfrepro.harness.report.scorecard import roofline_rows
    from rfrepro.runner.store import records_to_table

    recs = [{"run_id": f"r{i}", "status": "ok", "method": {"name": m},
             "roofline": {"host": PEAKS, "predicted_s": p, "measured_s": 1.0, "fraction": p,
                          "test": {"predicted_s": 0.1, "measured_s": 0.2, "fraction": 0.5}}}
            for i, (m, p) in enumerate([("rks", 0.2), ("rks", 0.4), ("rks", 0.9), ("fastfood", 0.05)])]
    recs += [{"run_id": "old", "status": "ok", "method": {"name": "nystroem"}},
             {"run_id": "fit_transform", "status": "ok", "method": {"name": "tefm_g"},
              "roofline": {"host": PEAKS, "test": {"predicted_s": 0.1, "measured_s": 0.4, "fraction": 0.25}}},
             {"run_id": "off", "status": "ok", "method": {"name": "rks"}, "roofline": None},
             {"run_id": "kerr", "status": "ok", "method": {"name": "quasi"},
              "roofline": {"host": PEAKS, "kernel_rows": {"predicted_s": 0.1, "measured_s": 0.1, "fraction": 1.0}}}]
    rows = roofline_rows(records_to_table(recs))
    assert [(r["method"], r["split"], r["runs"]) for r in rows] == [
        ("fastfood", "train", 1), ("quasi", "kernel_rows", 1), ("rks", "train", 3), ("tefm_g", "test", 1)]
    rks = rows[2]
    assert rks["fraction"] == pytest.approx(0.4) and rks["predicted_s"] == pytest.approx(0.4)
    lines = roofline_lines(rows)
    assert lines[2].startswith("| method |") and "| rks | train | 3 | 0.4 | 1 | 40.0% |" in lines
    # references and older records carry no roofline: no rows, no lines
    old = records_to_table([{"run_id": "a", "status": "ok", "method": {"name": "rks"}, "timings": {"fit_s": 1.0}}])
    assert roofline_rows(old) == [] and roofline_lines([]) == []
    assert roofline_rows(pd.DataFrame()) == [] and roofline_rows(None) == []


def test_reference_results_render_with_or_without_a_roofline():
    from pathlib import Path

    from rfrepro.harness.report.report import study_section
    from rfrepro.harness.report.scorecard import load_study

    root = Path(__file__).resolve().parents[3] / "results" / "reference"
    for table in sorted((root / "tables").glob("*.parquet")):
        s = load_study(table.stem.replace("-", "/", 1), root)
        t = pd.read_parquet(table)
        has = any(c.startswith("roofline.") and c.endswith("fraction") and t[c].notna().any() for c in t.columns)
        assert bool(s.roofline) == has, table.stem
        assert ("roofline" in study_section(s, root)) == has, table.stem
        # nothing runs faster than the machine's peak: such runs (cached transforms) are left out
        assert all(r["fraction"] is None or r["fraction"] <= 1.0 for r in s.roofline), table.stem


def test_runs_faster_than_the_peak_are_left_out_and_counted():
    from rfrepro.harness.report.report import roofline_lines
    from rfrepro.harness.report.scorecard import roofline_rows
    from rfrepro.runner.store import records_to_table

    recs = [{"run_id": f"r{i}", "status": "ok", "method": {"name": m},
             "roofline": {"host": PEAKS, "predicted_s": p, "measured_s": 0.1, "fraction": p / 0.1}}
            for i, (m, p) in enumerate([("rks", 0.02), ("rks", 0.04), ("rks", 0.5), ("exact", 0.4)])]
    rows = roofline_rows(records_to_table(recs))
    assert [(r["method"], r["runs"], r["above_peak"]) for r in rows] == [("exact", 0, 1), ("rks", 2, 1)]
    assert rows[0]["fraction"] is None and rows[1]["fraction"] == pytest.approx(0.3)
    lines = roofline_lines(rows)
    assert "| exact | train | 0 | | | n/a: all 1 runs faster than the peak allows (a cached transform) |" in lines
    assert "| rks | train | 2 | 0.03 | 0.1 | 30.0% (1 cached runs left out) |" in lines
