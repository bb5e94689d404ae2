"""The cross-paper leaderboard: equal budgets, rank table, Pareto front, cross-paper claims, smoke sweep."""

import importlib
import json

import numpy as np
import pandas as pd
import pytest

from rfrepro.harness.report.claims import by_cause, check_claims
from rfrepro.harness.report.outputs import study_module
from rfrepro.harness.reproduce import main as reproduce_main
from rfrepro.harness.run.arms import kernel_arms
from rfrepro.harness.run.config import compose
from rfrepro.harness.run.grid import expand
from rfrepro.layout import project_root, study_slug
from rfrepro.runner.steps import _build

STUDY = "leaderboard/gaussian-classification"  # its smoke sweep runs on generated data only
# imported as the outputs import it (study_module puts the project root on sys.path, as pytest alone does not)
classification_claims = study_module(STUDY).claims
common = importlib.import_module("experiments.leaderboard.common")


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


@pytest.mark.parametrize("study", ["leaderboard/gaussian-classification", "leaderboard/gaussian-regression"])
def test_gaussian_studies_run_every_budget_of_the_issue(study):
    jobs = expand(study)
    assert {dict(o.split("=", 1) for o in j.overrides if "=" in o)["lb_D"] for j in jobs} == {
        "d128", "d256", "d512", "d1024", "d2048", "d4096"}
    assert len(jobs) == 12 * 2 * 6 * 10  # arms x datasets x D x seeds
    assert {dict(o.split("=", 1) for o in j.overrides if "=" in o)["lb_D"] for j in expand(study, smoke=True)} == {
        "d128", "d256"}


def test_nystrom_with_more_landmarks_than_rows_sits_at_its_budget():
    # at D = 4096 on 2000 training rows Nystrom uses every row: 2000 columns, charged the budget it was given
    table = pd.DataFrame({"arm": ["nystrom", "nystrom", "rks_cos"], "fitted.n_features_out": [2000, 256, 4096],
                          "method.n_components": [4096, 256, 4096]})
    assert common.budget(table).tolist() == [4096.0, 256.0, 4096.0]


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


def _claim_table(gain: float, noise: float = 0.002, *, other: str = "orf", gains: dict | None = None,
                 n_train: int | None = None) -> pd.DataFrame:
    """rff_opt's test error ``gain`` (or ``gains[D]``) below ``other``'s at D = 128 and 256, 8 seeds."""
    rng = np.random.default_rng(0)
    rows = []
    for D in (128, 256):
        for seed in range(8):
            base = 0.2 + noise * rng.standard_normal()
            g = gain if gains is None else gains[D]
            # the champion's own draw moves too: a paired difference that varies by seed
            for arm, err in (("rff_opt", base - g + noise / 2 * rng.standard_normal()), (other, base)):
                rows.append({"status": "ok", "dataset.name": "checkerboard", "arm": arm, "seed": seed,
                             "fitted.n_features_out": D, "metrics.error": err, "metrics.kerr_fro": 0.1,
                             "metrics.kerr_spec": 0.1, **({} if n_train is None else {"dataset.n_train": n_train})})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("gain", "verdict"), [(0.02, "pass"), (-0.02, "fail"), (0.0, "inconclusive")])
def test_cross_claim_against_a_challenger(gain, verdict):
    out = {c["id"]: c for c in common.cross_claims(_claim_table(gain), ("C4.2",))}
    c = out["X-C4.2-vs-orf"]
    assert c["verdict"] == verdict
    assert c["estimate"] == pytest.approx(-gain, abs=0.002)
    assert c["data"] == {"kind": "generated", "note": "generated data: checkerboard"}
    assert set(c["measured"]["cells"]) == {"checkerboard, D=128", "checkerboard, D=256"}


