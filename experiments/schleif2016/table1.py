"""Schleif, Kaban and Tino (2016) Table 1: full vs small RFF sets, SVM and LS, 10-fold CV.

Every claim is judged over the folds of the 10-fold cross-validation (the
fold is the run's seed, which also seeds the random features), with a 95%
t interval: ``pass`` when the interval lies wholly on the claim's side of its
threshold, ``fail`` when wholly on the other, ``inconclusive`` otherwise.
The full and small arms of one model share their folds, so accuracy losses
are paired by fold.

Every claim carries ``data``: the paper's data (``same``), ``generated`` by
the paper's recipe (checker), or a ``substitute`` (coil, usps, adult, mnist:
see ``DATA_DIFFERS``). A claim about a number the paper prints (C2.1's D / D*,
C2.4's accuracies) measured on a substitute is ``not-comparable``, with our
measurement and the verdict it would have had (``measured_verdict``) kept;
C2.2 compares our own full and small arms and stays judged on substitutes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.schleif2016.common import (
    ARM_LABELS,
    ARMS,
    DATA_DIFFERS,
    DATASETS,
    GOAL_DATASETS,
    GOAL_FACTOR,
    GOAL_POINTS,
    PAPER,
    cell,
    claim_data,
    data_note,
    dataset_status,
    dstar_by_sigma,
    fold_values,
    loglog_slope,
    per_dataset,
    selection_cost,
    sigma_scan,
    table1_runs,
)
from rfrepro.harness.report.claims import (
    FAIL,
    INCONCLUSIVE,
    NOT_RUN,
    PASS,
    disagreement,
    judge,
    limitation,
    mean_interval,
    not_comparable,
    not_run,
    with_data,
    withhold,
)
from rfrepro.harness.report.plots import finished

ARM_STYLE = {"svm_full": ("tab:blue", "o"), "svm_small": ("tab:cyan", "s"),
             "ls_full": ("tab:red", "^"), "ls_small": ("tab:orange", "v")}
MODELS = {"svm": "SVM", "ls": "LS"}

#: The paper's sentence on each dataset's reduction and accuracy (Sec. 5, beside Table 1).
PAPER_SAYS = {
    "coil20": "\"For the coil data we see that the identified small RFF-model contains 29-times less "
              "features than the full model while losing ~2% discrimination accuracy on the test set.\"",
    "spam": "\"For the spam database we observe a similar result with 27-times less features and a small "
            "decay in the accuracy of 3% for SVM.\"",
    "checkerboard": "\"At the simulated checkerboard data we have almost the same accuracy in the reduced "
                    "set while the number of features is reduced by a factor of 250.\"",
    "usps": "\"For the USPS data we have ~6 times less features with almost the same prediction accuracy, "
            "slightly reduced by 1-2%.\"",
    "adult": "\"The Adult dataset keeps almost the same accuracy while having 5-times less features\"",
    "code_rna": "\"similar observations can be made for the code-dna data\" (Table 1: D = 500, D* = 20)",
    "mnist": "\"For MNIST the accuracy drops by 7-8% with 21 times less features.\"",
    "cover": "\"Finally the cover data are represented by 28 times less features with a similar good "
             "accuracy like the full model\"",
    "forest": "\"the forest data could be represented with 22 times less features with a slight decay on "
              "7% in the accuracy.\"",
}
WHERE = " (Sec. 5)"

#: C2.2's datasets: "almost the same accuracy" (loss < 1 point), and the digit sets, whose sentences
#: report a loss (usps "slightly reduced by 1-2%", mnist "drops by 7-8%"): the small set loses no more
#: than the paper's Table 1 loss plus C22_MARGIN (a cost reported, not a promise to lose that much).
LOW_RANK, DIGITS = ("checkerboard", "adult"), ("usps", "mnist")
C22_POINTS = 1.0
C22_MARGIN = 1.0
#: C2.3: the log-log slope of selection time against n lies below the midpoint of linear and quadratic.
C23_SLOPE = 1.5
#: Why adult's selection never stops (D* = D_max on every fold), from the experiments in
#: tests/features/test_rff_selection.py and the study's deviations: shown beside the C2.1 verdict.
ADULT_NEVER_STOPS = (
    "D* = D_max on every fold: not because the raw error grows with n (it does, about linearly, but "
    "eps = 1e-3 is below 1e-5 of it at every n from 1000 rows up, and D* = 500 already on 1000 rows), "
    "but because a chunk is rejected only when it raises the error, which on our 104-d one-hot, "
    "z-scored adult (rare categories reach |z| = 174) happens in 3-16% of tries (1000 to 30162 rows), "
    "so 5 rejections in a row almost never occur; on adult's 6 numeric columns alone about 45% of "
    "tries are rejected and D* = 85-250 (3 draws each on 3000 and 30162 rows; the paper: 105)")

def _fmt_time(s: float | None) -> str:
    if s is None or not np.isfinite(s):
        return "-"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.3g} s" if s < 10 else f"{s:.0f} s"


def _interval(lo: float, hi: float, digits: int = 2) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "[-]"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def side_by_side(table: pd.DataFrame) -> list[str]:
    """Every number of the paper's Table 1 (accuracies, D*) beside ours, one line each."""
    g = per_dataset(table)
    lines = [
        "### Side by side: every accuracy and D* of the paper's Table 1, and ours",
        "",
        f"Ours: mean and 95% t interval over the folds run. Goal (datasets {', '.join(DATASETS[n] for n in GOAL_DATASETS)}): "
        f"accuracy within {GOAL_POINTS:g} points of the paper's, D* within a factor of {GOAL_FACTOR:g}.",
        "",
        "| data | number | paper | ours (95% CI) | ours - paper | folds | data used | goal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, label in DATASETS.items():
        ref = PAPER[name]
        why = dataset_status(table, name)
        data = data_note(name)
        short = data.split(":")[0].split(" (")[0]     # the accuracy lines: "same" / "substitute"
        goal_row = name in GOAL_DATASETS
        # the paper's numbers are of other data: no goal to meet there
        no_goal = "n/c (substitute)" if name in DATA_DIFFERS else None
        if why is not None:
            lines.append(f"| {label} | D* | {ref['D*']} | not run: {why} | | | {data} | |")
            for arm in ARMS:
                m, sd = ref["acc"][arm]
                lines.append(f"| {label} | {ARM_LABELS[arm]} (%) | {m:.2f} +- {sd:.2f} | not run | | | {short} | |")
            continue
        small = g[(g["dataset"] == name) & g["arm"].isin(("svm_small", "ls_small"))]
        if len(small):
            s0 = small.iloc[0]
            ratio = s0["d_star"] / ref["D*"]
            goal = ("met" if 1 / GOAL_FACTOR <= ratio <= GOAL_FACTOR else "not met") if goal_row else "-"
            goal = no_goal if goal_row and no_goal else goal
            lines.append(f"| {label} | D* (D = {int(s0['D'])}) | {ref['D*']} | {s0['d_star']:.0f} "
                         f"{_interval(s0['d_star_lo'], s0['d_star_hi'], 0)} | x{ratio:.2f} | {int(s0['folds'])} "
                         f"| {data} | {goal} |")
        else:
            lines.append(f"| {label} | D* | {ref['D*']} | not run | | | {data} | |")
        for arm in ARMS:
            m, sd = ref["acc"][arm]
            c = cell(g, name, arm)
            if c is None:
                lines.append(f"| {label} | {ARM_LABELS[arm]} (%) | {m:.2f} +- {sd:.2f} | not run | | | {short} | |")
                continue
            diff = c["acc_mean"] - m
            goal = ("met" if abs(diff) <= GOAL_POINTS else "not met") if goal_row else "-"
            goal = no_goal if goal_row and no_goal else goal
            lines.append(f"| {label} | {ARM_LABELS[arm]} (%) | {m:.2f} +- {sd:.2f} | {c['acc_mean']:.2f} "
                         f"{_interval(c['acc_lo'], c['acc_hi'])} | {diff:+.2f} | {int(c['folds'])} | {short} "
                         f"| {goal} |")
    return lines


def sigma_lines(table: pd.DataFrame) -> list[str]:
    """D* at each multiple of the study's sigma per dataset, beside the paper's D*, and C2.1's scan:
    full and small SVM accuracy against sigma where it ran."""
    g = dstar_by_sigma(table)
    if g.empty or not (g["factor"] != 1.0).any():
        return []
    factors = sorted(g["factor"].unique())
    head = " | ".join(f"x {f:g}" for f in factors)
    lines = ["### D* against sigma: the selection at multiples of the study's sigma (same folds and seeds)", "",
             "Mean and 95% t interval over folds, the sigma used (mean over folds) in brackets. sigma x 1 "
             "is the small arms' selection; the paper gives no sigma.", "",
             f"| data | paper D* | {head} | D_max | folds | data used |",
             "|" + "---|" * (5 + len(factors))]
    for name in DATASETS:
        rows = g[g["dataset"] == name].set_index("factor")
        if rows.empty:
            continue
        cells = []
        for f in factors:
            if f not in rows.index:
                cells.append("-")
                continue
            r = rows.loc[f]
            cells.append(f"{r['d_star']:.0f} {_interval(r['d_star_lo'], r['d_star_hi'], 0)} "
                         f"(sigma {r['sigma']:.3g})")
        lines.append(f"| {DATASETS[name]} | {PAPER[name]['D*']} | " + " | ".join(cells)
                     + f" | {int(rows['D'].iloc[0])} | {int(rows['folds'].min())} | {claim_data(name)['kind']} |")
    for name in DATASETS:
        scan = sigma_scan(table, name)
        curve = scan.groupby("factor")[["acc_full", "acc_small", "d_star"]].mean().dropna(subset=["acc_full"])
        if len(curve) < 2:
            continue
        lines += ["", f"C2.1's sigma scan, {DATASETS[name]} (SVM, mean over folds; the claim is judged at the "
                      "best full accuracy):", "", "| sigma x | full SVM % | small SVM % | D* | D / D* |",
                  "|---|---|---|---|---|"]
        D = float(g.loc[g["dataset"] == name, "D"].iloc[0])
        for f, r in curve.iterrows():
            lines.append(f"| {f:g} | {r['acc_full']:.2f} | {r['acc_small']:.2f} | {r['d_star']:.0f} "
                         f"| {D / r['d_star']:.1f} |")
    return lines


def _chosen_lams(table: pd.DataFrame) -> list[str]:
    t = table1_runs(table)
    if t.empty or "fitted.model_lam" not in t:
        return []
    t = t[t["arm"].isin(("ls_full", "ls_small"))]
    out = []
    for (name, arm), grp in t.groupby(["dataset.name", "arm"]):
        counts = grp["fitted.model_lam"].dropna().astype(float).value_counts().sort_index()
        if len(counts):
            out.append(f"- {DATASETS.get(name, name)}, {ARM_LABELS[arm]}: "
                       + ", ".join(f"{lam:g} ({int(c)}x)" for lam, c in counts.items()))
    return ["LS ridge lam chosen by leave-one-out CV on each training fold (lam: folds):", *out] if out else []


def summary(table: pd.DataFrame) -> str:
    g = per_dataset(table)
    time_lines = [
        "### Time per CV cycle (map fit + transform + train + predict, mean over folds), beside the paper's",
        "",
        "| data | sigma | " + " | ".join(f"{ARM_LABELS[a]} here (paper)" for a in ARMS) + " |",
        "|" + "---|" * (2 + len(ARMS)),
    ]
    for name, label in DATASETS.items():
        ref = PAPER[name]
        why = dataset_status(table, name)
        if why is not None:
            time_lines.append(f"| {label} | not run: {why} | "
                              + " | ".join(f"- ({_fmt_time(ref['time'][a])})" for a in ARMS) + " |")
            continue
        any_row = g[g["dataset"] == name].iloc[0]
        times = []
        for arm in ARMS:
            c = cell(g, name, arm)
            times.append(f"{_fmt_time(None if c is None else float(c['cycle_s']))} "
                         f"({_fmt_time(ref['time'][arm])})")
        time_lines.append(f"| {label} | {any_row['sigma']:.3g} | " + " | ".join(times) + " |")
    cost = selection_cost(table)
    cost_lines = []
    if len(cost):
        cost_lines = [
            "### Selection time against n (claim C2.3): checker data, m = 50, D_max = "
            f"{int(cost['D_star'].max())}, every chunk kept",
            "",
            "| n (training rows) | selection time (median) | repetitions |",
            "|---|---|---|",
        ]
        cost_lines += [f"| {int(r.n)} | {r.fit_s:.3g} s | {int(r.reps)} |" for r in cost.itertuples()]
        if len(cost) >= 2:
            cost_lines += ["", f"log-log slope of the median time against n: "
                               f"{loglog_slope(cost['n'], cost['fit_s']):.2f} (1 = linear)"]
    notes = [
        "Notes:",
        "- D and D* count random frequencies, as the paper's D does (its map sqrt(1/D) [cos, sin] has "
        "2 D columns). D* is the same for the SVM and LS small arms (one selection per fold).",
        "- n x d, sigma: sigma is the median rule on the z-scored training rows (checker: 0.52); "
        "the study's deviations list every difference from the paper.",
        "- Time per CV cycle here includes the selection (map fit) for the small sets and LS's "
        "leave-one-out search over lam; one run per core, so times compare between arms, not with "
        "the paper's machine.",
    ]
    notes += [f"- {DATASETS[k]}: data differ: {v}." for k, v in DATA_DIFFERS.items()]
    notes.append("- checker: the paper's D* = 20 is out of reach at our sigma = 0.52: a chunk of 5 frequencies "
                 "added to 20 lowers the raw error by ~114 on average (eps = 1e-3) and is rejected with "
                 "probability ~0.16, so stopping at 20 has probability ~7e-4 per fold (the study's "
                 "deviations give the computation).")
    notes.append(f"- adult: {ADULT_NEVER_STOPS}.")
    lams = _chosen_lams(table)
    dstar = sigma_lines(table)
    return "\n".join(side_by_side(table) + [""] + (dstar + [""] if dstar else []) + time_lines + [""]
                     + cost_lines + [""] + notes
                     + ([""] + lams if lams else [])) + "\n"


def figure(table: pd.DataFrame):
    g = per_dataset(table)
    names = list(DATASETS)
    cost = selection_cost(table)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.6), gridspec_kw={"width_ratios": [3, 2, 1.3]})
    ax, axd, axc = axes
    x = np.arange(len(names))
    offsets = dict(zip(ARMS, np.linspace(-0.27, 0.27, len(ARMS))))
    for arm in ARMS:
        color, marker = ARM_STYLE[arm]
        paper = [PAPER[n]["acc"][arm][0] for n in names]
        ax.scatter(x + offsets[arm], paper, marker="_", s=120, color=color, linewidths=2)
        sub = g[g["arm"] == arm].set_index("dataset")
        have = [i for i, n in enumerate(names) if n in sub.index]
        if have:
            ax.errorbar(x[have] + offsets[arm], [sub.loc[names[i], "acc_mean"] for i in have],
                        yerr=[sub.loc[names[i], "acc_std"] for i in have], fmt=marker, color=color,
                        ms=5, capsize=2, label=ARM_LABELS[arm])
    for i, n in enumerate(names):
        why = dataset_status(table, n)
        if why is not None:
            ax.text(x[i], 0.03, f"not run:\n{why}", ha="center", va="bottom", fontsize=7,
                    color="tab:red", rotation=90, transform=ax.get_xaxis_transform())
    ax.scatter([], [], marker="_", s=120, color="gray", label="paper (bar)")
    ax.set_xticks(x, [DATASETS[n] for n in names])
    shown = [PAPER[n]["acc"][a][0] for n in names for a in ARMS]
    if len(g):
        shown += list(g["acc_mean"] - g["acc_std"])
    ax.set_ylim(min(shown) - 2.0, 101)
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Accuracy: ours (mean $\\pm$ std over folds) vs the paper's (bars)", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=5)

    # D* against D, ours and the paper's (log scale)
    for i, n in enumerate(names):
        small = g[(g["dataset"] == n) & g["arm"].isin(("svm_small", "ls_small"))]
        # our D_max where the dataset ran (smoke runs use a smaller one), else the paper's
        axd.scatter(i, small["D"].iloc[0] if len(small) else PAPER[n]["D"], marker="_", s=150,
                    color="black")
        axd.scatter(i, PAPER[n]["D*"], marker="x", color="gray")
        if len(small):
            axd.errorbar(i, small["d_star"].mean(), yerr=small["d_star_std"].mean(), fmt="o",
                         color="tab:green", capsize=2)
    # D* at half and twice the study's sigma (the dstar_sigma arm), where it ran
    by_sigma = dstar_by_sigma(table)
    for i, n in enumerate(names):
        rows = by_sigma[(by_sigma["dataset"] == n) & (by_sigma["factor"] != 1.0)]
        for f, d in zip(rows["factor"], rows["d_star"]):
            axd.scatter(i + 0.15, d, marker="v" if f < 1 else "^", s=14, color="tab:olive")
    if (by_sigma["factor"] != 1.0).any():
        axd.scatter([], [], marker="v", s=14, color="tab:olive", label="D* at a smaller sigma")
        axd.scatter([], [], marker="^", s=14, color="tab:olive", label="D* at a larger sigma")
    axd.scatter([], [], marker="_", s=150, color="black", label="D (= D_max)")
    axd.scatter([], [], marker="x", color="gray", label="D* paper")
    axd.scatter([], [], marker="o", color="tab:green", label="D* ours (mean $\\pm$ std)")
    axd.set_yscale("log")
    axd.set_xticks(range(len(names)), [DATASETS[n] for n in names], rotation=45)
    axd.set_title("Selected features D* vs D", fontsize=10)
    axd.legend(fontsize=7)

    if len(cost):
        axc.loglog(cost["n"], cost["fit_s"], "o-", color="tab:purple", label="selection (median)")
        ref = cost["fit_s"].iloc[0] * cost["n"] / cost["n"].iloc[0]
        axc.loglog(cost["n"], ref, "--", color="gray", label="linear in n")
        if len(cost) >= 2:
            axc.set_title(f"Selection time vs n (slope {loglog_slope(cost['n'], cost['fit_s']):.2f})",
                          fontsize=10)
        axc.set_xlabel("training rows n (checker)")
        axc.set_ylabel("seconds")
        axc.legend(fontsize=7)
    else:
        from rfrepro.harness.report.plots import not_run_panel

        not_run_panel(axc, "Selection time vs n", "no selection_cost runs")
    fig.suptitle("Schleif et al. 2016 Table 1: linear SVM / LS on D random Fourier features vs the "
                 "selected D*, 10-fold CV")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- claims


