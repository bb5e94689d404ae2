"""Schleif et al. (2016) Table 1 / Fig. 1 outputs on small hand-made results tables."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from rfrepro.harness.report.claims import check_claims
from rfrepro.harness.report.outputs import study_module

# imported the way the harness imports a study (the experiments/ folder is not a package on the path)
table1 = study_module("schleif2016/table1")
fig1 = study_module("schleif2016/fig1")
common = sys.modules["experiments.schleif2016.common"]
PAPER, column, per_dataset, selection_cost = (common.PAPER, common.column, common.per_dataset,
                                              common.selection_cost)

METHOD = {"full": "rks_cossin", "small": "rff_selection"}
MODEL = {"svm": "linear_svm", "ls": "ls"}
FOLDS = range(10)


def run(dataset: str, arm: str, seed: int, acc: float, *, d_star: int = 100, D: int = 5000,
        total: float = 3.0, load: float = 1.0, label: str | None = None, status: str = "ok") -> dict:
    model, kind = arm.split("_")
    row = {"status": status, "arm": label or arm, "dataset.name": dataset, "seed": seed,
           "method.name": METHOD[kind], "model.name": MODEL[model], "smoke": False}
    if status != "ok":
        return {**row, "error": "DatasetUnavailable: no mirror"}
    row.update({
        "metrics.accuracy": acc, "timings.total_s": total, "timings.load_s": load,
        "timings.fit_s": 0.5, "method.variant": "cossin",
        # the [cos, sin] map has two columns per frequency
        "fitted.n_features_out": 2 * (D if kind == "full" else d_star),
        "fitted.n_selected": np.nan if kind == "full" else d_star,
        "method.n_components": D if kind == "full" else np.nan,
        "method.max_components": D if kind == "small" else np.nan,
        "kernel.sigma": 2.0, "dataset.n_train": 90, "dataset.n_test": 10, "dataset.d": 3,
    })
    if model == "ls":
        row["fitted.model_lam"] = 0.01
    return row


def cost_runs(times: dict[int, float]) -> list[dict]:
    return [{"status": "ok", "arm": "selection_cost", "dataset.name": "checkerboard", "seed": s,
             "method.name": "rff_selection", "model.name": "none", "dataset.n_train": n,
             "timings.fit_s": t * (1 + 0.01 * s) * (1 + 0.02 * ((s + i) % 3)),
             "fitted.n_features_out": 2000, "fitted.n_selected": 1000, "smoke": False}
            for i, (n, t) in enumerate(times.items()) for s in range(5)]


def sigma_runs(dataset: str, d_star: dict[float, int], *, sigma: float = 2.0, D: int = 5000) -> list[dict]:
    """``dstar_sigma`` runs: the selection alone at sigma x factor, one per fold."""
    return [{"status": "ok", "arm": "dstar_sigma", "dataset.name": dataset, "seed": s,
             "method.name": "rff_selection", "model.name": "none", "kernel.sigma_scale": f,
             "kernel.sigma": f * sigma, "fitted.n_selected": n + 5 * (s % 2), "method.max_components": D,
             "fitted.n_features_out": 2 * n, "timings.fit_s": 1.0, "smoke": False}
            for f, n in d_star.items() for s in FOLDS]


def scan_runs(dataset: str, points: dict[float, tuple[float, int]], *, noise: float = 0.001,
              sigma: float = 2.0) -> list[dict]:
    """The sigma scan's arms: the full and the small SVM at sigma x factor, one per fold; ``points`` maps a
    factor to (full accuracy, D*); the small set loses 3 points, fold noise as Table 1's."""
    rows = []
    for f, (acc, d_star) in points.items():
        for s in FOLDS:
            j = noise * ((s % 3) - 1)
            for arm, a in (("svm_full", acc + j), ("svm_small", acc - 0.03 + j)):
                r = run(dataset, arm, s, a, d_star=d_star + 5 * (s % 2), label=f"sigma_{arm}")
                rows.append({**r, "kernel.sigma_scale": f, "kernel.sigma": f * sigma})
    return rows


