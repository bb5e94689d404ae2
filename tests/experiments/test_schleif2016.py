"""Schleif et al. (2016) Table 1 / Fig. 1 outputs on small hand-made results tables."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from rfrepro.results.outputs import study_module

# imported the way the harness imports a study (the experiments/ folder is not a package on the path)
table1 = study_module("schleif2016/table1")
fig1 = study_module("schleif2016/fig1")
common = sys.modules["experiments.schleif2016.common"]
PAPER, column, per_dataset, selection_cost = (common.PAPER, common.column, common.per_dataset,
                                              common.selection_cost)

METHOD = {"full": "rks_cos", "small": "rff_selection"}
MODEL = {"svm": "linear_svm", "ls": "ls"}


def run(dataset: str, arm: str, seed: int, acc: float, *, d_star: int = 100, D: int = 5000,
        total: float = 3.0, load: float = 1.0, label: str | None = None, status: str = "ok") -> dict:
    model, kind = arm.split("_")
    row = {"status": status, "arm": label or arm, "dataset.name": dataset, "seed": seed,
           "method.name": METHOD[kind], "model.name": MODEL[model], "smoke": False}
    if status != "ok":
        return {**row, "error": "DatasetUnavailable: no mirror"}
    row.update({
        "metrics.accuracy": acc, "timings.total_s": total, "timings.load_s": load,
        "timings.map_fit_s": 0.5, "fitted.n_features_out": D if kind == "full" else d_star,
        "method.n_components": D if kind == "full" else np.nan,
        "method.max_components": D if kind == "small" else np.nan,
        "kernel.sigma": 2.0, "dataset.n_train": 90, "dataset.n_test": 10, "dataset.d": 3,
    })
    return row


def cost_runs(times: dict[int, float]) -> list[dict]:
    return [{"status": "ok", "arm": "selection_cost", "dataset.name": "checkerboard", "seed": s,
             "method.name": "rff_selection", "model.name": "none", "dataset.n_train": n,
             "timings.map_fit_s": t * (1 + 0.01 * s), "fitted.n_features_out": 1000, "smoke": False}
            for n, t in times.items() for s in range(3)]


def make_table(*, checker_small=(0.995, 0.993), usps_small=(0.95, 0.88), spam_full=0.93,
               cost=None) -> pd.DataFrame:
    rows = []
    for seed, jitter in enumerate((-0.001, 0.001)):
        # checker: full 100%, small loses less than a point
        rows += [run("checkerboard", "svm_full", seed, 1.0, d_star=20),
                 run("checkerboard", "ls_full", seed, 1.0),
                 run("checkerboard", "svm_small", seed, checker_small[0] + jitter, d_star=20),
                 run("checkerboard", "ls_small", seed, checker_small[1] + jitter, d_star=30)]
        # usps: the small set loses a few points (the mnist-like case)
        rows += [run("usps", "svm_full", seed, 0.98 + jitter), run("usps", "ls_full", seed, 0.90),
                 run("usps", "svm_small", seed, usps_small[0], d_star=800),
                 run("usps", "ls_small", seed, usps_small[1], d_star=800)]
        rows += [run("spam", "svm_full", seed, spam_full), run("spam", "ls_full", seed, spam_full),
                 run("spam", "svm_small", seed, 0.9, d_star=200), run("spam", "ls_small", seed, 0.9, d_star=200)]
        # mnist runs carry their own arm labels; the column comes from method + model
        rows += [run("mnist", "svm_full", seed, 0.96, label="svm_full_mnist"),
                 run("mnist", "svm_small", seed, 0.90, d_star=250, label="svm_small_mnist")]
        rows += [run("cover", a, seed, 0.0, status="unavailable") for a in table1.ARMS]
    rows += cost_runs(cost or {10_000: 1.0, 30_000: 3.0, 100_000: 10.0})
    return pd.DataFrame(rows)


def ok(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["status"] == "ok"]


def by_id(claims: list[dict]) -> dict[str, dict]:
    return {c["id"]: c for c in claims}


def test_columns_come_from_method_and_model():
    t = make_table()
    cols = column(t)
    assert cols[t["arm"] == "svm_small_mnist"].eq("svm_small").all()
    assert cols[t["arm"] == "selection_cost"].isna().all()


def test_per_dataset_means_times_and_dstar():
    g = per_dataset(make_table())
    c = g[(g["dataset"] == "checkerboard") & (g["arm"] == "svm_small")].iloc[0]
    assert c["acc_mean"] == pytest.approx(99.5) and c["acc_std"] == pytest.approx(100 * 0.002 / np.sqrt(2))
    assert c["cycle_s"] == pytest.approx(2.0)          # total_s - load_s
    assert c["d_star"] == 20 and c["D"] == 5000 and c["folds"] == 2
    m = g[(g["dataset"] == "mnist") & (g["arm"] == "svm_full")].iloc[0]
    assert m["acc_mean"] == pytest.approx(96.0)
    assert "cover" not in set(g["dataset"])


def test_summary_prints_ours_beside_the_paper_with_the_difference():
    text = table1.summary(make_table())
    spam = next(line for line in text.splitlines() if line.startswith("| spam |"))
    cells = [c.strip() for c in spam.split("|")[1:-1]]
    # SVM full: ours 93.00 +- 0.00, paper 92.98 +- 0.76, diff +0.02
    assert cells[5:8] == ["93.00 +- 0.00", "92.98 +- 0.76", "+0.02"]
    assert cells[4] == "200 +- 0 (185)"                # D* ours (paper)
    cover = next(line for line in text.splitlines() if line.startswith("| cover |"))
    assert "not run: data unavailable" in cover
    coil = next(line for line in text.splitlines() if line.startswith("| coil |"))
    assert "not run: not in this sweep" in coil
    assert "log-log slope of time against n: 1.00" in text


def test_c21_ratio_of_D_to_dstar():
    c = by_id(table1.claims(ok(make_table())))["C2.1"]
    assert c["measured"]["D_over_Dstar"]["checker"] == pytest.approx(5000 / 25, rel=1e-3)
    assert c["measured"]["D_over_Dstar"]["usps"] == pytest.approx(6.2, abs=0.05)
    assert c["measured"]["paper_D_over_Dstar"]["checker"] == 250.0
    assert c["verdict"] == "pass"
    t = make_table()
    t.loc[(t["dataset.name"] == "usps") & (t["method.name"] == "rff_selection"), "fitted.n_features_out"] = 2000
    assert by_id(table1.claims(ok(t)))["C2.1"]["verdict"] == "fail"   # 5000 / 2000 = 2.5 < 5


def test_c22_small_loss_on_low_rank_larger_on_digits():
    c = by_id(table1.claims(ok(make_table())))["C2.2"]
    assert c["measured"]["loss_points"]["checker"]["svm"] == pytest.approx(0.5)
    assert c["measured"]["loss_points"]["mnist"]["svm"] == pytest.approx(6.0)
    assert c["verdict"] == "pass"
    # checker loses 2 points: not "< 1 point"
    worse = by_id(table1.claims(ok(make_table(checker_small=(0.98, 0.993)))))["C2.2"]
    assert worse["verdict"] == "fail"
    # usps loses less than checker: not "larger on the digits"
    flat = by_id(table1.claims(ok(make_table(usps_small=(0.979, 0.899)))))["C2.2"]
    assert flat["verdict"] == "fail"


@pytest.mark.parametrize(("times", "verdict"), [
    ({10_000: 1.0, 30_000: 3.0, 100_000: 10.0}, "pass"),
    ({10_000: 1.0, 30_000: 9.0, 100_000: 100.0}, "fail"),   # quadratic in n
])
def test_c23_slope_of_selection_time(times, verdict):
    c = by_id(table1.claims(ok(make_table(cost=times))))["C2.3"]
    assert c["verdict"] == verdict
    assert c["measured"]["n"] == [10_000, 30_000, 100_000]
    cost = selection_cost(make_table(cost=times))
    assert list(cost["reps"]) == [3, 3, 3]


def test_c24_judged_on_same_data_only():
    c = by_id(table1.claims(ok(make_table())))["C2.4"]
    # usps LS full is 8 points below the paper's 98.11 but usps is other data: listed apart
    assert c["measured"]["different_data_diff_points"]["usps"]["ls_full"] == pytest.approx(90 - 98.11)
    assert c["measured"]["same_data_diff_points"]["spam"]["svm_full"] == pytest.approx(93 - 92.98, abs=1e-9)
    assert c["verdict"] == "pass"
    far = by_id(table1.claims(ok(make_table(spam_full=0.90))))["C2.4"]
    assert far["verdict"] == "fail"                 # spam 2.98 points below the paper


def test_claims_without_runs_are_not_run():
    t = pd.DataFrame([run("cover", a, 0, 0.0, status="unavailable") for a in table1.ARMS])
    claims = table1.claims(t)
    assert [c["verdict"] for c in claims] == ["not-run"] * 4


def test_table1_figure_has_three_panels():
    fig = table1.figure(make_table())
    assert len(fig.axes) == 3


def test_paper_reference_values():
    assert PAPER["mnist"]["time"]["svm_full"] == pytest.approx(204.0)
    assert {k: v["D"] for k, v in PAPER.items() if v["D"] != 5000} == {
        "adult": 500, "code_rna": 500, "cover": 1000, "forest": 1000}


# ----------------------------------------------------------------------------- Fig. 1


def test_block_contrast_and_relative_error():
    labels = np.array([0, 0, 1, 1])
    K = np.array([[1.0, 0.8, 0.1, 0.1], [0.8, 1.0, 0.1, 0.1], [0.1, 0.1, 1.0, 0.6], [0.1, 0.1, 0.6, 1.0]])
    assert fig1.block_contrast(K, labels) == pytest.approx(0.7 - 0.1)
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
        for arm, noise, D in (("full", 0.01, 5000), ("small", 0.05 if name == "usps" else 0.5, 120)):
            approx = K + noise * rng.standard_normal(K.shape)
            if name == "coil20" and arm == "small":
                approx = np.full_like(K, 0.3)    # the block structure is lost
            rel = _kernel_image(results_root, f"{name}-{arm}", K, labels, approx)
            rows.append({"status": "ok", "arm": arm, "dataset.name": name, "seed": 0, "smoke": False,
                         "artifacts.kernel_image": rel, "fitted.n_features_out": D})
    table = pd.DataFrame(rows)
    imgs = fig1.images(table)
    assert set(imgs["usps"]) >= {"exact", "full", "small", "labels"} and imgs["usps"]["small_D"] == 120
    c = fig1.claims(table)[0]
    assert c["measured"]["USPS"]["block_contrast"]["exact"] == pytest.approx(0.7)
    assert c["measured"]["coil"]["block_contrast"]["small"] == pytest.approx(0.0)
    assert c["verdict"] == "fail"                   # coil's small set lost the blocks
    assert len(fig1.figure(table).axes) == 6
    # a missing file is a "not run" panel, not a crash
    (results_root / rows[0]["artifacts.kernel_image"]).unlink()
    assert "full" not in fig1.images(table)["usps"]