def _why_not(table: pd.DataFrame, name: str) -> str:
    return f"{DATASETS[name]}: {dataset_status(table, name) or 'no finished runs of this arm'}"


def _with_data(claim: dict, name: str) -> dict:
    """``claim`` with the data it was judged on; a printed-number claim on substitute data is
    turned ``not-comparable`` by the caller, never left a pass or fail about the paper's number."""
    data = claim_data(name)
    return with_data(claim, data["kind"], data["note"])


def _not_comparable(claim: dict, name: str, why: str) -> dict:
    """Our measurement stays in the claim; the verdict says it is not the paper's quantity."""
    if claim["verdict"] == NOT_RUN:   # nothing measured: not-run says more
        return claim
    return not_comparable(claim, f"substitute data ({DATA_DIFFERS[name]}): {why}")


def _equal_accuracy(scan: pd.DataFrame) -> tuple[float | None, list[float]]:
    """The sigma factor of the best full-SVM accuracy (mean over folds), and every factor whose accuracy
    is not significantly below it (95% t interval of the paired per-fold loss holds 0)."""
    acc = scan.dropna(subset=["acc_full"]).pivot_table(index="seed", columns="factor", values="acc_full")
    if acc.empty:
        return None, []
    best = float(acc.mean().idxmax())
    equal = []
    for f in acc.columns:
        loss = (acc[best] - acc[f]).dropna()
        _, lo, hi, n = mean_interval(loss)
        if f == best or (n >= 2 and lo <= 0.0):
            equal.append(float(f))
    return best, sorted(equal)