def test_a_fail_against_a_map_the_paper_never_compared_with_is_an_extension():
    # Sun et al. compared opt features with uniform RKS (rks_cossin) only: ORF is beyond the paper
    assert common.CROSS_CLAIMS["C4.2"]["met"] == ("rks_cossin",)
    (c,) = by_cause(common.cross_claims(_claim_table(-0.02), ("C4.2",)))
    assert c["id"] == "X-C4.2-vs-orf" and c["extension"] is True
    assert c["verdict"] == "fail" and c["fail_kind"] == "extension" and c["evidence"]
    check_claims([c])
    # the same fail against the map the paper did compare with is a disagreement
    (c,) = by_cause(common.cross_claims(_claim_table(-0.02, other="rks_cossin"), ("C4.2",)))
    assert c["id"] == "X-C4.2-vs-rks_cossin" and "extension" not in c
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement"
    # a pass against ORF is an extension too, but carries no fail kind
    (c,) = by_cause(common.cross_claims(_claim_table(0.02), ("C4.2",)))
    assert c["verdict"] == "pass" and c["extension"] is True and "fail_kind" not in c


def test_a_fail_decided_by_a_cell_with_d_at_least_half_of_n_is_a_limitation():
    # the fail is decided at D = 256 (0.02 worse there, no difference at D = 128)
    table = _claim_table(0.0, other="rks_cossin", gains={128: 0.0, 256: -0.02}, n_train=400)
    (c,) = by_cause(common.cross_claims(table, ("C4.2",)))
    # the binding cell is named with its D and n
    assert c["verdict"] == "fail" and c["interval"].endswith("binding cell: checkerboard, D=256, n=400")
    assert c["fail_kind"] == "limitation" and "checkerboard, D=256, n=400 with D >= n/2" in c["mechanism"]
    assert c["settle"].startswith("the same claim on cells with n >= 8 D")
    check_claims([c])
    # with 10000 training rows D = 256 is far below n / 2: our evidence against the paper
    (c,) = by_cause(common.cross_claims(_claim_table(0.0, other="rks_cossin", gains={128: 0.0, 256: -0.02},
                                                     n_train=10000), ("C4.2",)))
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement" and "mechanism" not in c


def test_champions_that_coincide_in_every_cell_make_one_claim():
    # TEFM-G and TEFM-S with the same test error in every (dataset, D, seed): one map under two names
    base = _claim_table(0.02, other="quasi")
    same = pd.concat([base, base[base["arm"] == "rff_opt"].assign(arm="tefm_g"),
                      base[base["arm"] == "rff_opt"].assign(arm="tefm_s")])
    ids = {c["id"] for c in common.cross_claims(same, ("C1.4",))}
    assert "X-C1.4-vs-quasi" in ids and not any(i.startswith(("X-C1.4-tefm_g", "X-C1.4-tefm_s")) for i in ids)
    (c,) = [c for c in common.cross_claims(same, ("C1.4",)) if c["id"] == "X-C1.4-vs-quasi"]
    assert "the maps coincide here" in c["statistic"] and c["verdict"] == "pass"
    # one seed where they differ: two claims again
    apart = same.copy()
    apart.loc[(apart["arm"] == "tefm_s") & (apart["seed"] == 0), "metrics.error"] += 0.01
    ids = {c["id"] for c in common.cross_claims(apart, ("C1.4",))}
    assert {"X-C1.4-tefm_g-vs-quasi", "X-C1.4-tefm_s-vs-quasi"} <= ids


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


# ----------------------------------------------------------------------------- the Laplacian and polynomial kernels

NEW_STUDIES = {
    "leaderboard/laplacian-regression": "laplacian", "leaderboard/laplacian-classification": "laplacian",
    "leaderboard/polynomial-regression": "polynomial", "leaderboard/polynomial-classification": "polynomial",
}
FIXED_ARMS = {
    "laplacian": {"rks_cos", "rks_cossin", "quasi", "nystrom", "tefm_g", "tefm_s", "comp", "rff_selection", "rff_opt"},
    "polynomial": {"rm", "ts", "craft_rm", "craft_ts", "nystrom"},
}
RB_GRIDS = [1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724]  # round(2^(k/2)), k = 0..19
#: the issue's equal budgets D = 2^7 .. 2^12 (full settings; the smoke sweeps run d128, d256)
FULL_BUDGETS = {"d128", "d256", "d512", "d1024", "d2048", "d4096"}


def _picks(job) -> dict:
    return dict(o.split("=", 1) for o in job.overrides if "=" in o)


