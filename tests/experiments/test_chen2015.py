"""Chen et al. (2015) study code on small hand-made tables: verdicts, slopes, substitute labels."""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest

from rfrepro.results.outputs import study_module

# imported the way the harness imports a study (the experiments/ folder is not a package on the path)
fig1 = study_module("chen2015/fig1")
fig2 = study_module("chen2015/fig2")
fig3 = study_module("chen2015/fig3")
table1 = study_module("chen2015/table1")
common = sys.modules["experiments.chen2015.common"]

ARMS = ("rks", "tefm_g", "tefm_s", "comp", "quasi", "ffood")


def _kernel_table(factor: dict[str, float], datasets=("cpu", "a9a"), ls=(50, 100, 200), seeds=(0, 1)):
    """Kernel errors err = factor[arm] / sqrt(l) (+ a tiny seed wobble)."""
    rows = []
    for name in datasets:
        for arm in ARMS:
            for ell in ls:
                for s in seeds:
                    e = factor[arm] / math.sqrt(ell) * (1 + 0.01 * s)
                    rows.append({"status": "ok", "dataset.name": name, "dataset.variant":
                                 "cpuact" if name == "cpu" else name, "arm": arm, "seed": s,
                                 "fitted.n_features_out": ell, "metrics.kerr_spec": e, "metrics.kerr_fro": 1.2 * e,
                                 "dataset.n_train": 500, "dataset.d": 21, "eval.kernel_error_points": 500})
    return pd.DataFrame(rows)


def _unavailable(name: str) -> pd.DataFrame:
    return pd.DataFrame([{"status": "unavailable", "dataset.name": name, "arm": a, "seed": 0} for a in ARMS])


def _verdicts(claims: list[dict]) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in claims}


GOOD = {"rks": 1.0, "tefm_g": 0.4, "tefm_s": 0.45, "comp": 1.3, "quasi": 0.9, "ffood": 1.1}


def test_loglog_slope_recovers_exponent():
    x = np.array([1000, 2000, 4000, 8000])
    assert common.loglog_slope(x, 3e-9 * x**3) == pytest.approx(3.0)
    assert math.isnan(common.loglog_slope([5, 5], [1, 2]))


def test_features_to_reach_interpolates_in_log_l():
    curve = pd.Series([0.4, 0.2, 0.1], index=[50, 100, 200])
    assert common.features_to_reach(curve, 0.3) == pytest.approx(math.sqrt(50 * 100))
    assert common.features_to_reach(curve, 0.5) == 50
    assert common.features_to_reach(curve, 0.05) == math.inf


def test_substitute_label_marks_everything_but_slice():
    assert common.substitute_label("blogfeedback") == "BlogFeedback (substitute for Slice Localization)"
    assert "substitute" not in common.substitute_label("slice")
    assert common.display_name("cpu", "cpuact") == "Cpu [cpuact loaded]"


def test_fig1_claims_pass_when_tefm_halves_the_error():
    v = _verdicts(fig1.claims(_kernel_table(GOOD)))
    assert v == {"C1.1": "pass", "C1.2": "pass", "C1.3-accuracy": "pass"}


def test_fig1_claims_fail_with_the_measured_ratio():
    bad = {**GOOD, "tefm_g": 0.95, "tefm_s": 0.9, "comp": 0.8}   # Comp best, G worse than S
    claims = fig1.claims(_kernel_table(bad))
    v = _verdicts(claims)
    assert v == {"C1.1": "fail", "C1.2": "fail", "C1.3-accuracy": "fail"}
    c11 = next(c for c in claims if c["id"] == "C1.1")
    assert c11["measured"]["spectral_ratio_geomean_over_l"]["cpu"]["tefm_g/rks"] == pytest.approx(0.95, abs=1e-3)
    assert c11["measured"]["worst_ratio_by_dataset"]["a9a"] == pytest.approx(0.95 / 0.8, abs=1e-3)


def test_fig1_unavailable_dataset_is_named_and_only_unavailable_is_not_run():
    t = pd.concat([_kernel_table(GOOD), _unavailable("slice")], ignore_index=True)
    c11 = next(c for c in fig1.claims(t) if c["id"] == "C1.1")
    assert c11["verdict"] == "pass" and "slice" in c11["note"]
    assert set(_verdicts(fig1.claims(_unavailable("slice"))).values()) == {"not-run"}
    fig1.figure(t)   # draws the not-run panel without raising