def _c21(table: pd.DataFrame, name: str) -> dict:
    cid = f"C2.1 {DATASETS[name]}"
    ref = PAPER[name]
    printed = ref["D"] / ref["D*"]
    threshold = printed / GOAL_FACTOR
    text = PAPER_SAYS[name] + WHERE + f"; Table 1: D = {ref['D']}, D* = {ref['D*']} (D / D* = {printed:.1f})"
    stat = ("D / D* per fold (D = D_max of the selection; D* the selected frequencies), at the sigma of the "
            "best full-SVM cross-validated accuracy over the sigma scan (the paper gives no sigma)")
    why = (f"{threshold:.3g} = this dataset's printed D / D* ({ref['D']} / {ref['D*']} = {printed:.3g}) / "
           f"{GOAL_FACTOR:g}: the paper prints one D* without a spread or its sigma; a factor of "
           f"{GOAL_FACTOR:g} is the study's goal for D*; a larger reduction than the printed one only supports "
           "the sentence")
    scan = sigma_scan(table, name)
    runs = table1_runs(table)
    rows = runs[(runs["dataset.name"] == name) & runs["arm"].isin(("svm_small", "ls_small"))] \
        if len(runs) else runs
    if rows.empty or scan["d_star"].isna().all():
        return _with_data(not_run(cid, paper_text=text, statistic=stat, threshold=threshold, side="greater",
                                  threshold_why=why, reason=_why_not(table, name)), name)
    D = rows.loc[rows["method.name"] == "rff_selection", "method.max_components"].astype(float).iloc[0]
    best, equal = _equal_accuracy(scan)
    # a scan: full-SVM accuracy at two or more sigmas (the dstar_sigma arm's selections have none)
    scanned = best is not None and scan.dropna(subset=["acc_full"])["factor"].nunique() > 1

    def at(f: float) -> dict:
        per_fold = D / scan.loc[scan["factor"] == f].groupby("seed")["d_star"].mean().dropna()
        return judge(cid, paper_text=text, statistic=stat, values=per_fold, threshold=threshold,
                     side="greater", threshold_why=why)

    curve = (scan.groupby("factor").agg(sigma=("sigma", "mean"), acc_full=("acc_full", "mean"),
                                        acc_small=("acc_small", "mean"), d_star=("d_star", "mean"))
             .reset_index())
    measured = {"D": int(D), "curve": [{k: (None if pd.isna(v) else round(float(v), 4)) for k, v in r.items()}
                                       for r in curve.to_dict("records")]}
    pick = best if scanned else 1.0
    claim = at(pick)
    per = {f: at(f)["verdict"] for f in equal} if scanned else {}
    reached = curve["d_star"].min() <= ref["D*"] <= curve["d_star"].max()
    measured.update(sigma_factor=pick, equal_accuracy_factors=equal, verdict_at_factor=per,
                    brackets_paper_d_star=bool(reached))
    claim["measured"] = measured
    reason = [f"judged at sigma x {pick:g}"
              + (f", the best full-SVM accuracy ({curve.set_index('factor').loc[pick, 'acc_full']:.2f}%)"
                 if scanned else " (no sigma scan ran)")]
    if scanned and not reached:
        lo_f = curve.loc[curve["d_star"].idxmin()]
        reason.append(f"the scan does not reach the paper's D* = {ref['D*']} (smallest mean D* {lo_f['d_star']:.0f}"
                      f" at sigma x {lo_f['factor']:g})")
    if name == "adult" and (rows["d_star"] >= D).all():
        reason.append(ADULT_NEVER_STOPS)
    claim["reason"] = "; ".join(reason)
    claim = _with_data(claim, name)
    if name in DATA_DIFFERS:
        return _not_comparable(claim, name, "D* depends on the input space the kernel is computed on")
    flips = sorted({v for v in per.values() if v in (PASS, FAIL, INCONCLUSIVE)})
    if claim["verdict"] in (PASS, FAIL) and len(flips) > 1:
        shown = ", ".join(f"{v} at x {f:g}" for f, v in per.items())
        return withhold(claim, f"depends on the unstated sigma: among the sigmas of equal full accuracy, {shown}")
    ladder = ", ".join(f"x {r['factor']:g}: D* {r['d_star']:.0f}, full {r['acc_full']:.1f}%"
                       for r in measured["curve"] if r["acc_full"] is not None)
    return disagreement(claim, f"mean D / D* {claim['estimate']:.3g} against {threshold:.3g} at the best full "
                               f"accuracy's sigma (x {pick:g}); over the scan: {ladder}")


