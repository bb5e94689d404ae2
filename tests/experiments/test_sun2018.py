"""Sun et al. (2018) study code on hand-made tables: verdicts, lambda windows, bias arms, Fig. 4 rate."""

from __future__ import annotations

import math
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from rfrepro.harness.report.claims import check_claims
from rfrepro.harness.report.outputs import study_module

# imported the way the harness imports a study (the experiments/ folder is not a package on the path)
fig1 = study_module("sun2018/fig1")
appendix = study_module("sun2018/appendix")
fig4 = study_module("sun2018/fig4")
common = sys.modules["experiments.sun2018.common"]

LOG_LAMS = np.arange(-7.0, 1.01, 0.5)  # the studies' 17 lambdas


def _acc(base: float, log_lam: float, peak: float = -3.0) -> float:
    return max(0.5, base - 0.01 * (log_lam - peak) ** 2)


def _accuracy_table(Ns=(1,), seeds=range(10), gain=0.02, bias_gain=None, n_star=0.003) -> pd.DataFrame:
    """KSVM peaks at 0.89; RFSVM unif at 0.80 + n_star N; opt = unif + gain (bias arms: + bias_gain).

    Every unif run has its own noise (sd 0.001), so its paired differences with KSVM and across N vary by seed."""
    rng = np.random.default_rng(0)
    rows = []
    bias_gain = gain if bias_gain is None else bias_gain
    for fam, g in (("", gain), ("_bias", bias_gain)):
        for s in seeds:
            for i, ll in enumerate(LOG_LAMS):
                wobble = 0.002 * (((3 * s + 5 * i) % 7) - 3)  # seed-to-seed noise, shared by the arms
                rows.append({"arm": "ksvm" + fam, "seed": s, "model.lam": 10**ll, "method.n_components": None,
                             "metrics.accuracy": _acc(0.89, ll) + wobble})
                for N in Ns:
                    unif = _acc(0.80 + n_star * N, ll) + wobble + 0.001 * rng.standard_normal()
                    rows.append({"arm": "rfsvm_unif" + fam, "seed": s, "model.lam": 10**ll,
                                 "method.n_components": N, "metrics.accuracy": unif})
                    # opt's own noise, so the paired difference has a spread
                    rows.append({"arm": "rfsvm_opt" + fam, "seed": s, "model.lam": 10**ll, "method.n_components": N,
                                 "metrics.accuracy": unif + g + 0.003 * ((s % 3) - 1)})
    t = pd.DataFrame(rows)
    t["status"] = "ok"
    t["fitted.model_converged"] = True
    t["dataset.n_train"], t["dataset.n_test"] = 1000, 100000
    return t


def _verdicts(claims):
    return {c["id"]: c["verdict"] for c in claims}


def test_fig1_claims_pass_on_a_table_built_true():
    claims = check_claims(fig1.claims(_accuracy_table()))
    v = _verdicts(claims)
    assert v == {"C4.4": "pass", "C4.1": "pass", "C4.2": "pass",
                 "C4.4-bias": "pass", "C4.1-bias": "pass", "C4.2-bias": "pass"}
    assert not any(c.get("deterministic") for c in claims)   # every statistic varies by seed
    c42 = next(c for c in claims if c["id"] == "C4.2")
    assert c42["estimate"] == pytest.approx(0.02 - 0.0003, abs=1e-9)  # gain + mean opt noise
    assert c42["n_seeds"] == 10
    # both arms peak at log10 lambda = -3: the window is the peak and its two neighbours
    assert c42["measured"]["window"] == [-3.5, -3.0, -2.5]
    assert c42["ci_low"] > 0 and c42["threshold"] == 0.0 and c42["side"] == "greater"
    assert "0 of 340 runs unconverged" in c42["reason"]


def test_c42_fails_when_opt_is_worse_and_bias_family_is_judged_separately():
    c = {c["id"]: c for c in check_claims(fig1.claims(_accuracy_table(gain=-0.02, bias_gain=0.02)))}
    assert c["C4.2"]["verdict"] == "fail" and c["C4.2-bias"]["verdict"] == "pass"
    assert c["C4.2"]["fail_kind"] == "disagreement" and c["C4.2"]["evidence"]


