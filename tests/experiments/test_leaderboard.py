"""The cross-paper leaderboard: equal budgets, rank table, Pareto front, cross-paper claims, smoke sweep."""

import importlib
import json
import os

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

STUDY = "leaderboard/gaussian-classification"
#: the leaderboards' smoke sweeps run on real data (ijcnn1's validation file, cadata): from the mirror
MIRROR = project_root().parent / "shared" / "datasets"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"),
                                  reason="needs the dataset mirror (RFREPRO_MIRROR)")
# imported as the outputs import it (study_module puts the project root on sys.path, as pytest alone does not)
classification_claims = study_module(STUDY).claims
common = importlib.import_module("experiments.leaderboard.common")


def _picks(job) -> dict:
    return dict(o.split("=", 1) for o in job.overrides if "=" in o)


def _arm_overrides(arm: str, point: str) -> list[str]:
    job = next(j for j in expand(STUDY) if j.arm == arm and f"lb_D={point}" in j.overrides
               and "dataset=a9a" in j.overrides)
    return [o for o in job.overrides if not o.startswith("dataset=")]


@pytest.mark.parametrize(("arm", "freq"), [("rks_cossin", 128), ("rks_cos", 256), ("tefm_g", 256)])
def test_cossin_map_is_charged_two_columns_per_frequency(arm, freq):
    cfg = compose(_arm_overrides(arm, "d256"))
    assert cfg.method.n_components == freq
    fmap = _build(cfg.method, sigma=1.0)
    fmap.fit(np.random.default_rng(0).standard_normal((300, 5)))
    assert fmap.n_features_out_ == 256  # every arm at d256 hands the model 256 columns