@pytest.mark.parametrize("study", ["leaderboard/gaussian-regression", "leaderboard/gaussian-classification",
                                   *NEW_STUDIES])
def test_a_study_states_the_wall_time_its_reference_measured(study):
    # a study states a wall time once a full run measured it, and that run is its reference
    cfg = compose(expand(study)[0].overrides)
    reference = project_root() / "results" / "reference" / "provenance" / f"{study_slug(study)}.json"
    if reference.exists():
        minutes = json.loads(reference.read_text())["wall_s"] / 60
        stated = int(cfg.sweep.wall_time.split(" min")[0])
        assert minutes - 1 <= stated <= 1.1 * minutes + 1, (stated, minutes)
    else:
        assert cfg.sweep.wall_time is None


@pytest.mark.parametrize("study", NEW_STUDIES)
def test_new_studies_expand_to_their_arms_budgets_and_seeds(study):
    kernel = NEW_STUDIES[study]
    jobs = expand(study)
    arms = {j.arm for j in jobs}
    assert arms == FIXED_ARMS[kernel] | ({"rb"} if kernel == "laplacian" else set())
    for arm in FIXED_ARMS[kernel]:
        points = [(p["dataset"], p["lb_D"], p["seed"]) for p in map(_picks, (j for j in jobs if j.arm == arm))]
        assert len(points) == len(set(points)) == 2 * 6 * 10  # datasets x D x seeds, each once
        assert {p[1] for p in points} == FULL_BUDGETS
    smoke = {_picks(j).get("lb_D") for j in expand(study, smoke=True) if j.arm != "rb"}
    assert smoke == {"d128", "d256"}  # the smoke settings are unchanged
    rb = [_picks(j) for j in jobs if j.arm == "rb"]
    if kernel == "laplacian":
        assert len(rb) == 2 * len(RB_GRIDS) * 10 and all("lb_D" not in p for p in rb)
        assert sorted({int(p["method.n_components"]) for p in rb}) == RB_GRIDS
        assert all("eval.predict" not in p for p in rb)  # RB's CSR features train the study's model
    cfg = compose(jobs[0].overrides)
    assert cfg.kernel.name == kernel
    if kernel == "polynomial":  # Hamid et al.'s r = 7, q = 1 on unit-norm rows
        assert (cfg.kernel.degree, cfg.kernel.offset, cfg.dataset.preprocess) == (7, 1.0, "zscore_unit_norm")
    else:
        assert cfg.kernel.sigma == "median" and cfg.dataset.preprocess == "zscore"
    assert cfg.dataset.subsample.n_train == 2000


def _fixed_arm_cases():
    return [(s, a) for s, k in NEW_STUDIES.items() if s.endswith("classification") for a in sorted(FIXED_ARMS[k])]


@pytest.mark.parametrize(("study", "arm"), _fixed_arm_cases())
def test_every_fixed_arm_is_charged_D_output_columns(study, arm):
    job = next(j for j in expand(study, smoke=True) if j.arm == arm and _picks(j).get("lb_D") == "d256")
    cfg = compose([o for o in job.overrides if not o.startswith("dataset=")])
    fmap = _build(cfg.method)
    X = np.random.default_rng(0).standard_normal((400, 6))
    if cfg.kernel.name == "polynomial":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        up = fmap.up if hasattr(fmap, "up") else fmap  # a CRAFTMap's base map holds the kernel
        assert (up.degree, up.offset) == (7, 1.0)
    else:
        assert fmap.kernel == "laplacian"
    fmap.fit(X)
    table = pd.DataFrame({"arm": [arm], "fitted.n_features_out": [fmap.n_features_out_],
                          "method.max_components": [cfg.method.get("max_components")]})
    assert common.budget(table).tolist() == [256.0]
    if arm == "rff_selection":  # it keeps what improves the kernel: at most its cap's columns
        assert fmap.n_features_out_ <= 256
    else:
        assert fmap.n_features_out_ == 256