def test_c42_is_inconclusive_with_too_few_seeds_or_no_effect():
    assert _verdicts(fig1.claims(_accuracy_table(seeds=[0])))["C4.2"] == "inconclusive"
    assert _verdicts(fig1.claims(_accuracy_table(gain=0.0)))["C4.2"] == "inconclusive"


def test_c42_window_is_near_each_arms_peak_not_the_whole_lambda_range():
    # opt is worse far from the peak (lambda >= 0.1, chance level): the verdict must not see it
    t = _accuracy_table()
    far = (t["arm"] == "rfsvm_opt") & (np.log10(t["model.lam"]) >= -1)
    t.loc[far, "metrics.accuracy"] -= 0.2
    assert _verdicts(fig1.claims(t))["C4.2"] == "pass"
    assert common.near(LOG_LAMS, -3.0) == [-3.5, -3.0, -2.5]
    assert common.near(LOG_LAMS, -7.0) == [-7.0, -6.5]


def test_unconverged_runs_are_excluded_and_counted():
    t = _accuracy_table()
    # opt at its peak lambda: 3 seeds stopped at max_iter with a poor solution
    bad = (t["arm"] == "rfsvm_opt") & np.isclose(np.log10(t["model.lam"]), -3.0) & t["seed"].isin([0, 1, 2])
    t.loc[bad, "metrics.accuracy"] = 0.5
    t.loc[bad, "fitted.model_converged"] = False
    c42 = next(c for c in fig1.claims(t) if c["id"] == "C4.2")
    # a lambda with any unconverged run is not judged (its converged seeds are a selected subset)
    assert c42["verdict"] == "pass" and c42["n_seeds"] == 10
    assert -3.0 not in c42["measured"]["window"] and c42["measured"]["window"]
    assert "3 of 340 runs unconverged (liblinear stopped at max_iter) (log10 lambda -3) excluded" in c42["reason"]
    # the peak is never placed where only the lucky seeds converged
    t2 = _accuracy_table()
    lucky = (t2["arm"] == "ksvm") & np.isclose(np.log10(t2["model.lam"]), -7.0)
    t2.loc[lucky & (t2["seed"] > 0), "fitted.model_converged"] = False
    t2.loc[lucky & (t2["seed"] == 0), "metrics.accuracy"] = 0.95
    c44 = next(c for c in fig1.claims(t2) if c["id"] == "C4.4")
    assert c44["measured"]["log10_lambda"] == -3.0 and c44["n_seeds"] == 10


def test_c44_fails_when_ksvm_peaks_far_below_bayes():
    t = _accuracy_table()
    t.loc[t["arm"] == "ksvm", "metrics.accuracy"] -= 0.1
    c = {c["id"]: c for c in check_claims(fig1.claims(t))}
    assert c["C4.4"]["verdict"] == "fail" and c["C4.4-bias"]["verdict"] == "pass"
    assert c["C4.4"]["fail_kind"] == "disagreement"


def test_c44_uses_the_test_sets_own_bayes_error_when_recorded():
    t = _accuracy_table()
    t["dataset.test_bayes_error"] = 0.0991
    c44 = next(c for c in fig1.claims(t) if c["id"] == "C4.4")
    assert c44["estimate"] == pytest.approx(0.9009 - 0.89, abs=2e-3)
    assert "this test set" in c44["statistic"]


def test_c41_fails_when_rfsvm_beats_ksvm():
    t = _accuracy_table()
    t.loc[t["arm"] == "ksvm", "metrics.accuracy"] -= 0.15
    c = next(c for c in check_claims(fig1.claims(t)) if c["id"] == "C4.1")
    # KSVM 0.74 against unif 0.80 + 0.003 x N = 0.803: a gap of -0.063, varying by seed with unif's own noise
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement" and c["evidence"]
    assert "deterministic" not in c and c["estimate"] == pytest.approx(-0.063, abs=1e-3) and c["ci_high"] < 0