@pytest.mark.parametrize("study", ["leaderboard/gaussian-classification", "leaderboard/gaussian-regression"])
def test_gaussian_studies_keep_n_at_least_8_D_in_every_cell(study):
    jobs = expand(study)
    assert {_picks(j)["lb_D"] for j in jobs} == {"d128", "d256", "d512"}
    # spambase (3601 rows) and the widest datasets (a9a; BlogFeedback, UJIIndoorLoc) stop at D = 256
    cells = 3 * 3 - 2
    assert len(jobs) == 12 * cells * 10  # arms x (dataset, D) cells x seeds
    datasets = {_picks(j)["dataset"] for j in jobs}
    assert len(datasets) == 3 and not datasets & common.GENERATED
    for job in jobs[:: len(jobs) // 40]:
        cfg = compose(job.overrides)
        n = cfg.dataset.subsample.n_train or 3601  # spambase: all 3601 training rows of its split
        assert n >= 8 * cfg.lb_point.D
        # each seed its own training subsample and held-out kernel-error rows
        assert cfg.dataset.subsample.seed == cfg.seed == cfg.eval.kernel_error_seed
        assert cfg.eval.kernel_error_split == "test" and cfg.eval.time_final_fit
    assert {_picks(j)["lb_D"] for j in expand(study, smoke=True)} == {"d128"}


def test_a_dataset_split_at_random_draws_its_split_per_seed_and_skips_budgets_it_cannot_hold():
    jobs = [j for j in expand("leaderboard/gaussian-classification") if j.arm == "rks_cos"]
    spam = [compose(j.overrides) for j in jobs if _picks(j)["dataset"] == "spambase"]
    assert {c.lb_point.D for c in spam} == {128, 256} and len(spam) == 2 * 10
    assert {c.dataset.split.seed for c in spam} == set(range(10)) and spam[0].dataset.split.test_size == 1000
    a9a = compose(next(j for j in jobs if _picks(j)["dataset"] == "a9a").overrides)
    assert a9a.dataset.split.kind == "official" and "seed" not in a9a.dataset.split


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


@pytest.mark.slow  # 24 runs on ijcnn1's validation file
@needs_mirror
def test_smoke_sweep_runs_and_judges(results_root, monkeypatch):
    monkeypatch.setenv("RFREPRO_MIRROR", os.environ.get("RFREPRO_MIRROR") or f"file://{MIRROR}")
    code = reproduce_main([STUDY, "--smoke", "--jobs", "1"])
    root = results_root / "smoke"
    slug = study_slug(STUDY)
    table = pd.read_parquet(root / "tables" / f"{slug}.parquet")
    assert code == 0 and set(table["status"]) == {"ok"}
    assert len(table) == 12 * 1 * 2  # arms x D x seeds
    ok = common.prepare(table)
    assert set(ok[common.BUDGET]) == {128.0}
    fixed = ok[ok["arm"] != "rff_selection"]
    assert (fixed["fitted.n_features_out"].to_numpy() == fixed[common.BUDGET].to_numpy()).all()
    assert (table["fitted.model_lam"] > 0).all()  # lambda chosen on the training split by every run
    summary = (root / "tables" / f"{slug}.md").read_text()
    # held-out kernel errors (test block, train x test block), the final fit timed apart from the search
    assert table["metrics.kerr_rows"].eq(200).all() and table["metrics.kerr_cross_fro"].between(0, 2).all()
    assert (table["timings.final_fit_s"] > 0).all() and (table["dataset.n_train"] >= 8 * 128).all()
    # three rank tables (two kernel errors, the test error), the test error at matched time and memory
    assert sum(line.startswith("| TEFM-G |") for line in summary.splitlines()) == 5
    assert "Friedman" in summary and "| X-C4.2 | " in summary  # and the claim x challenger table
    claims = check_claims(json.loads((root / "claims" / f"{slug}.json").read_text()))
    # C1.1 (two champions) x 10, C2.2 / C3.2 / C3.3 / C4.2 x 11; each kernel-error one (C1.1, C3.2) also held out
    assert len(claims) == 2 * (2 * 10 + 11) + 3 * 11


# ----------------------------------------------------------------------------- the Laplacian and polynomial kernels

NEW_STUDIES = {
    "leaderboard/laplacian-regression": "laplacian", "leaderboard/laplacian-classification": "laplacian",
    "leaderboard/polynomial-regression": "polynomial", "leaderboard/polynomial-classification": "polynomial",
}
FIXED_ARMS = {
    "laplacian": {"rks_cos", "rks_cossin", "quasi", "nystrom", "tefm_g", "tefm_s", "comp", "rff_selection", "rff_opt",
                  "rb"},
    "polynomial": {"rm", "ts", "craft_rm", "craft_ts", "nystrom"},
}
@pytest.mark.parametrize("study", ["leaderboard/gaussian-regression", "leaderboard/gaussian-classification",
                                   *NEW_STUDIES])
def test_a_study_states_the_wall_time_its_reference_measured(study):
    # a study states a wall time once a full run of today's sweep measured it, and that run is its reference
    cfg = compose(expand(study)[0].overrides)
    reference = project_root() / "results" / "reference" / "provenance" / f"{study_slug(study)}.json"
    made = json.loads(reference.read_text()) if reference.exists() else None
    if made is not None and made["runs"] == len(expand(study)):
        minutes = made["wall_s"] / 60
        stated = int(cfg.sweep.wall_time.split(" min")[0])
        assert minutes - 1 <= stated <= 1.1 * minutes + 1, (stated, minutes)
    else:  # no reference of today's sweep yet: nothing measured to state
        assert cfg.sweep.wall_time is None


@pytest.mark.parametrize("study", NEW_STUDIES)
def test_new_studies_expand_to_their_arms_budgets_and_seeds(study):
    kernel = NEW_STUDIES[study]
    jobs = expand(study)
    arms = {j.arm for j in jobs}
    assert arms == FIXED_ARMS[kernel]
    cells = 3 * 3 - 2  # two datasets of each study stop at D = 256
    for arm in FIXED_ARMS[kernel]:
        points = [(p["dataset"], p["lb_D"], p["seed"]) for p in map(_picks, (j for j in jobs if j.arm == arm))]
        assert len(points) == len(set(points)) == cells * 10  # (dataset, D) cells x seeds, each once
        assert {p[1] for p in points} == {"d128", "d256", "d512"}
    assert {_picks(j).get("lb_D") for j in expand(study, smoke=True)} == {"d128"}
    cfg = compose(jobs[0].overrides)
    assert cfg.kernel.name == kernel
    if kernel == "polynomial":  # Hamid et al.'s r = 7, q = 1 on unit-norm rows
        assert (cfg.kernel.degree, cfg.kernel.offset, cfg.dataset.preprocess) == (7, 1.0, "zscore_unit_norm")
    else:
        assert cfg.kernel.sigma == "median"
    assert cfg.dataset.subsample.n_train == 4096


def _fixed_arm_cases():
    return [(s, a) for s, k in NEW_STUDIES.items() if s.endswith("classification") for a in sorted(FIXED_ARMS[k])]


@pytest.mark.parametrize(("study", "arm"), _fixed_arm_cases())
def test_every_fixed_arm_is_charged_D_output_columns(study, arm):
    job = next(j for j in expand(study) if j.arm == arm and _picks(j).get("lb_D") == "d256")
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
                          "method.max_components": [cfg.method.get("max_components")],
                          "method.n_components": [cfg.method.get("n_components")]})
    assert common.budget(table).tolist() == [256.0]
    if arm == "rff_selection":  # it keeps what improves the kernel: at most its cap's columns
        assert fmap.n_features_out_ <= 256
    elif arm == "rb":  # R = 256 grids: 256 non-zeros per row, its columns the non-empty bins
        assert fmap.n_components == 256 and fmap.n_features_out_ > 256
    else:
        assert fmap.n_features_out_ == 256