def make_table(*, checker_small=(0.995, 0.993), usps_small=(0.95, 0.88), spam_full=0.93,
               usps_dstar=800, spam_dstar=200, cost=None, spam_noise=0.001) -> pd.DataFrame:
    rows = []
    for seed in FOLDS:
        j = 0.001 * ((seed % 3) - 1)             # fold-to-fold noise (mean -0.01 points over the 10 folds)
        # checker: full 100%, small loses less than a point
        rows += [run("checkerboard", "svm_full", seed, 1.0),
                 run("checkerboard", "ls_full", seed, 1.0),
                 run("checkerboard", "svm_small", seed, checker_small[0] + j, d_star=20 + 5 * (seed % 2)),
                 run("checkerboard", "ls_small", seed, checker_small[1] + j, d_star=20 + 5 * (seed % 2))]
        # usps: the small set loses a few points (the mnist-like case)
        rows += [run("usps", "svm_full", seed, 0.98 + j), run("usps", "ls_full", seed, 0.90 + j),
                 run("usps", "svm_small", seed, usps_small[0] - j, d_star=usps_dstar + 5 * (seed % 2)),
                 run("usps", "ls_small", seed, usps_small[1] - j, d_star=usps_dstar + 5 * (seed % 2))]
        k = spam_noise * ((seed % 5) - 2)
        rows += [run("spam", "svm_full", seed, spam_full + k), run("spam", "ls_full", seed, spam_full - k),
                 run("spam", "svm_small", seed, 0.9, d_star=spam_dstar + 5 * (seed % 2)),
                 run("spam", "ls_small", seed, 0.9, d_star=spam_dstar + 5 * (seed % 2))]
        if seed < 5:
            # mnist runs carry their own arm labels; the column comes from method + model
            rows += [run("mnist", "svm_full", seed, 0.96 + j, label="svm_full_mnist"),
                     run("mnist", "svm_small", seed, 0.90 - j, d_star=250, label="svm_small_mnist")]
        rows += [run("cover", a, seed, 0.0, status="unavailable") for a in table1.ARMS]
    rows += cost_runs(cost or {10_000: 1.0, 30_000: 3.0, 100_000: 10.0})
    return pd.DataFrame(rows)


def ok(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["status"] == "ok"]


def by_id(claims: list[dict]) -> dict[str, dict]:
    check_claims(claims)
    return {c["id"]: c for c in claims}


def line(text: str, start: str) -> list[str]:
    row = next(x for x in text.splitlines() if x.startswith(start))
    return [c.strip() for c in row.split("|")[1:-1]]


def test_columns_come_from_method_and_model():
    t = make_table()
    cols = column(t)
    assert cols[t["arm"] == "svm_small_mnist"].eq("svm_small").all()
    assert cols[t["arm"] == "selection_cost"].isna().all()
    # the cos(Wx + b) option counts as a full map too
    alt = t[t["arm"] == "ls_full"].assign(**{"method.name": "rks_cos"})
    assert column(alt).eq("ls_full").all()


def test_per_dataset_counts_frequencies_and_gives_fold_intervals():
    g = per_dataset(make_table())
    c = g[(g["dataset"] == "checkerboard") & (g["arm"] == "svm_small")].iloc[0]
    accs = 100 * (0.995 + 0.001 * ((np.arange(10) % 3) - 1))
    assert c["acc_mean"] == pytest.approx(accs.mean()) and c["acc_std"] == pytest.approx(accs.std(ddof=1))
    half = 2.2621571627409915 * accs.std(ddof=1) / np.sqrt(10)     # t(0.975, 9)
    assert (c["acc_lo"], c["acc_hi"]) == pytest.approx((accs.mean() - half, accs.mean() + half))
    assert c["cycle_s"] == pytest.approx(2.0)          # total_s - load_s
    # D* = selected frequencies (22.5 on average), not the 45 [cos, sin] columns; D = D_max
    assert c["d_star"] == pytest.approx(22.5) and c["D"] == 5000 and c["folds"] == 10
    m = g[(g["dataset"] == "mnist") & (g["arm"] == "svm_full")].iloc[0]
    assert m["acc_mean"] == pytest.approx(96.0 - 0.1 * (1 / 5)) and m["folds"] == 5
    assert "cover" not in set(g["dataset"])


def test_side_by_side_prints_every_paper_number_with_ours():
    text = table1.summary(make_table())
    spam_svm = line(text, "| spam | SVM+Full-RFF")
    assert spam_svm[2] == "92.98 +- 0.76"
    assert spam_svm[3].startswith("93.00 [") and spam_svm[4] == "+0.02"
    assert spam_svm[5] == "10" and spam_svm[6] == "same" and spam_svm[7] == "met"
    dstar = line(text, "| spam | D*")
    # spam's D* is 200 and 205 on alternate folds (mean 202.5)
    assert dstar[2] == "185" and dstar[3].startswith("202 [") and dstar[4] == "x1.09" and dstar[7] == "met"
    usps_ls = line(text, "| usps | LS+Full-RFF")
    # substitute data: the paper's number is of other data, so no goal is met or missed
    assert usps_ls[4] == "-8.12" and usps_ls[6].startswith("substitute") and usps_ls[7] == "n/c (substitute)"
    checker = line(text, "| checker | D*")
    assert checker[4] == "x1.12" and checker[6].startswith("same (ours: generated") and checker[7] == "met"
    # every number of the paper's table has its line: 9 datasets x (D* + 4 accuracies)
    assert sum(x.startswith(f"| {d} |") for x in text.splitlines() for d in common.DATASETS.values()) >= 45
    assert line(text, "| cover | D*")[3] == "not run: data unavailable"
    assert "not in this sweep" in line(text, "| coil | D*")[3]
    assert "0.01 (10x)" in text                          # the LS lam chosen per fold