def test_appendix_tests_rise_with_N_and_fig1_does_not():
    claims = check_claims(appendix.claims(_accuracy_table(Ns=(3, 5, 10))))
    v = _verdicts(claims)
    assert v["C4.1-rises"] == "pass" and v["C4.1-rises-bias"] == "pass"
    assert not any(c.get("deterministic") for c in claims)
    assert {"C4.1-N3", "C4.1-N10", "C4.2-N3", "C4.2-N5", "C4.2-N10"} <= set(v)
    assert not any("rises" in k for k in _verdicts(fig1.claims(_accuracy_table())))
    # accuracy falling with N fails the claim
    falling = next(c for c in check_claims(appendix.claims(_accuracy_table(Ns=(3, 5, 10), n_star=-0.003)))
                   if c["id"] == "C4.1-rises")
    # unif at N = 10 is 0.003 x 7 = 0.021 below N = 3, varying by seed with unif's own noise
    assert falling["verdict"] == "fail" and falling["fail_kind"] == "disagreement"
    assert falling["estimate"] == pytest.approx(-0.021, abs=2e-3)


@pytest.mark.parametrize("study", [fig1, appendix])
def test_empty_table_gives_not_run_for_every_claim(study):
    empty = pd.DataFrame(columns=["status", "arm", "seed"])
    claims = check_claims(study.claims(empty))
    assert claims and all(c["verdict"] == "not-run" and c["reason"] for c in claims)
    failed_only = pd.DataFrame([{"status": "failed", "arm": "ksvm", "seed": 0}])
    assert all(c["verdict"] == "not-run" for c in study.claims(failed_only))


def test_figures_draw_every_panel_and_mark_missing_families():
    t = _accuracy_table(seeds=range(3))
    fig = fig1.figure(t)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    plt.close(fig)
    no_bias_only = t[~t["arm"].str.endswith("_bias")]
    fig = appendix.figure(_accuracy_table(Ns=(3, 5, 10), seeds=range(2)).pipe(
        lambda d: d[~d["arm"].str.endswith("_bias")]))
    texts = [tx.get_text() for ax in fig.axes for tx in ax.texts]
    assert sum("not run" in s for s in texts) == 3  # one per N in the bias column
    plt.close(fig)
    assert "RFSVM opt" in fig1.summary(no_bias_only)


# ----------------------------------------------------------------------------- Fig. 4


M_GRID = [100, 316, 1000, 3162, 10000, 31623, 100000, 316228]


def _rate_table(rate_unif=0.5, rate_opt=0.5, factor_opt=0.7, seeds=range(10)) -> pd.DataFrame:
    """Excess risk c m^-rate (per seed wobble) at the lambda with the best validation accuracy."""
    rows = []
    for s in seeds:
        for m in M_GRID:
            for arm, rate, f in (("rfsvm_unif", rate_unif, 1.0), ("rfsvm_opt", rate_opt, factor_opt)):
                for k, lam in enumerate([1e-4, 1e-3, 1e-2]):
                    best = k == 1
                    ex = f * 0.5 * m ** -rate * (1 + 0.05 * ((s * 3 + M_GRID.index(m)) % 5 - 2)) * (1 if best else 1.5)
                    rows.append({"status": "ok", "arm": arm, "seed": s, "dataset.n_train": m, "model.lam": lam,
                                 "method.n_components": int(math.log10(m) ** 2 / 3) + 1,
                                 "metrics.excess_risk": ex, "metrics.val_accuracy": 0.9 - ex + (0 if best else -1e-3),
                                 "fitted.model_converged": True})
    return pd.DataFrame(rows)