def test_random_binning_is_charged_its_non_zeros_per_row():
    from rfrepro.features import RandomBinning

    X = np.random.default_rng(0).standard_normal((500, 4))
    fits = [RandomBinning(R, sigma="median", random_state=0).fit(X) for R in (4, 8, 16)]
    Z = [f.transform(X) for f in fits]
    assert all(f.n_features_out_ > f.n_components for f in fits)  # columns are bins, not grids
    assert [z.getnnz(axis=1).max() for z in Z] == [4, 8, 16]  # R non-zeros in each row
    table = pd.DataFrame({"arm": "rb", "fitted.n_features_out": [f.n_features_out_ for f in fits],
                          "method.n_components": [4, 8, 16], "status": "ok", "dataset.n_train": 500,
                          "memory.feature_nnz": [z.nnz for z in Z]})
    assert common.budget(table).tolist() == [4.0, 8.0, 16.0]
    assert common.prepare(table)["nnz_per_row"].tolist() == [4.0, 8.0, 16.0]


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
                         "fitted.n_features_out": 40 * D, "method.n_components": D,
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
    # RB is charged by its R non-zeros per row, as the paper compares it: a fail against Nystrom (a map
    # the paper compared with) is a disagreement
    assert "mechanism" not in c and "extension" not in c
    assert by_cause([c])[0].get("fail_kind") == ("disagreement" if verdict == "fail" else None)


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


def test_a_fail_against_the_papers_baseline_is_a_disagreement_and_against_another_map_an_extension():
    # CRAFT/RM's test error above RM's and Nystrom's: against RM (Hamid et al.'s baseline) the fail is evidence
    # against the paper; against Nystrom, a map the paper never met, it is an extension finding
    table = _poly_table(1.0)
    rng = np.random.default_rng(3)
    table["metrics.error"] = table["arm"].map({"craft_rm": 0.15, "rm": 0.1, "ts": 0.1, "craft_ts": 0.1})
    table = pd.concat([table, table[table["arm"] == "rm"].assign(arm="nystrom")])
    table["metrics.error"] += 0.002 * rng.standard_normal(len(table))
    claims = {c["id"]: c for c in by_cause(common.cross_claims(table, ("C3.3",), kernel="polynomial"))}
    assert claims["X-C3.3-craft_rm-vs-rm"]["fail_kind"] == "disagreement"
    assert claims["X-C3.3-craft_rm-vs-nystrom"]["fail_kind"] == "extension"
    assert "mechanism" not in claims["X-C3.3-craft_rm-vs-nystrom"]


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