def test_c21_judged_per_dataset_against_its_own_printed_ratio():
    c = by_id(table1.claims(make_table()))
    # checker: printed 5000 / 20 = 250, so the threshold is 125; ours 200-250
    assert c["C2.1 checker"]["threshold"] == pytest.approx(125.0)
    assert c["C2.1 checker"]["verdict"] == "pass" and c["C2.1 checker"]["data"]["kind"] == "generated"
    assert c["C2.1 checker"]["estimate"] == pytest.approx(np.mean([5000 / 20, 5000 / 25]))
    assert c["C2.1 checker"]["n_seeds"] == 10
    # spam: printed 5000 / 185 = 27.0 -> threshold 13.5; ours 5000 / 200 and 5000 / 205 (24.7)
    assert c["C2.1 spam"]["threshold"] == pytest.approx(5000 / 185 / 2)
    assert c["C2.1 spam"]["verdict"] == "pass" and c["C2.1 spam"]["data"]["kind"] == "same"
    assert c["C2.1 spam"]["estimate"] == pytest.approx(np.mean([5000 / 200, 5000 / 205]))
    assert c["C2.1 spam"]["reason"] == "judged at sigma x 1 (no sigma scan ran)"
    assert c["C2.1 spam"]["measured"]["sigma_factor"] == 1.0
    assert c["C2.1 cover"]["verdict"] == "not-run" and "unavailable" in c["C2.1 cover"]["reason"]
    # 5000 / 800 = 6.25 (6.21 on odd folds): below half of spam's printed 27.0
    worse = by_id(table1.claims(ok(make_table(spam_dstar=800))))["C2.1 spam"]
    assert worse["verdict"] == "fail" and worse["ci_high"] < 5000 / 185 / 2
    # a fail at the only sigma run is our evidence against the paper, with the numbers that decided it
    assert worse["fail_kind"] == "disagreement" and "mechanism" not in worse
    assert worse["evidence"] == ("mean D / D* 6.23 against 13.5 at the best full accuracy's sigma (x 1); "
                                 "over the scan: x 1: D* 802, full 93.0%")
    # the selection alone at other sigmas (no full-SVM accuracy there) does not move the verdict:
    # C2.1 is judged where the full SVM is best, even when D* at sigma x 2 (300) would pass
    moved = ok(pd.concat([make_table(spam_dstar=800), pd.DataFrame(sigma_runs("spam", {2.0: 300}))]))
    c = by_id(table1.claims(moved))["C2.1 spam"]
    assert c["verdict"] == "fail" and c["fail_kind"] == "disagreement"
    # no full-SVM accuracy at x 2: no scan to choose from, judged at x 1 and said so
    assert c["measured"]["sigma_factor"] == 1.0 and c["measured"]["verdict_at_factor"] == {}
    assert c["measured"]["brackets_paper_d_star"] is False
    assert c["reason"] == "judged at sigma x 1 (no sigma scan ran)"


@pytest.mark.parametrize("usps_dstar", [800, 4000])
def test_c21_on_substitute_data_is_not_comparable(usps_dstar):
    """usps (9298 ESL images, not the paper's 11000): pass or fail, the verdict is not the paper's."""
    c = by_id(table1.claims(ok(make_table(usps_dstar=usps_dstar))))["C2.1 usps"]
    assert c["verdict"] == "not-comparable"
    assert c["measured_verdict"] == ("pass" if usps_dstar == 800 else "fail")
    assert c["estimate"] == pytest.approx(np.mean([5000 / usps_dstar, 5000 / (usps_dstar + 5)]))
    assert c["data"]["kind"] == "substitute" and "9298" in c["data"]["note"]
    assert c["reason"].startswith("substitute data (ESL's USPS")


def test_c21_adult_states_why_the_selection_never_stops():
    t = pd.DataFrame([run("adult", a, s, 0.82, d_star=500, D=500) for a in table1.ARMS for s in FOLDS])
    c = by_id(table1.claims(t))["C2.1 adult"]
    assert c["verdict"] == "not-comparable" and c["estimate"] == pytest.approx(1.0)
    assert c["threshold"] == pytest.approx(500 / 105 / 2)
    assert "d = 104" in c["reason"] and "3-16% of tries" in c["reason"]