def test_fig4_rate_is_the_loglog_slope_and_claims_pass_when_true():
    t = _rate_table()
    sel = fig4.selected(t)
    assert set(sel["model.lam"]) == {1e-3}  # the validation choice
    slopes, dropped = fig4.seed_slopes(sel, "rfsvm_unif")
    assert dropped == 0 and len(slopes) == 10
    assert slopes.mean() == pytest.approx(-0.5, abs=0.02)
    v = _verdicts(check_claims(fig4.claims(t)))
    assert v == {"C4.3-decay-unif": "pass", "C4.3-decay-opt": "pass", "C4.3-opt": "pass"}


def test_fig4_claims_fail_when_false_and_not_run_when_empty():
    c = {c["id"]: c for c in check_claims(fig4.claims(_rate_table(rate_unif=-0.3)))}
    assert c["C4.3-decay-unif"]["verdict"] == "fail" and c["C4.3-decay-opt"]["verdict"] == "pass"
    assert c["C4.3-decay-unif"]["fail_kind"] == "disagreement"
    opt = next(c for c in check_claims(fig4.claims(_rate_table(factor_opt=1.4))) if c["id"] == "C4.3-opt")
    assert opt["verdict"] == "fail" and opt["fail_kind"] == "disagreement"
    assert _verdicts(fig4.claims(_rate_table(seeds=[0])))["C4.3-opt"] == "inconclusive"
    empty = fig4.claims(pd.DataFrame(columns=["status", "arm", "seed"]))
    assert [c["verdict"] for c in empty] == ["not-run"] * 3


def test_fig4_drops_nonpositive_excess_and_unconverged_runs():
    t = _rate_table()
    t.loc[(t["dataset.n_train"] == 316228) & (t["arm"] == "rfsvm_opt"), "metrics.excess_risk"] = -0.0005
    best_unif = (t["arm"] == "rfsvm_unif") & (t["model.lam"] == 1e-3) & (t["dataset.n_train"] == 100)
    t.loc[best_unif, "fitted.model_converged"] = False
    sel = fig4.selected(t)
    assert set(sel.loc[(sel["arm"] == "rfsvm_unif") & (sel["m"] == 100), "model.lam"]) != {1e-3}
    _, dropped = fig4.seed_slopes(sel, "rfsvm_opt")
    assert dropped == 10
    c = {c["id"]: c for c in fig4.claims(t)}
    assert "10 (m, seed) points with excess risk <= 0 dropped" in c["C4.3-decay-opt"]["reason"]
    assert "10 of 240 runs unconverged" in c["C4.3-decay-unif"]["reason"]
    t["dataset.test_bayes_error"] = 0.0995
    fig = fig4.figure(t)
    assert any("this test set" in (line.get_label() or "") for line in fig.axes[0].lines)
    plt.close(fig)


def test_fig4_config_uses_the_authors_feature_rule_and_grid():
    from rfrepro.harness.run.config import compose_cached
    from rfrepro.harness.run.grid import expand

    jobs = expand("sun2018/fig4")
    seen = {}
    for job in jobs:
        m = int(next(o.split("=")[1] for o in job.overrides if o.startswith("dataset.n_train=")))
        if m not in seen:
            cfg = compose_cached(job.overrides)
            seen[m] = (int(cfg.method.n_components), float(cfg.method.get("oversampling", 100)))
    assert sorted(seen) == M_GRID  # m = 10^2 .. 10^5.5 in half decades
    # the authors' N = int(log10(m)^2 / 3) + 1 (LearningRate.py), pool M = 100 N
    assert {m: n for m, (n, _) in seen.items()} == {m: int(math.log10(m) ** 2 / 3) + 1 for m in M_GRID}
    assert len(jobs) == 2 * 8 * 10 * 10


@pytest.mark.parametrize("item", ["fig1", "fig2", "appendix", "fig4"])
def test_every_sun_study_declares_its_deviations(item):
    from rfrepro.harness.run.config import compose

    cfg = compose([f"experiment=sun2018/{item}"])
    devs = cfg.deviations
    assert len(devs) >= 4
    assert all(set(d) == {"what", "why", "effect"} and all(str(d[k]).strip() for k in d) for d in devs)
    assert int(cfg.model.max_iter) == 1_000_000 and list(cfg.sweep.grid.seed) == list(range(10))