def _loss(table: pd.DataFrame, name: str, model: str) -> pd.Series:
    full = fold_values(table, name, f"{model}_full", "acc_pct")
    small = fold_values(table, name, f"{model}_small", "acc_pct")
    full, small = full.align(small, join="inner")
    return full - small


def _c22(table: pd.DataFrame, name: str, model: str) -> dict:
    ref = PAPER[name]["acc"]
    low = name in LOW_RANK
    cid = f"C2.2 {DATASETS[name]} {MODELS[model]}"
    paper_loss = ref[f"{model}_full"][0] - ref[f"{model}_small"][0]
    text = (PAPER_SAYS[name] + WHERE + f"; Table 1, {MODELS[model]}: full {ref[f'{model}_full'][0]:.2f}, "
            f"small {ref[f'{model}_small'][0]:.2f}")
    stat = f"{MODELS[model]} accuracy, full RFF minus small RFF (points), paired by fold"
    threshold = C22_POINTS if low else paper_loss + C22_MARGIN
    why = ("1 point: the paper calls the losses on checker and adult 'almost the same accuracy'; the "
           "largest of them in its Table 1 is 0.91 points (checker, LS)" if low else
           f"{threshold:.2f} = the paper's own loss ({paper_loss:.2f} points, Table 1) + {C22_MARGIN:g} point: "
           "the sentence reports what the reduction cost; losing no more than that, at a comparable "
           "reduction, supports it (one-sided)")
    loss = _loss(table, name, model)
    # a relative claim (full against small on the same folds): judged on substitute data too, marked
    if loss.empty:
        return _with_data(not_run(cid, paper_text=text, statistic=stat, threshold=threshold, side="less",
                                  threshold_why=why, reason=_why_not(table, name)), name)
    dstar = fold_values(table, name, f"{model}_small", "d_star")
    D = float(PAPER[name]["D"])
    runs = table1_runs(table)
    ran = runs[(runs["dataset.name"] == name) & (runs["method.name"] == "rff_selection")]
    if len(ran):
        D = float(ran["method.max_components"].astype(float).iloc[0])
    ours, printed = D / float(dstar.mean()), PAPER[name]["D"] / PAPER[name]["D*"]
    claim = _with_data(judge(cid, paper_text=text, statistic=stat, values=loss, threshold=threshold,
                             side="less", threshold_why=why,
                             reason=f"reduction D / D*: ours {ours:.1f}x, the paper's {printed:.1f}x",
                             measured={"reduction_ours": ours, "reduction_paper": printed}), name)
    if ours < printed / GOAL_FACTOR:
        return withhold(claim, f"our small set is not a comparable reduction ({ours:.1f}x against the paper's "
                               f"{printed:.1f}x, outside the factor of {GOAL_FACTOR:g} the study allows for D*): "
                               "a smaller loss at a smaller reduction says nothing of the paper's")
    return disagreement(claim, f"the small set loses {claim['estimate']:.2f} points [{claim['ci_low']:.2f}, "
                               f"{claim['ci_high']:.2f}], more than {threshold:.2f}, at a reduction of {ours:.1f}x "
                               f"(the paper's {printed:.1f}x)")