def test_rank_table_shows_what_each_map_holds_and_costs_beside_the_rank():
    table = _ranked_table(n_seeds=4).assign(status="ok", **{"fitted.n_features_out": 128, "dataset.n_train": 1000,
                                                            "method.n_components": 128})
    table["timings.fit_s"] = table["arm"].map({"a": 1.0, "b": 2.0, "c": 4.0})
    table["timings.train_s"] = 0.5
    table["timings.final_fit_s"] = 0.25  # the user's training: the fit at the chosen lambda, not the search
    table["memory.peak_bytes"] = table["arm"].map({"a": 3, "b": 1, "c": 2}) * 2 ** 20
    table["memory.feature_nnz"] = 128 * 1000
    table["memory.feature_bytes"] = 128 * 1000 * 8
    table["eval.predict"] = table["arm"] != "c"
    text = common.rank_markdown(table, {"metrics.error": "test error"})
    assert ("| method | mean rank | 95% interval | columns | values / row | draws | time (s) | search (s) "
            "| peak memory (MiB) |") in text
    assert "| a | 1.00 | [1.00, 1.00] | 128 | 128 | 128 | 1.25 | 0.5 | 3 |" in text
    assert "| c | 2.75 | " in text and "| 4.25 (map only) | 0.5 | 2 (map only) |" in text
    assert "(map only): these runs train no model" in text
    assert "**test error at matched time**" in text and "**test error at matched memory of the" in text


@pytest.mark.parametrize("cost", [common.TIME, common.FEATURE_MEMORY])
def test_matched_cost_takes_each_maps_best_error_within_the_cost(cost):
    # two maps at two budgets: the costly map's better error only counts at the time (memory) it needs
    rows = []
    for seed in range(3):
        for arm, D, t, err in (("fast", 128, 1.0, 0.30), ("fast", 256, 2.0, 0.25),
                               ("slow", 128, 3.0, 0.20), ("slow", 256, 6.0, 0.10)):
            rows.append({"dataset.name": "x", "seed": seed, "arm": arm, common.BUDGET: D,
                         cost: t, "metrics.error": err})
    at = common.at_matched(pd.DataFrame(rows), "metrics.error", cost)
    levels = sorted(at[common.LEVEL].unique())
    assert levels == [2.0, 4.0]  # per D, the median over the maps of their cost
    got = at[at["seed"] == 0].set_index(["arm", common.LEVEL])["metrics.error"].to_dict()
    assert got == {("fast", 2.0): 0.25, ("fast", 4.0): 0.25, ("slow", 2.0): np.inf, ("slow", 4.0): 0.20}
    rt = common.rank_table(at, "metrics.error", block=("dataset.name", common.LEVEL, "seed"))
    assert rt.set_index("method")["mean_rank"].to_dict() == {"fast": 1.5, "slow": 1.5}