def test_random_binning_outputs_more_columns_than_grids_and_sits_where_they_fit():
    from rfrepro.features import RandomBinning

    X = np.random.default_rng(0).standard_normal((500, 4))
    outs = [RandomBinning(R, sigma="median", random_state=0).fit(X).n_features_out_ for R in (4, 8, 16)]
    assert all(out > R for out, R in zip(outs, (4, 8, 16)))  # columns are bins, not grids
    got = common.budget(pd.DataFrame({"arm": "rb", "fitted.n_features_out": outs}))
    assert [D / 2 < out <= D for out, D in zip(outs, got)] == [True] * 3
    assert got.tolist() == [2.0 ** np.ceil(np.log2(o)) for o in outs]


def _rb_table() -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for D in (128, 256):
            rows.append({"status": "ok", "arm": "nystrom", "seed": seed, "dataset.name": "x",
                         "fitted.n_features_out": D, "method.n_components": D})
        # seed 0: 90 and 120 columns fit 128, 250 fits 256, 300 would need 512 (not on the axis)
        for R, out in ((3, 90 + seed), (4, 120 - 20 * seed), (8, 250), (10, 300)):
            rows.append({"status": "ok", "arm": "rb", "seed": seed, "dataset.name": "x",
                         "fitted.n_features_out": out, "method.n_components": R})
    return pd.DataFrame(rows).assign(**{"metrics.kerr_fro": 0.1, "metrics.error": 0.2})


def test_random_binning_keeps_its_largest_run_within_each_budget():
    rb = common.prepare(_rb_table()).query("arm == 'rb'").sort_values(["seed", common.BUDGET])
    assert rb[["seed", common.BUDGET, "fitted.n_features_out"]].values.tolist() == [
        [0, 128, 120], [0, 256, 250], [1, 128, 100], [1, 256, 250]]
    note = common.free_columns_note(common.prepare(_rb_table()))
    # shares 120/128, 250/256, 100/128, 250/256: mean 0.92, least 0.78
    assert "on average 0.92 D (least 0.78 D)" in note and "D=128: R = 4; D=256: R = 8" in note
    assert "No run" not in note  # every seed has a run within each D


def test_random_binning_says_which_blocks_have_no_run_within_D():
    table = _rb_table()
    # seed 1's smallest run (one grid) has 200 columns: nothing of it fits D = 128
    table = table[~((table["arm"] == "rb") & (table["seed"] == 1) & table["method.n_components"].isin([3, 4]))]
    table = pd.concat([table, pd.DataFrame([{"status": "ok", "arm": "rb", "seed": 1, "dataset.name": "x",
                                             "fitted.n_features_out": 200, "method.n_components": 1,
                                             "metrics.kerr_fro": 0.1, "metrics.error": 0.2}])])
    note = common.free_columns_note(common.prepare(table))
    assert "No run of it has between D/2 and D columns at x D=128 (1 of 2 seeds)" in note
    assert "D=256 (" not in note
    ranked = common.rank_table(common.prepare(table), "metrics.error")
    assert int(ranked["blocks"].iloc[0]) == 3  # the block (x, 128, seed 1) is not ranked


def _lap_table(gain: float, *, predict: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for D in (128, 256):
        for seed in range(8):
            base = 0.3 + 0.002 * rng.standard_normal()
            rows.append({"status": "ok", "dataset.name": "checkerboard", "arm": "nystrom", "seed": seed,
                         "fitted.n_features_out": D, "metrics.error": base, "metrics.kerr_fro": 0.1,
                         "eval.predict": True})
            rows.append({"status": "ok", "dataset.name": "checkerboard", "arm": "rb", "seed": seed,
                         "fitted.n_features_out": D - 10,
                         "metrics.error": base - gain + 0.001 * rng.standard_normal() if predict else np.nan,
                         "metrics.kerr_fro": 0.2, "eval.predict": predict})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("gain", "verdict"), [(0.02, "pass"), (-0.02, "fail"), (0.0, "inconclusive")])