def test_c22_small_loss_on_low_rank_larger_on_digits():
    c = by_id(table1.claims(ok(make_table())))
    assert c["C2.2 checker SVM"]["estimate"] == pytest.approx(0.51)
    assert c["C2.2 checker SVM"]["verdict"] == "pass" and c["C2.2 checker SVM"]["side"] == "less"
    # digits: one-sided against the paper's own loss + 1 point (usps SVM 97.96 - 96.85 = 1.11 -> 2.11;
    # LS 1.86 -> 2.86; mnist SVM 6.41 -> 7.41)
    assert c["C2.2 usps SVM"]["side"] == "less"
    assert c["C2.2 usps SVM"]["threshold"] == pytest.approx(97.96 - 96.85 + 1.0)
    assert c["C2.2 usps LS"]["estimate"] == pytest.approx(1.98) and c["C2.2 usps LS"]["verdict"] == "pass"
    assert c["C2.2 usps LS"]["measured"] == {"reduction_ours": pytest.approx(5000 / 802.5),
                                             "reduction_paper": pytest.approx(5000 / 820)}
    assert c["C2.2 mnist SVM"]["n_seeds"] == 5 and c["C2.2 mnist SVM"]["verdict"] == "pass"
    assert c["C2.2 mnist SVM"]["threshold"] == pytest.approx(96.30 - 89.89 + 1.0)
    assert c["C2.2 mnist LS"]["verdict"] == "not-run" and c["C2.2 adult SVM"]["verdict"] == "not-run"
    # checker loses 2 points: not "almost the same accuracy"
    worse = by_id(table1.claims(ok(make_table(checker_small=(0.98, 0.993)))))
    assert worse["C2.2 checker SVM"]["verdict"] == "fail"
    assert worse["C2.2 checker SVM"]["fail_kind"] == "disagreement"


def test_c22_digits_pass_below_the_papers_loss_and_fail_well_above_it():
    # usps SVM loses 0.4 point (98.0 - 97.6), less than the paper's 1.11: supports "slightly reduced"
    small = by_id(table1.claims(ok(make_table(usps_small=(0.976, 0.899)))))["C2.2 usps SVM"]
    assert small["estimate"] == pytest.approx(0.38) and small["ci_high"] < 2.11
    assert small["verdict"] == "pass" and "fail_kind" not in small
    assert small["reason"] == "reduction D / D*: ours 6.2x, the paper's 6.1x"
    # 2.98 points [2.85, 3.11], well above 1.11 + 1: a disagreement, with the loss and the reduction
    big = by_id(table1.claims(ok(make_table())))["C2.2 usps SVM"]
    assert big["estimate"] == pytest.approx(2.98) and big["ci_low"] > 2.11
    assert big["verdict"] == "fail" and big["fail_kind"] == "disagreement"
    assert big["evidence"] == ("the small set loses 2.98 points [2.85, 3.11], more than 2.11, at a reduction "
                               "of 6.2x (the paper's 6.1x)")
    # the same loss at D* = 4000 (reduction 1.2x against the paper's 6.1x) says nothing of the paper's
    held = by_id(table1.claims(ok(make_table(usps_small=(0.976, 0.899), usps_dstar=4000))))["C2.2 usps SVM"]
    assert held["verdict"] == "inconclusive" and held["measured_verdict"] == "pass"
    assert held["reason"].startswith("our small set is not a comparable reduction (1.2x against the paper's 6.1x")


@pytest.mark.parametrize(("times", "verdict"), [
    ({10_000: 1.0, 30_000: 3.0, 100_000: 10.0}, "pass"),
    ({10_000: 1.0, 30_000: 9.0, 100_000: 100.0}, "fail"),   # quadratic in n
])
def test_c23_slope_of_selection_time(times, verdict):
    c = by_id(table1.claims(ok(make_table(cost=times))))["C2.3"]
    assert c["verdict"] == verdict
    # a fail is our evidence against the paper (no mechanism stated), with its evidence line
    assert c.get("fail_kind") == ("disagreement" if verdict == "fail" else None)
    assert c["n_seeds"] == 5 and c["measured"]["n"] == [10_000, 30_000, 100_000]
    assert list(selection_cost(make_table(cost=times))["reps"]) == [5, 5, 5]