def test_kernel_errors_at_the_rounding_floor_are_left_out_of_the_ratios():
    rows = []
    for seed in range(6):
        for D, (a, b) in ((128, (0.05, 0.1)), (256, (1e-9, 3e-9))):  # at D = 256 both maps are exact
            for arm, v in (("tefm_g", a * (1 + 0.01 * seed)), ("rks_cos", b)):
                rows.append({"status": "ok", "dataset.name": "x", "arm": arm, "seed": seed,
                             "fitted.n_features_out": D, "metrics.kerr_spec": v, "metrics.error": 0.1})
    (c,) = [c for c in common.cross_claims(pd.DataFrame(rows), ("C1.1",)) if c["id"] == "X-C1.1-tefm_g-vs-rks_cos"]
    assert set(c["measured"]["cells"]) == {"x, D=128"}  # the floor cell is not a ratio of noise
    assert "6 (dataset, D, seed) pairs where both errors are below 1e-06" in c["statistic"]
    assert c["verdict"] == "pass"


def _two_readings(held_out: float, train: float) -> pd.DataFrame:
    """TEFM-G's kernel error ``held_out`` (test rows) and ``train`` (training rows) times RKS [cos, sin]'s."""
    rng = np.random.default_rng(3)
    rows = []
    for seed in range(8):
        base = 0.1 * (1 + 0.05 * rng.standard_normal())
        for arm, f in (("tefm_g", 1.0), ("rks_cossin", 0.0)):
            jitter = 1 + 0.02 * rng.standard_normal() * f
            rows.append({"status": "ok", "dataset.name": "x", "arm": arm, "seed": seed, "fitted.n_features_out": 256,
                         "dataset.n_train": 4096, "metrics.error": 0.1,
                         "metrics.kerr_spec": base * (held_out if f else 1.0) * jitter,
                         "metrics.train_kerr_spec": base * (train if f else 1.0) * jitter})
    return pd.DataFrame(rows)


def _c11_vs_cossin(table: pd.DataFrame) -> tuple[dict, dict | None]:
    """The C1.1 claim against RKS [cos, sin], and its held-out re-reading (None without one)."""
    claims = {c["id"]: c for c in by_cause(common.cross_claims(table, ("C1.1",)))}
    check_claims(list(claims.values()))
    return claims["X-C1.1-tefm_g-vs-rks_cossin"], claims.get("X-C1.1-tefm_g-vs-rks_cossin-heldout")


def test_a_kernel_error_claim_is_judged_on_the_papers_rows_and_re_read_held_out_as_an_extension():
    # half the error on the rows TEFM was fitted on (where Chen et al. measure), none of it held out
    c, held = _c11_vs_cossin(_two_readings(held_out=0.85, train=0.5))
    assert c["verdict"] == "pass" and c["estimate"] == pytest.approx(0.5, rel=0.05)
    assert "metrics.train_kerr_spec" in c["statistic"] and "extension" not in c
    assert held["verdict"] == "fail" and held["fail_kind"] == "extension" and held["extension"] is True
    assert "metrics.kerr_spec" in held["statistic"] and "held-out" in held["paper_text"]
    assert held["estimate"] == pytest.approx(0.85, rel=0.05)
    # on the paper's rows too: the paper's own baseline, so a disagreement
    c, held = _c11_vs_cossin(_two_readings(held_out=0.9, train=0.9))
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement" and held["fail_kind"] == "extension"
    # records without the training-row block (eval.kernel_error_split = train) are judged on theirs alone
    c, held = _c11_vs_cossin(_two_readings(held_out=0.9, train=0.5).drop(columns="metrics.train_kerr_spec"))
    assert c["verdict"] == "fail" and held is None


def _quasi_table(low_d: float, wide_d: float) -> pd.DataFrame:
    """TEFM-G's kernel error ``low_d`` times Quasi's on a d = 8 dataset, ``wide_d`` times on a d = 123 one."""
    rng = np.random.default_rng(5)
    rows = []
    for name, d, ratio in (("low", 8, low_d), ("wide", 123, wide_d)):
        for seed in range(8):
            base = 0.1 * (1 + 0.05 * rng.standard_normal())
            for arm, f in (("tefm_g", ratio * (1 + 0.02 * rng.standard_normal())), ("quasi", 1.0)):
                rows.append({"status": "ok", "dataset.name": name, "dataset.d": d, "arm": arm, "seed": seed,
                             "fitted.n_features_out": 256, "dataset.n_train": 4096, "metrics.error": 0.1,
                             "metrics.kerr_spec": base * f})
    return pd.DataFrame(rows)