def _krr_table(rmse: dict[str, list[float]], times: dict[str, list[float]], name="blogfeedback"):
    rows = []
    for arm in rmse:
        for ell, r, tt in zip((50, 100, 200), rmse[arm], times[arm]):
            rows.append({"status": "ok", "dataset.name": name, "dataset.variant": name, "arm": arm, "seed": 0,
                         "fitted.n_features_out": ell, "metrics.rel_rmse": r, "timings.map_fit_s": tt / 2,
                         "timings.map_transform_s": 0.0, "timings.train_s": tt / 2, "dataset.n_train": 1000,
                         "dataset.n_test": 100, "dataset.d": 280, "cv.sigma": 16.0, "cv.lam": 10.0,
                         "cv.sigma_rule_value": 16.0})
    return pd.DataFrame(rows)


RMSE_GOOD = {"rks": [0.9, 0.8, 0.7], "comp": [0.95, 0.85, 0.75], "quasi": [0.9, 0.8, 0.72],
             "ffood": [0.92, 0.82, 0.71], "tefm_g": [0.75, 0.65, 0.6], "tefm_s": [0.78, 0.68, 0.62]}
TIME = {a: [0.1, 0.3, 1.0] for a in RMSE_GOOD}


def test_fig2_feature_claim_on_substitute_is_labelled():
    t = pd.concat([_krr_table(RMSE_GOOD, TIME), _unavailable("slice")], ignore_index=True)
    claims = fig2.claims(t)
    sub = [c for c in claims if c["verdict"] != "not-run"]
    assert [c["verdict"] for c in sub] == ["pass"]
    assert "substitute for Slice Localization" in sub[0]["statement"]
    assert sub[0]["measured"]["l_needed_over_l_by_target"]["tefm_g"][200] < 1
    assert any(c["verdict"] == "not-run" and "Slice" in c["note"] for c in claims)
    assert "lambda = 10" in fig2.summary(t)


def test_fig2_feature_claim_fails_when_tefm_is_worse():
    worse = {**RMSE_GOOD, "tefm_g": [0.99, 0.95, 0.9], "tefm_s": [0.99, 0.96, 0.92]}
    c = fig2.claims(_krr_table(worse, TIME))[0]
    assert c["verdict"] == "fail" and c["measured"]["geomean_ratio"]["tefm_g"] == math.inf


def test_fig3_time_claim_uses_time_to_reach_small_targets():
    fast = {**TIME, "tefm_g": [0.05, 0.1, 0.2], "tefm_s": [0.04, 0.08, 0.15]}
    c = fig3.claims(_krr_table(RMSE_GOOD, fast))[0]
    assert c["verdict"] == "pass"
    slow = {**TIME, "tefm_g": [5.0, 6.0, 7.0]}
    c = fig3.claims(_krr_table(RMSE_GOOD, slow))[0]
    assert c["verdict"] == "fail"
    p = fig3.points(_krr_table(RMSE_GOOD, TIME))
    assert fig3.time_to_reach(p, "rks", 0.8) == pytest.approx(0.3)
    assert fig3.time_to_reach(p, "rks", 0.1) == math.inf


def _timing_table(tefm_s_factor: float = 0.5):
    """Times that follow Table 1 exactly: exact map n^2, train n^3; RKS map n l, train n l^2; ..."""
    rows = []

    def add(method, n, ell, map_s, train_s):
        for s in (0, 1, 2):
            rows.append({"status": "ok", "method.name": method, "dataset.name": "cadata", "seed": s,
                         "dataset.n_train": n, "method.n_components": ell, "timings.map_fit_s": map_s,
                         "timings.map_transform_s": 0.0, "timings.train_s": train_s})
    for n in (1000, 2000, 4000, 8000):
        add("exact", n, None, 1e-8 * n**2, 1e-10 * n**3)
    for method, f in (("rks_cos", 1.0), ("tefm_g", 2.0), ("tefm_s", 2.0 * tefm_s_factor)):
        for n in (1000, 2000, 4000, 8000):
            add(method, n, 200, f * 1e-7 * n * 200 * (1 if method == "rks_cos" else 200 / 50), 1e-9 * n * 200**2)
        for ell in (50, 100, 200, 400, 800):
            add(method, 8000, ell, f * 1e-7 * 8000 * ell * (1 if method == "rks_cos" else ell / 50),
                1e-9 * 8000 * ell**2)
    return pd.DataFrame(rows)


def test_table1_slopes_and_claims():
    t = _timing_table()
    s = table1.slopes(t)
    assert s[("exact", "train", "n")] == pytest.approx(3.0)
    assert s[("exact", "map", "n")] == pytest.approx(2.0)
    assert s[("tefm_g", "map", "l")] == pytest.approx(2.0)
    assert s[("rks_cos", "train", "l")] == pytest.approx(2.0)
    v = _verdicts(table1.claims(t))
    assert v == {"C1.3-speed": "pass", "T1": "pass"}
    assert _verdicts(table1.claims(_timing_table(tefm_s_factor=1.5)))["C1.3-speed"] == "fail"
    assert "| M1 exact KRR | train | n | O(n^3) | 3 | 3.00 | yes |" in table1.summary(t)