def test_c24_equivalence_with_the_papers_full_rff_accuracy():
    c = by_id(table1.claims(ok(make_table())))
    # spam: 93.00 vs the paper's 92.98 (SVM) and 92.87 (LS), folds within 0.2 points
    assert c["C2.4 spam SVM"]["verdict"] == "pass"
    assert c["C2.4 spam SVM"]["estimate"] == pytest.approx(0.02, abs=1e-9)
    assert c["C2.4 spam SVM"]["ci_low"] == 0.0            # the interval of the difference holds 0
    assert c["C2.4 checker LS"]["verdict"] == "pass"      # 100.00 vs 100.00
    assert c["C2.4 cover SVM"]["verdict"] == "not-run" and c["C2.4 cover SVM"]["data"]["kind"] == "same"
    # usps is a substitute: 98.00 against the paper's 97.96 is not a pass of the paper's number
    assert c["C2.4 usps SVM"]["verdict"] == "not-comparable" and c["C2.4 usps SVM"]["measured_verdict"] == "pass"
    assert c["C2.4 usps LS"]["measured_verdict"] == "fail"          # 90.00 against 98.11
    assert c["C2.4 mnist SVM"]["verdict"] == "not-comparable" and c["C2.4 mnist SVM"]["n_seeds"] == 5
    assert c["C2.4 coil SVM"]["verdict"] == "not-run"               # no runs: nothing to compare
    far = by_id(table1.claims(ok(make_table(spam_full=0.90))))["C2.4 spam SVM"]
    assert far["verdict"] == "fail" and far["ci_low"] > 2.0   # 2.98 points below the paper
    # the paper's sigma is unnamed and full accuracy moves with sigma: a limitation of our run
    assert far["fail_kind"] == "limitation" and "sigma" in far["mechanism"]
    assert far["settle"] == "the paper's sigma for this dataset"
    # 2 points below with folds spread over +-6 points: the interval straddles 2
    noisy = by_id(table1.claims(ok(make_table(spam_full=0.9098, spam_noise=0.03))))["C2.4 spam SVM"]
    assert noisy["verdict"] == "inconclusive"


def test_claims_without_runs_are_not_run():
    t = pd.DataFrame([run("cover", a, 0, 0.0, status="unavailable") for a in table1.ARMS])
    claims = by_id(table1.claims(t))
    assert {c["verdict"] for c in claims.values()} == {"not-run"}
    assert all(c["reason"] for c in claims.values())
    assert len(claims) == 9 + 8 + 1 + 18
    assert all(c["data"]["kind"] in ("same", "substitute", "generated") and c["data"]["note"]
               for c in claims.values())


def test_every_claim_says_on_what_data_it_was_judged():
    claims = by_id(table1.claims(ok(make_table())))
    kinds = {cid: c["data"]["kind"] for cid, c in claims.items()}
    # a relative claim on substitute data keeps its verdict (2.98 points lost against 2.11 allowed)
    assert kinds["C2.2 usps SVM"] == "substitute" and claims["C2.2 usps SVM"]["verdict"] == "fail"
    assert kinds["C2.2 usps LS"] == "substitute" and claims["C2.2 usps LS"]["verdict"] == "pass"
    assert kinds["C2.3"] == "generated" and kinds["C2.4 spam LS"] == "same"
    assert {k.split()[1] for k, v in kinds.items() if v == "substitute"} == {"coil", "usps", "adult", "mnist"}
    # a printed-number claim on substitute data is never a pass or fail
    assert not any(c["verdict"] in ("pass", "fail") for cid, c in claims.items()
                   if kinds[cid] == "substitute" and cid.startswith(("C2.1", "C2.4")))


def test_every_study_of_the_paper_marks_its_claims_data():
    from rfrepro.harness.catalog import options
    from rfrepro.harness.report.claims import DATA_KINDS

    studies = sorted(s for s in options("experiment") if s.startswith("schleif2016/"))
    assert studies == ["schleif2016/fig1", "schleif2016/table1"]   # a new study joins this test
    t = make_table()
    for study in studies:
        for table in (t, ok(t), t[t["status"] != "ok"]):
            claims = check_claims(study_module(study).claims(table))   # refuses a claim without data
            assert all(c["data"]["kind"] in DATA_KINDS and c["data"]["note"] for c in claims)
    assert fig1.claims(t) == [] and len(table1.claims(t)) == 9 + 8 + 1 + 18