def _c23(table: pd.DataFrame) -> dict:
    text = ("\"Hence, we finally have costs of O(N x m) for generating the random fourier features.\" "
            "(Sec. 4, Complexity and Error Analysis)")
    stat = ("log-log slope of the selection time (map fit) against n, one slope per repetition; checker "
            "data, m = 50, D_max = 1000, eps = -inf (the same number of tries at every n)")
    why = ("1.5: midway between linear (1, the paper's O(N m)) and quadratic (2, the O(N^2) of the exact "
           "Frobenius norm the method avoids) on the log-log scale")
    cost = finished(table)
    if len(cost) and "arm" in cost:
        cost = cost[cost["arm"] == "selection_cost"]
    if cost.empty or cost["dataset.n_train"].nunique() < 2:
        return _with_data(not_run("C2.3", paper_text=text, statistic=stat, threshold=C23_SLOPE, side="less",
                                  threshold_why=why, reason="needs selection_cost runs at two or more n"),
                          "checkerboard")
    slopes = [loglog_slope(g["dataset.n_train"], g["timings.fit_s"])
              for _, g in cost.groupby("seed") if g["dataset.n_train"].nunique() >= 2]
    return _with_data(judge("C2.3", paper_text=text, statistic=stat, values=slopes,
                            threshold=C23_SLOPE, side="less", threshold_why=why,
                            measured={"n": sorted(int(v) for v in cost["dataset.n_train"].unique()),
                                      "slopes": [round(v, 3) for v in slopes]}),
                      "checkerboard")


