"""The cross-paper leaderboard: equal budgets, rank table, Pareto front, cross-paper claims, smoke sweep."""

import json

import numpy as np
import pandas as pd
import pytest

from experiments.leaderboard import common
from experiments.leaderboard.gaussian_classification import claims as classification_claims
from rfrepro.harness.claims import check_claims
from rfrepro.harness.config import compose
from rfrepro.harness.grid import expand
from rfrepro.harness.reproduce import main as reproduce_main
from rfrepro.layout import study_slug
from rfrepro.runner.steps import _build

STUDY = "leaderboard/gaussian-classification"  # its smoke sweep runs on generated data only


def _arm_overrides(arm: str, point: str) -> list[str]:
    job = next(j for j in expand(STUDY) if j.arm == arm and f"lb_D={point}" in j.overrides)
    return [o for o in job.overrides if not o.startswith("dataset=")]


@pytest.mark.parametrize(("arm", "freq"), [("rks_cossin", 128), ("rks_cos", 256), ("tefm_g", 256)])
def test_cossin_map_is_charged_two_columns_per_frequency(arm, freq):
    cfg = compose(_arm_overrides(arm, "d256"))
    assert cfg.method.n_components == freq
    fmap = _build(cfg.method, sigma=1.0)
    fmap.fit(np.random.default_rng(0).standard_normal((300, 5)))
    assert fmap.n_features_out_ == 256  # every arm at d256 hands the model 256 columns


def test_rff_selection_sits_at_its_cap():
    table = pd.DataFrame({"arm": ["rff_selection", "rks_cossin"], "fitted.n_features_out": [180, 256],
                          "method.max_components": [128, np.nan]})
    assert common.budget(table).tolist() == [256.0, 256.0]


def test_pareto_front_of_hand_made_points():
    time = np.array([1.0, 2.0, 3.0, 2.5, 0.5, 3.0])
    error = np.array([0.5, 0.3, 0.1, 0.4, 0.9, 0.2])
    # (2.5, 0.4) is beaten by (2.0, 0.3); (3.0, 0.2) by (3.0, 0.1)
    assert common.pareto_front(time, error).tolist() == [True, True, True, False, True, False]


def _ranked_table(n_seeds=6):
    rows = []
    for seed in range(n_seeds):
        for arm, err in (("a", 0.1), ("b", 0.2), ("c", 0.3)):
            # c beats b on seed 0 only: mean ranks a 1, b 2 + 1/6, c 3 - 1/6
            e = 0.15 if (arm == "c" and seed == 0) else err
            rows.append({"dataset.name": "x", common.BUDGET: 128, "seed": seed, "arm": arm, "metrics.error": e})
    return pd.DataFrame(rows)


def test_rank_table_mean_ranks_interval_and_friedman():
    rt = common.rank_table(_ranked_table(), "metrics.error").set_index("method")
    assert rt["mean_rank"].to_dict() == pytest.approx({"a": 1.0, "b": 2 + 1 / 6, "c": 3 - 1 / 6})
    assert rt.loc["a", ["ci_low", "ci_high"]].tolist() == [1.0, 1.0]
    assert 2.0 <= rt.loc["b", "ci_low"] < rt.loc["b", "ci_high"] <= 3.0
    # Friedman's chi2 = 12 / (n k (k+1)) sum R_j^2 - 3 n (k+1) with rank sums R = 6, 13, 17
    assert rt.attrs["friedman_stat"] == pytest.approx(12 / (6 * 3 * 4) * (36 + 169 + 289) - 3 * 6 * 4)
    assert (rt["blocks"] == 6).all()


def _claim_table(gain: float, noise: float = 0.002) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for D in (128, 256):
        for seed in range(8):
            base = 0.2 + noise * rng.standard_normal()
            for arm, err in (("rff_opt", base - gain), ("orf", base)):
                rows.append({"status": "ok", "dataset.name": "checkerboard", "arm": arm, "seed": seed,
                             "fitted.n_features_out": D, "metrics.error": err, "metrics.kerr_fro": 0.1,
                             "metrics.kerr_spec": 0.1})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("gain", "verdict"), [(0.02, "pass"), (-0.02, "fail"), (0.0, "inconclusive")])
def test_cross_claim_against_a_challenger(gain, verdict):
    out = {c["id"]: c for c in common.cross_claims(_claim_table(gain), ("C4.2",))}
    c = out["X-C4.2-vs-orf"]
    assert c["verdict"] == verdict
    assert c["estimate"] == pytest.approx(-gain, abs=0.002)
    assert c["data"] == {"kind": "generated", "note": "generated data: checkerboard"}
    assert set(c["measured"]["cells"]) == {"checkerboard, D=128", "checkerboard, D=256"}


def test_cross_claims_without_runs_are_not_run_for_every_challenger():
    empty = pd.DataFrame(columns=["status", "arm", "seed", "dataset.name", "fitted.n_features_out"])
    claims = check_claims(classification_claims(empty))
    assert {c["verdict"] for c in claims} == {"not-run"}
    ids = {c["id"] for c in claims}
    assert {"X-C1.1-tefm_g-vs-orf", "X-C1.1-tefm_s-vs-sorf", "X-C3.3-vs-rks_cossin", "X-C4.2-vs-nystrom"} <= ids


@pytest.mark.slow  # 72 runs, about 100 s on 2 cores (the linear SVM's CV dominates)
def test_smoke_sweep_runs_and_judges(results_root):
    code = reproduce_main([STUDY, "--smoke", "--jobs", "1"])
    root = results_root / "smoke"
    slug = study_slug(STUDY)
    table = pd.read_parquet(root / "tables" / f"{slug}.parquet")
    assert code == 0 and set(table["status"]) == {"ok"}
    assert len(table) == 12 * 2 * 3  # arms x D x seeds
    ok = common.prepare(table)
    assert set(ok[common.BUDGET]) == {128.0, 256.0}
    fixed = ok[ok["arm"] != "rff_selection"]
    assert (fixed["fitted.n_features_out"].to_numpy() == fixed[common.BUDGET].to_numpy()).all()
    assert (table["fitted.model_lam"] > 0).all()  # lambda chosen on the training split by every run
    summary = (root / "tables" / f"{slug}.md").read_text()
    assert sum(line.startswith("| TEFM-G |") for line in summary.splitlines()) == 2  # two rank tables
    assert "Friedman" in summary and "| X-C4.2 | " in summary  # and the claim x challenger table
    claims = check_claims(json.loads((root / "claims" / f"{slug}.json").read_text()))
    assert len(claims) == 2 * 10 + 4 * 11  # C1.1 (two champions) x 10, C2.2 / C3.2 / C3.3 / C4.2 x 11