def test_wu_c51_against_a_laplacian_challenger(gain, verdict):
    (c,) = check_claims(common.cross_claims(_lap_table(gain), kernel="laplacian"))
    assert (c["id"], c["verdict"]) == ("X-C5.1-vs-nystrom", verdict)
    assert c["estimate"] == pytest.approx(-gain, abs=0.003)
    assert set(c["measured"]["cells"]) == {"checkerboard, D=128", "checkerboard, D=256"}
    assert c["data"]["kind"] == "generated"
    # RB is charged a column per non-empty bin here, not per grid as in the paper: a fail is that limitation
    assert c.get("fail_kind") == ("limitation" if verdict == "fail" else None)
    if verdict == "fail":
        assert c["mechanism"] == common.LAPLACIAN_CLAIMS["C5.1"]["mechanism"]
        assert c["settle"] == common.LAPLACIAN_CLAIMS["C5.1"]["settle"]
        assert by_cause([c])[0]["fail_kind"] == "limitation" and "extension" not in c   # nystrom: the paper's


def test_wu_c51_is_not_run_when_random_binning_has_no_test_error():
    (c,) = check_claims(common.cross_claims(_lap_table(0.02, predict=False), kernel="laplacian"))
    assert c["verdict"] == "not-run" and "eval.predict is false" in c["reason"]
    # its kernel error still ranks; the test-error table ranks the others instead of nothing
    rt = common.rank_table(common.prepare(_lap_table(0.0, predict=False)), "metrics.error")
    assert rt["method"].tolist() == ["nystrom"] and rt["blocks"].iloc[0] == 16


def _poly_table(ratio: float) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for name in ("cpusmall", "cadata"):
        for seed in range(6):
            rm = 0.8 * np.exp(0.02 * rng.standard_normal())
            ts = 0.6 * np.exp(0.02 * rng.standard_normal())
            for arm, kerr in (("rm", rm), ("ts", ts), ("craft_rm", ratio * rm * np.exp(0.01 * rng.standard_normal())),
                              ("craft_ts", 0.3)):
                rows.append({"status": "ok", "dataset.name": name, "arm": arm, "seed": seed,
                             "fitted.n_features_out": 256, "metrics.kerr_fro": kerr, "metrics.error": 0.1})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("ratio", "verdict"), [(0.5, "pass"), (1.5, "fail"), (1.0, "inconclusive")])
def test_hamid_c32_craft_against_each_polynomial_challenger(ratio, verdict):
    claims = {c["id"]: c for c in check_claims(common.cross_claims(_poly_table(ratio), ("C3.2",),
                                                                   kernel="polynomial"))}
    # each CRAFT map against RM and TS, not against the other CRAFT map
    assert set(claims) == {f"X-C3.2-{c}-vs-{o}" for c in ("craft_rm", "craft_ts") for o in ("rm", "ts")}
    c = claims["X-C3.2-craft_rm-vs-rm"]
    assert c["verdict"] == verdict and c["estimate"] == pytest.approx(ratio, rel=0.02)
    # RM and TS are the maps the paper compared CRAFT with: a fail is a disagreement, not an extension
    assert "extension" not in c and by_cause([c])[0].get("fail_kind") == ("disagreement" if ratio > 1 else None)
    assert set(c["measured"]["cells"]) == {"cpusmall, D=256", "cadata, D=256"}
    assert claims["X-C3.2-craft_ts-vs-ts"]["verdict"] == "pass"  # 0.3 against about 0.6


@pytest.mark.parametrize(("module", "kernel", "ids"), [
    ("laplacian_classification", "laplacian", {"X-C5.1-vs-rks_cos", "X-C5.1-vs-nystrom", "X-C5.1-vs-rff_opt"}),
    ("polynomial_classification", "polynomial", {"X-C3.2-craft_rm-vs-rm", "X-C3.3-craft_ts-vs-ts"}),
])
def test_new_studies_claims_without_runs_name_their_kernels_challengers(module, kernel, ids):
    mod = study_module(f"leaderboard/{module.replace('_', '-')}")
    empty = pd.DataFrame(columns=["status", "arm", "seed", "dataset.name", "fitted.n_features_out"])
    claims = check_claims(mod.claims(empty))
    assert {c["verdict"] for c in claims} == {"not-run"}
    assert ids <= {c["id"] for c in claims}
    challengers = {c["id"].rsplit("-vs-", 1)[1] for c in claims}
    assert challengers == set(kernel_arms(kernel)) - {"rb", "craft_rm", "craft_ts"}