def _c24(table: pd.DataFrame, name: str, model: str) -> dict:
    arm = f"{model}_full"
    mean, sd = PAPER[name]["acc"][arm]
    cid = f"C2.4 {DATASETS[name]} {MODELS[model]}"
    text = f"Table 1: {DATASETS[name]}, {ARM_LABELS[arm]} test accuracy {mean:.2f} +- {sd:.2f} % (10-fold CV)"
    stat = (f"|mean over folds of (our {ARM_LABELS[arm]} accuracy - the paper's {mean:.2f})|, points; the "
            "95% t interval of the mean difference folded to its absolute value (an equivalence test)")
    why = ("2 points: folds and feature draws differ from the paper's, so only agreement within noise is "
           "expected; 2 points is about twice the largest std over folds the paper reports for these "
           "full-RFF cells (1.09, spam LS)")
    diff = fold_values(table, name, arm, "acc_pct") - mean
    if diff.empty:
        return _with_data(not_run(cid, paper_text=text, statistic=stat, threshold=GOAL_POINTS, side="less",
                                  threshold_why=why, reason=_why_not(table, name)), name)
    est, lo, hi, n = mean_interval(diff)
    abs_lo = 0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
    abs_hi = max(abs(lo), abs(hi))
    claim = _with_data(judge(cid, paper_text=text, statistic=stat, estimate=abs(est), ci=(abs_lo, abs_hi),
                             n_seeds=n, interval="95% t interval of the mean difference, folded",
                             threshold=GOAL_POINTS, side="less", threshold_why=why,
                             measured={"mean_difference": est, "ci_difference": [lo, hi]}), name)
    if name in DATA_DIFFERS:
        return _not_comparable(claim, name, "the paper's accuracy is of other data")
    return limitation(claim, "the paper's sigma ('values reported before elsewhere', not named) differs from "
                             "our median rule, and full-RFF accuracy moves with sigma (the C2.1 scan's curve)",
                      "the paper's sigma for this dataset")


def claims(table: pd.DataFrame) -> list[dict]:
    out = [_c21(table, name) for name in DATASETS]
    out += [_c22(table, name, m) for name in LOW_RANK + DIGITS for m in MODELS]
    out.append(_c23(table))
    out += [_c24(table, name, m) for name in DATASETS for m in MODELS]
    return out