def test_dstar_against_sigma_table():
    t = pd.concat([make_table(), pd.DataFrame(sigma_runs("checkerboard", {0.5: 100, 2.0: 10})
                                              + sigma_runs("spam", {0.5: 400}))])
    g = common.dstar_by_sigma(t).set_index(["dataset", "factor"])
    # x 1 is the small arms' selection (20 / 25 by fold); x 0.5 and x 2 the dstar_sigma arm's
    assert g.loc[("checkerboard", 1.0), "d_star"] == pytest.approx(22.5)
    assert g.loc[("checkerboard", 0.5), "d_star"] == pytest.approx(102.5)
    assert g.loc[("checkerboard", 2.0), "sigma"] == pytest.approx(4.0)
    assert g.loc[("checkerboard", 2.0), "folds"] == 10 and ("spam", 2.0) not in g.index
    # the selection_cost runs (checker, D* = 1000) count for no factor: x 1 above is 22.5
    assert len(g) == 7                   # checker x 3, spam x 2, usps and mnist x 1
    text = table1.summary(t)
    checker = line(text, "| checker | 20 |")
    assert checker[2].startswith("102 [") and checker[2].endswith("(sigma 1)")
    assert checker[4].startswith("12 [") and checker[5] == "5000" and checker[6] == "10"
    # a column per factor present, headed "x 0.5" etc.; "-" where a dataset has none at that factor
    assert "| data | paper D* | x 0.5 | x 1 | x 2 | D_max | folds | data used |" in text
    spam = line(text, "| spam | 185 |")
    assert spam[2].startswith("402 [") and spam[3].startswith("202 [") and spam[4] == "-"
    # the per-dataset claims and Table 1 columns ignore the sigma arm
    checker = {c["id"]: c for c in table1.claims(t)}["C2.1 checker"]
    curve = {r["factor"]: r["d_star"] for r in checker["measured"]["curve"]}
    assert curve == {0.5: 102.5, 1.0: 22.5, 2.0: 12.5}
    # the selection alone has no full accuracy: judged at sigma x 1, the only one with a full SVM
    assert checker["measured"]["sigma_factor"] == 1.0 and checker["measured"]["equal_accuracy_factors"] == [1.0]
    assert checker["verdict"] == "pass" and checker["estimate"] == pytest.approx(225.0)
    assert checker["measured"]["brackets_paper_d_star"] is True          # 12.5 .. 102.5 holds 20
    # our checker D* 130-135 against the paper's 20, no scan: a disagreement at sigma x 1
    far_t = pd.DataFrame([run("checkerboard", a, s, 1.0, d_star=130 + 5 * (s % 2)) for a in table1.ARMS
                          for s in FOLDS])
    far = by_id(table1.claims(far_t))["C2.1 checker"]
    assert far["verdict"] == "fail" and far["reason"] == "judged at sigma x 1 (no sigma scan ran)"
    assert far["fail_kind"] == "disagreement" and far["evidence"].startswith("mean D / D* 37.7 against 125 ")
    # the same D* on every fold: the seeds vary nothing D* depends on, no verdict
    same_t = pd.DataFrame([run("checkerboard", a, s, 1.0, d_star=130) for a in table1.ARMS for s in FOLDS])
    same = by_id(table1.claims(same_t))["C2.1 checker"]
    assert same["verdict"] == "inconclusive" and same["deterministic"] is True
    assert table1.claims(t)[0] == table1.claims(make_table())[0]
    assert "D* against sigma" not in table1.summary(make_table())
    labels = table1.figure(t).axes[1].get_legend_handles_labels()[1]
    assert "D* at a smaller sigma" in labels and "D* at a larger sigma" in labels


def test_c21_is_judged_at_the_sigma_of_the_best_full_accuracy():
    # spam D* 800 at sigma x 1 (5000 / 802.5 = 6.2, a fail); at x 2 the full SVM is 2 points better
    # and D* = 300 (16.5 > 13.5); at x 4 D* = 100 would pass by more, but the full SVM is 8 points worse
    t = ok(pd.concat([make_table(spam_dstar=800),
                      pd.DataFrame(scan_runs("spam", {2.0: (0.95, 300), 4.0: (0.85, 100)}))]))
    c = by_id(table1.claims(t))
    s = c["C2.1 spam"]
    assert s["verdict"] == "pass" and s["estimate"] == pytest.approx(np.mean([5000 / 300, 5000 / 305]))
    assert s["measured"]["sigma_factor"] == 2.0 and s["measured"]["equal_accuracy_factors"] == [2.0]
    assert s["measured"]["verdict_at_factor"] == {2.0: "pass"}
    assert s["reason"] == "judged at sigma x 2, the best full-SVM accuracy (94.99%)"   # fold noise: -0.01
    assert [r["factor"] for r in s["measured"]["curve"]] == [1.0, 2.0, 4.0]
    # Table 1's columns and the claims on them ignore the scan's runs (sigma_scale != 1)
    assert c["C2.4 spam SVM"]["estimate"] == pytest.approx(0.02, abs=1e-9)
    assert c["C2.2 checker SVM"]["estimate"] == pytest.approx(0.51)
    g = common.dstar_by_sigma(t).set_index(["dataset", "factor"])
    assert g.loc[("spam", 2.0), "d_star"] == pytest.approx(302.5) and g.loc[("spam", 1.0), "d_star"] == 802.5
    text = table1.summary(t)
    assert "| sigma x | full SVM % | small SVM % | D* | D / D* |" in text
    assert line(text, "| 2 | 94.99 |") == ["2", "94.99", "91.99", "302", "16.5"]
    assert line(text, "| spam | 185 |")[2:5] == ["802 [801, 804] (sigma 2)", "302 [301, 304] (sigma 4)",
                                                 "102 [101, 104] (sigma 8)"]
    # the other way round: the best full accuracy is at x 1 (D* 800, a fail); x 2's pass does not rescue it
    t = ok(pd.concat([make_table(spam_dstar=800), pd.DataFrame(scan_runs("spam", {2.0: (0.90, 300)}))]))
    s = by_id(table1.claims(t))["C2.1 spam"]
    assert s["verdict"] == "fail" and s["fail_kind"] == "disagreement"
    assert s["measured"]["sigma_factor"] == 1.0 and s["measured"]["equal_accuracy_factors"] == [1.0]
    assert s["evidence"] == ("mean D / D* 6.23 against 13.5 at the best full accuracy's sigma (x 1); over the "
                             "scan: x 1: D* 802, full 93.0%, x 2: D* 302, full 90.0%")