def test_rank_table_shows_time_and_peak_memory_beside_the_rank():
    table = _ranked_table(n_seeds=4).assign(status="ok", **{"fitted.n_features_out": 128})
    table["timings.fit_s"] = table["arm"].map({"a": 1.0, "b": 2.0, "c": 4.0})
    table["timings.train_s"] = 0.5
    table["memory.peak_bytes"] = table["arm"].map({"a": 3, "b": 1, "c": 2}) * 2 ** 20
    table["eval.predict"] = table["arm"] != "c"
    text = common.rank_markdown(table, {"metrics.error": "test error"})
    assert "| method | mean rank | 95% interval | time (s) | peak memory (MiB) |" in text
    assert "| a | 1.00 | [1.00, 1.00] | 1.5 | 3 |" in text
    assert "| c | 2.75 | " in text and "| 4.5 (map only) | 2 (map only) |" in text
    assert "(map only): these runs train no model" in text


def test_make_leaderboard_runs_every_kernel_and_reports_from_the_results_folder():
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = common.__file__.rsplit("/experiments/", 1)[0]
    out = subprocess.run(["make", "-n", "--no-print-directory", "-o", "setup", "-o", ".venv/.installed", "leaderboard", "SMOKE=1",
                          "JOBS=1", "ARGS=paths.results=lb_out"], cwd=root, capture_output=True, text=True,
                         timeout=60).stdout.splitlines()
    runs = [x for x in out if "rfrepro.reproduce" in x]
    assert {x.split("rfrepro.reproduce ", 1)[1].split()[0] for x in runs} == {
        f"leaderboard-{k}-{t}" for k in ("gaussian", "laplacian", "polynomial")
        for t in ("regression", "classification")}
    assert all("--smoke" in x and x.rstrip().endswith("paths.results=lb_out") for x in runs)
    # the runs went to lb_out itself (no smoke/ under it): the report reads it so
    assert out[-1].startswith("RFREPRO_RESULTS=lb_out ") and out[-1].rstrip().endswith("-m rfrepro.report")


@pytest.mark.slow  # 72 runs, about 160 s on 2 cores
def test_laplacian_smoke_sweep_places_random_binning_and_judges_c51(results_root):
    study = "leaderboard/laplacian-classification"
    code = reproduce_main([study, "--smoke", "--jobs", "1"])
    root = results_root / "smoke"
    slug = study_slug(study)
    table = pd.read_parquet(root / "tables" / f"{slug}.parquet")
    assert code == 0 and set(table["status"]) == {"ok"} and len(table) == 9 * 2 * 3 + 6 * 3
    ok = common.prepare(table)
    rb = ok[ok["arm"] == "rb"]
    assert set(rb[common.BUDGET]) == {128.0, 256.0} and len(rb) == 2 * 3  # one run per (D, seed)
    share = rb["fitted.n_features_out"] / rb[common.BUDGET]
    assert ((share > 0.5) & (share <= 1.0)).all()
    # RB's CSR features trained the linear SVM: a test error and a lambda chosen on the training split
    assert rb["metrics.error"].between(0, 1).all() and rb["metrics.kerr_fro"].between(0, 2).all()
    assert (rb["fitted.model_lam"] > 0).all()
    fixed = ok[~ok["arm"].isin(["rb", "rff_selection"])]
    assert (fixed["fitted.n_features_out"].to_numpy() == fixed[common.BUDGET].to_numpy()).all()
    assert (table["memory.peak_bytes"] > 0).all()
    summary = (root / "tables" / f"{slug}.md").read_text()
    assert sum(line.startswith("| random binning |") for line in summary.splitlines()) == 2  # both rank tables
    assert "peak memory (MiB)" in summary and "| X-C5.1 | " in summary and "(map only)" not in summary
    claims = check_claims(json.loads((root / "claims" / f"{slug}.json").read_text()))
    # C5.1 judged against each of the 9 other maps, in the smoke sweep's (checkerboard, D) cells
    assert len(claims) == 9 and "not-run" not in {c["verdict"] for c in claims}
    assert all(set(c["measured"]["cells"]) == {"checkerboard, D=128", "checkerboard, D=256"} for c in claims)