def test_a_fail_only_on_data_below_the_papers_range_of_d_is_a_limitation():
    assert common.CROSS_CLAIMS["C1.1"]["paper_d"] == (21, 784)  # Chen et al.'s data: cpu (21) .. MNIST (784)
    pick = lambda t: next(c for c in by_cause(common.cross_claims(t, ("C1.1",)))  # noqa: E731
                          if c["id"] == "X-C1.1-tefm_g-vs-quasi")
    c = pick(_quasi_table(low_d=1.5, wide_d=0.5))  # Quasi wins at d = 8 only: outside Chen's data
    check_claims([c])
    assert c["verdict"] == "fail" and c["fail_kind"] == "limitation"
    assert "low (d = 8)" in c["mechanism"] and c["settle"].startswith("the same claim on data with d in")
    assert "it is pass" in c["settle"]
    c = pick(_quasi_table(low_d=1.5, wide_d=1.5))  # it fails inside the range too: evidence against the paper
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement"
    # against a map the paper never met, a fail stays an extension finding
    t = _quasi_table(low_d=1.5, wide_d=0.5).replace({"arm": {"quasi": "orf"}})
    (c,) = [c for c in by_cause(common.cross_claims(t, ("C1.1",))) if c["id"] == "X-C1.1-tefm_g-vs-orf"]
    assert c["verdict"] == "fail" and c["fail_kind"] == "extension"


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


@pytest.mark.slow  # 20 runs on ijcnn1's validation file
@needs_mirror
def test_laplacian_smoke_sweep_charges_random_binning_by_row_and_judges_c51(results_root, monkeypatch):
    monkeypatch.setenv("RFREPRO_MIRROR", os.environ.get("RFREPRO_MIRROR") or f"file://{MIRROR}")
    study = "leaderboard/laplacian-classification"
    code = reproduce_main([study, "--smoke", "--jobs", "1"])
    root = results_root / "smoke"
    slug = study_slug(study)
    table = pd.read_parquet(root / "tables" / f"{slug}.parquet")
    assert code == 0 and set(table["status"]) == {"ok"} and len(table) == 10 * 1 * 2
    ok = common.prepare(table)
    rb = ok[ok["arm"] == "rb"]
    assert set(rb[common.BUDGET]) == {128.0} and len(rb) == 2
    assert (rb["nnz_per_row"] == 128).all() and (rb["fitted.n_features_out"] > 128).all()
    # RB's CSR features trained the linear SVM: a test error and a lambda chosen on the training split
    assert rb["metrics.error"].between(0, 1).all() and rb["metrics.kerr_fro"].between(0, 2).all()
    assert (rb["fitted.model_lam"] > 0).all()
    fixed = ok[~ok["arm"].isin(["rb", "rff_selection"])]
    assert (fixed["fitted.n_features_out"].to_numpy() == fixed[common.BUDGET].to_numpy()).all()
    assert (table["memory.peak_bytes"] > 0).all()
    summary = (root / "tables" / f"{slug}.md").read_text()
    # 3 + matched time and memory
    assert sum(line.startswith("| random binning |") for line in summary.splitlines()) == 5
    assert "peak memory (MiB)" in summary and "| X-C5.1 | " in summary and "(map only)" not in summary
    claims = check_claims(json.loads((root / "claims" / f"{slug}.json").read_text()))
    # C5.1 judged against each of the 9 other maps, in the smoke sweep's one (ijcnn1_val, D = 128) cell
    assert len(claims) == 9 and "not-run" not in {c["verdict"] for c in claims}
    assert all(set(c["measured"]["cells"]) == {"ijcnn1_val, D=128, n=1024"} for c in claims)