def test_c21_withheld_when_the_verdict_flips_among_sigmas_of_equal_full_accuracy():
    # x 2's full SVM is 0.07 points better on average, folds +-0.3: not significantly better than x 1's.
    # At x 2 (the best mean) D* = 800 fails; at x 1 D* = 200 passes: the verdict hangs on sigma
    t = ok(pd.concat([make_table(),
                      pd.DataFrame(scan_runs("spam", {2.0: (0.931, 800), 8.0: (0.80, 50)}, noise=0.003))]))
    s = by_id(table1.claims(t))["C2.1 spam"]
    assert s["measured"]["sigma_factor"] == 2.0 and s["measured"]["equal_accuracy_factors"] == [1.0, 2.0]
    assert s["measured"]["verdict_at_factor"] == {1.0: "pass", 2.0: "fail"}
    assert s["verdict"] == "inconclusive" and s["measured_verdict"] == "fail"
    assert s["reason"].startswith("depends on the unstated sigma: among the sigmas of equal full accuracy, "
                                  "pass at x 1, fail at x 2")
    # the same scan with D* 200 at x 2 too: both equal-accuracy sigmas pass, so the claim does
    t = ok(pd.concat([make_table(),
                      pd.DataFrame(scan_runs("spam", {2.0: (0.931, 200), 8.0: (0.80, 50)}, noise=0.003))]))
    s = by_id(table1.claims(t))["C2.1 spam"]
    assert s["verdict"] == "pass" and s["measured"]["verdict_at_factor"] == {1.0: "pass", 2.0: "pass"}


def test_table1_figure_has_three_panels():
    fig = table1.figure(make_table())
    assert len(fig.axes) == 3


def test_paper_reference_values():
    assert PAPER["mnist"]["time"]["svm_full"] == pytest.approx(204.0)
    assert {k: v["D"] for k, v in PAPER.items() if v["D"] != 5000} == {
        "adult": 500, "code_rna": 500, "cover": 1000, "forest": 1000}


# ----------------------------------------------------------------------------- Fig. 1


def test_relative_error():
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert fig1.rel_fro(K, K) == 0.0
    assert fig1.rel_fro(2 * K, K) == pytest.approx(1.0)


def _kernel_image(root, name: str, K: np.ndarray, labels: np.ndarray, approx: np.ndarray) -> str:
    rel = f"artifacts/schleif2016-fig1/{name}-kernel_image.npz"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    np.savez(root / rel, approx=approx, exact=K, labels=labels)
    return rel


