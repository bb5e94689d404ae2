"""Wu et al. (2016) study code on synthetic tables: verdicts (true -> pass, false -> fail, no runs ->
not-run), the speedup and cost statistics, figures with not-run panels, configs with deviations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rfrepro.config import compose
from rfrepro.results.claims import check_claims
from rfrepro.results.outputs import study_module
from rfrepro.runner.sweep import expand

fig3 = study_module("wu2016/fig3")
fig4 = study_module("wu2016/fig4")
fig5 = study_module("wu2016/fig5")
fig6 = study_module("wu2016/fig6")
SEEDS = range(6)
ITEMS = ("fig3", "fig4", "fig5", "fig6")


def _verdicts(claims: list[dict]) -> dict[str, str]:
    check_claims(claims)
    return {c["id"]: c["verdict"] for c in claims}


def _unavailable(name: str) -> dict:
    return {"status": "unavailable", "dataset.name": name, "arm": "rb", "seed": 0}


def _fig3_table(overfit: bool) -> pd.DataFrame:
    """Test error falls as sigma shrinks (D grows) down to sigma = 0.1, then rises if ``overfit``."""
    rng = np.random.RandomState(0)
    rows = []
    for s in SEEDS:
        for sigma in (0.01, 0.1, 1.0, 10.0, 100.0):
            D = 1e6 / sigma
            # U-shaped in log sigma with its minimum at 0.1; flat below it unless overfitting
            test = 0.2 + 0.1 * np.log10(sigma / 0.1) ** 2 if (sigma >= 0.1 or overfit) else 0.2
            train = test - (0.15 if sigma < 0.1 else 0.02)
            rows.append({"status": "ok", "dataset.name": "cadata", "dataset.task": "regression", "arm": "rb",
                         "seed": s, "kernel.sigma": sigma, "fitted.n_features_out": D, "method.n_components": 128,
                         "metrics.error": test + 0.005 * rng.randn(), "metrics.train_error": train,
                         "timings.train_s": 1.0})
    return pd.DataFrame(rows + [_unavailable("census")])


def test_fig3_claims_and_figure():
    v = _verdicts(fig3.claims(_fig3_table(overfit=True)))
    assert v["C5.2-cadata-improves"] == "pass" and v["C5.2-cadata-diverges"] == "pass"
    assert v["C5.2-census-improves"] == "not-run"
    # test error rising with D over the larger sigmas: the claim fails
    t = _fig3_table(overfit=True)
    t["metrics.error"] = 1.0 / t["fitted.n_features_out"] ** -0.1
    assert _verdicts(fig3.claims(t))["C5.2-cadata-improves"] == "fail"
    fig = fig3.figure(_fig3_table(overfit=True))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("data unavailable" in s for s in texts)


def test_fig4_claim_follows_the_trend():
    rows = [{"status": "ok", "dataset.name": "letter_tr", "dataset.task": "multiclass", "arm": "rb", "seed": s,
             "method.n_components": R, "fitted.n_features_out": 100 * R, "kernel.sigma": 0.28,
             "metrics.error": 0.5 / np.sqrt(R) + 0.01 * np.random.RandomState(s).rand(),
             "metrics.train_error": 0.0} for s in SEEDS for R in (1, 4, 16, 64)]
    t = pd.DataFrame(rows)
    assert _verdicts(fig4.claims(t))["C5.2-fig4-letter_tr"] == "pass"
    t["metrics.error"] = 1 - t["metrics.error"]
    assert _verdicts(fig4.claims(t))["C5.2-fig4-letter_tr"] == "fail"
    assert _verdicts(fig4.claims(pd.DataFrame([_unavailable("acoustic")])))["C5.2-fig4-acoustic"] == "not-run"


def _fig5_table(rb_error: float) -> pd.DataFrame:
    rng = np.random.RandomState(1)
    rows = []
    for s in SEEDS:
        for arm, base in (("rb", rb_error), ("rf", 0.4), ("nystrom", 0.35), ("blockdiag", 0.38)):
            for R in (16, 64, 256):
                err = base * (16 / R) ** 0.1 + 0.002 * rng.randn()
                rows.append({"status": "ok", "dataset.name": "cadata", "dataset.task": "regression", "arm": arm,
                             "seed": s, "method.n_components": R if arm != "blockdiag" else np.nan,
                             "model.block_size": R if arm == "blockdiag" else np.nan, "metrics.error": err,
                             "timings.train_s": 0.01 * R * (1 if arm == "rb" else 10),
                             "memory.feature_bytes": 8e3 * R, "fitted.model_kernel_bytes":
                                 8e3 * R if arm == "blockdiag" else np.nan})
        rows.append({"status": "ok", "dataset.name": "cadata", "dataset.task": "regression", "arm": "exact",
                     "seed": s, "metrics.error": 0.2, "timings.train_s": 5.0, "fitted.model_kernel_bytes": 1e9})
    return pd.DataFrame(rows + [_unavailable("mnist")])


def test_fig5_accuracy_and_cost_claims():
    v = _verdicts(fig5.claims(_fig5_table(rb_error=0.2)))
    assert v["C5.1-cadata-accuracy"] == "pass"
    # RB at R = 16 beats every baseline's best (R = 256) error: memory ratio 8e3*256 / 8e3*16 = 16 -> log10 1.2
    assert v["C5.1-cadata-memory"] == "pass" and v["C5.1-cadata-time"] == "pass"
    assert v["C5.1-mnist-accuracy"] == "not-run"
    v = _verdicts(fig5.claims(_fig5_table(rb_error=0.6)))
    assert v["C5.1-cadata-accuracy"] == "fail" and v["C5.1-cadata-memory"] == "fail"


def test_fig5_cost_ratio_is_zero_when_rb_never_reaches_the_baseline():
    t = fig5.with_axes(fig5.finished(_fig5_table(rb_error=0.6)))
    assert np.allclose(fig5.cost_ratios(t, "memory"), 0.0)


def _fig6_table(rb_speed: float, rf_speed: float) -> pd.DataFrame:
    rows = []
    rng = np.random.RandomState(2)
    for s in SEEDS:
        for arm, sp in (("rb_lasso", rb_speed), ("rf_lasso", rf_speed), ("rb_l1svm", rb_speed),
                        ("rf_l1svm", rf_speed)):
            for p in (1, 2):
                t = 10.0 / (sp if p == 2 else 1.0) * (1 + 0.01 * rng.randn())
                rows.append({"status": "ok", "dataset.name": "ijcnn1_val", "dataset.task": "binary", "arm": arm,
                             "seed": s, "model.n_threads": p, "timings.train_s": t,
                             "fitted.n_features_out": 5e5 if arm.startswith("rb") else 128,
                             "fitted.model_nonzero_fraction": 0.1, "fitted.model_objective": 0.01,
                             "fitted.model_n_iter": 50})
    return pd.DataFrame(rows + [_unavailable("covtype")])


def test_fig6_speedup_claims():
    t = _fig6_table(rb_speed=1.9, rf_speed=1.0)
    s = fig6.speedups(fig6.finished(t))
    assert np.allclose(s[s["model.n_threads"] == 1]["speedup"], 1.0)
    v = _verdicts(fig6.claims(t))
    assert v["C5.3-ijcnn1_val-lasso-rb"] == "pass" and v["C5.3-ijcnn1_val-l1svm-vs-rf"] == "pass"
    assert v["C5.3-covtype-lasso-rb"] == "not-run"
    v = _verdicts(fig6.claims(_fig6_table(rb_speed=1.1, rf_speed=1.1)))
    assert v["C5.3-ijcnn1_val-lasso-rb"] == "fail"
    assert "fig6" in fig6.summary(t) or "ijcnn1" in fig6.summary(t)


@pytest.mark.parametrize("item", ITEMS)
def test_all_not_run_when_no_data(item):
    module = study_module(f"wu2016/{item}")
    claims = module.claims(pd.DataFrame([_unavailable("cadata"), _unavailable("mnist")]))
    assert claims and all(c["verdict"] == "not-run" and c["reason"] == "data unavailable" for c in claims)
    check_claims(claims)


@pytest.mark.parametrize("item", ITEMS)
def test_configs_compose_with_deviations_and_smoke_sweeps(item):
    cfg = compose([f"experiment=wu2016/{item}"])
    assert cfg.study.paper == "wu2016" and cfg.kernel.name == "laplacian"
    assert len(cfg.deviations) >= 3 and all({"what", "why", "effect"} <= set(d) for d in cfg.deviations)
    smoke = expand(f"wu2016/{item}", smoke=True)
    assert 0 < len(smoke) < len(expand(f"wu2016/{item}"))


def test_fig6_thread_count_is_part_of_the_run_identity():
    jobs = expand("wu2016/fig6", smoke=True)
    points = {tuple(o for o in j.overrides if o.startswith("model.n_threads")) for j in jobs}
    assert points == {("model.n_threads=1",), ("model.n_threads=2",)}