def test_fig1_reads_artifacts_under_the_results_root(results_root):
    rng = np.random.RandomState(0)
    labels = np.repeat([0, 1], 5)
    K = np.where(labels[:, None] == labels[None, :], 0.8, 0.1) + np.eye(10) * 0.2
    rows = []
    for name in ("usps", "coil20"):
        for arm, noise in (("full", 0.01), ("small", 0.05)):
            rel = _kernel_image(results_root, f"{name}-{arm}", K, labels,
                                K + noise * rng.standard_normal(K.shape))
            rows.append({"status": "ok", "arm": arm, "dataset.name": name, "seed": 0, "smoke": False,
                         "artifacts.kernel_image": rel,
                         # [cos, sin] maps: D frequencies give 2 D columns
                         "fitted.n_features_out": 10000 if arm == "full" else 240,
                         "fitted.n_selected": np.nan if arm == "full" else 120,
                         "method.n_components": 5000 if arm == "full" else np.nan})
    table = pd.DataFrame(rows)
    assert "full" not in fig1.images(table)["usps"]  # study code reads only the root the outputs step gives
    table.attrs["results_root"] = str(results_root)
    imgs = fig1.images(table)
    assert set(imgs["usps"]) >= {"exact", "full", "small", "labels"}
    assert imgs["usps"]["small_D"] == 120 and imgs["usps"]["full_D"] == 5000
    # no claim on this figure: the paper states nothing measurable about it
    assert fig1.claims(table) == []
    assert len(fig1.figure(table).axes) == 6
    # outputs rebuilt for another results root (paths.results=, a reference packaged from another
    # folder) read the images under the table's own root
    other = results_root.parent / "elsewhere"
    results_root.rename(other)
    assert "full" not in fig1.images(table)["usps"]
    table.attrs["results_root"] = str(other)
    assert set(fig1.images(table)["usps"]) >= {"exact", "full", "small", "labels"}
    # a missing file is a "not run" panel, not a crash
    (other / rows[0]["artifacts.kernel_image"]).unlink()
    assert "full" not in fig1.images(table)["usps"]


def test_dstar_sigma_arm_runs_the_selection_alone_at_scaled_sigma():
    from rfrepro.harness.run.config import compose
    from rfrepro.harness.run.grid import expand
    from rfrepro.kernels import resolve_bandwidth
    from rfrepro.runner.steps import kernel_params, resolve_hyperparameters

    every = expand("schleif2016/table1")
    jobs = [j for j in every if j.arm == "dstar_sigma"]
    assert len(jobs) == 3 * 2 * 10                     # coil, usps, adult x (0.5, 2) x folds
    assert not any(f"dataset={d}" in j.overrides for j in jobs for d in ("spam", "checkerboard"))
    X = np.random.RandomState(0).standard_normal((50, 2))
    job = next(j for j in jobs if "dataset=usps" in j.overrides and "++kernel.sigma_scale=0.5" in j.overrides)
    cfg = compose(job.overrides)
    assert cfg.model.name == "none" and cfg.eval.predict is False and cfg.method.max_components == 5000
    run_cfg, extra = resolve_hyperparameters(cfg, None, X, None)
    # usps's median rule halved; the map reads it, the exact kernel gets no sigma_scale key
    rule = resolve_bandwidth(X, "median", kernel="gaussian", random_state=cfg.seed)
    assert run_cfg.kernel.sigma == pytest.approx(0.5 * rule) and run_cfg.method.sigma == pytest.approx(0.5 * rule)
    assert extra["kernel"] == {"name": "gaussian", "sigma_rule": "median", "sigma_scale": 0.5,
                               "sigma": pytest.approx(0.5 * rule)}
    assert kernel_params(run_cfg) == {"sigma": pytest.approx(0.5 * rule)}
    # C2.1's scan: the full and the small SVM on spam and checker at sigma x 1/4 .. 32, 10 folds each
    for arm in ("sigma_svm_full", "sigma_svm_small"):
        scan = [j for j in every if j.arm == arm]
        assert len(scan) == 2 * 7 * 10
        assert {o for j in scan for o in j.overrides if o.startswith("++kernel.sigma_scale=")} == {
            f"++kernel.sigma_scale={f}" for f in (0.25, 0.5, 2.0, 4.0, 8.0, 16.0, 32.0)}
    job = next(j for j in every if j.arm == "sigma_svm_small" and "dataset=checkerboard" in j.overrides
               and "++kernel.sigma_scale=0.5" in j.overrides)
    cfg = compose(job.overrides)
    assert cfg.model.name == "linear_svm" and cfg.method.name == "rff_selection"
    assert cfg.method.max_components == 5000
    run_cfg, extra = resolve_hyperparameters(cfg, None, X, None)
    # checker's sigma 0.52 halved
    assert run_cfg.kernel.sigma == pytest.approx(0.26) and run_cfg.method.sigma == pytest.approx(0.26)
    assert extra["kernel"] == {"name": "gaussian", "sigma_rule": 0.52, "sigma_scale": 0.5, "sigma": 0.26}


def test_fig1_shows_means_of_squares():
    K = np.arange(25.0).reshape(5, 5)
    # the 4 x 4 corner in 2 x 2 squares; the fifth row and column fill none
    np.testing.assert_array_equal(fig1.block_means(K, 2), [[3.0, 5.0], [13.0, 15.0]])
    np.testing.assert_array_equal(fig1.block_means(K, 1), K)
