"""Sun, Gilbert and Tewari (2018) Fig. 4: excess risk against m, lambda chosen on a validation sample."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.sun2018.common import DATA, LABELS
from rfrepro.harness.report.claims import judge, loglog_slope, mean_interval, not_run, with_data
from rfrepro.harness.report.plots import STYLE, finished, not_run_panel

ARMS = ("rfsvm_unif", "rfsvm_opt")
#: The population Bayes error the authors subtract (Sec. 4: labels flipped with probability 0.1).
BAYES_ERROR = 0.1
FIG4_TEXT = ('"We can see that the excess risk decays as m increases, and the RFSVM using reweighted feature '
             'selection method outperforms the simple feature selection." (p. 8, Fig. 4)')


def _converged(t: pd.DataFrame) -> pd.Series:
    if "fitted.model_converged" not in t:
        return pd.Series(True, index=t.index)
    return t["fitted.model_converged"].map(lambda v: True if v is None or v != v else bool(v))


def selected(table: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, m, seed): the converged run whose lambda has the best validation accuracy (ties: larger lambda)."""
    t = finished(table).copy()
    if t.empty:
        return t
    t = t[_converged(t)]
    t["m"] = t["dataset.n_train"].astype(int)
    t = t.sort_values(["arm", "m", "seed", "metrics.val_accuracy", "model.lam"],
                      ascending=[True, True, True, False, False])
    return t.groupby(["arm", "m", "seed"], as_index=False).head(1)


def curve(table: pd.DataFrame) -> pd.DataFrame:
    sel = selected(table)
    if sel.empty:
        return pd.DataFrame(columns=["arm", "m", "excess", "std", "runs", "N", "lam"])
    return (sel.groupby(["arm", "m"])
            .agg(excess=("metrics.excess_risk", "mean"), std=("metrics.excess_risk", "std"),
                 runs=("seed", "count"), N=("method.n_components", "first"),
                 lam=("model.lam", lambda s: float(np.exp(np.log(s).mean()))))
            .reset_index())


def seed_slopes(sel: pd.DataFrame, arm: str) -> tuple[pd.Series, int]:
    """Per seed: slope of log(excess risk) against log(m); and how many points were <= 0 (dropped)."""
    sub = sel[sel["arm"] == arm]
    slopes, dropped = {}, 0
    for seed, s in sub.groupby("seed"):
        pos = s[s["metrics.excess_risk"] > 0]
        dropped += len(s) - len(pos)
        if pos["m"].nunique() >= 2:
            slopes[seed] = loglog_slope(pos["m"], pos["metrics.excess_risk"])
    return pd.Series(slopes, dtype=float), dropped


def _unconverged(table: pd.DataFrame, arms) -> str:
    t = finished(table)
    t = t[t["arm"].isin(arms)] if len(t) else t
    bad = int((~_converged(t)).sum()) if len(t) else 0
    return f"{bad} of {len(t)} runs unconverged (liblinear stopped at max_iter) excluded before choosing lambda"


def _test_bayes_excess(table: pd.DataFrame) -> float | None:
    col = "dataset.test_bayes_error"
    if col in table and table[col].notna().any():
        return float(table[col].dropna().iloc[0]) - BAYES_ERROR
    return None


def figure(table: pd.DataFrame):
    g = curve(table)
    fig, (ax, axl) = plt.subplots(1, 2, figsize=(11.0, 4.0))
    if g.empty:
        not_run_panel(ax, "Fig. 4", "no finished converged runs")
        not_run_panel(axl, "log-log", "no finished converged runs")
        return fig
    sel = selected(table)
    ref = _test_bayes_excess(table)
    for arm in [a for a in ARMS if a in set(g["arm"])]:
        a = g[g["arm"] == arm]
        color, marker = STYLE[arm]
        ax.errorbar(np.log10(a["m"]), a["excess"], yerr=a["std"].fillna(0), marker=marker,
                    color=color, capsize=3, label=LABELS[arm])
        slopes, _ = seed_slopes(sel, arm)
        est, lo, hi, n = mean_interval(slopes)
        pos = a[a["excess"] > 0]
        axl.loglog(pos["m"], pos["excess"], marker=marker, color=color,
                   label=f"{LABELS[arm]}: slope {est:.2f} [{lo:.2f}, {hi:.2f}] ({n} seeds)")
    ax.axhline(0, color="gray", lw=0.8, label="population Bayes error 0.1")
    if ref is not None:
        for axis in (ax, axl):
            if ref > 0 or axis is ax:
                axis.axhline(ref, color="gray", ls=":", lw=1.0,
                             label=f"this test set's Bayes rule ({ref + BAYES_ERROR:.4f} error)")
    ax.set_xlabel(r"$\log_{10} m$")
    ax.set_ylabel("excess risk (test error - 0.1)")
    Ns = ", ".join(f"{int(m)}:{int(n)}" for m, n in g.groupby("m")["N"].first().items())
    ax.set_title(f"Fig. 4, lambda chosen on validation (m:N = {Ns})", fontsize=8)
    ax.legend(fontsize=7)
    axl.set_xlabel("m")
    axl.set_ylabel("excess risk (mean over seeds)")
    axl.set_title("log-log: per-seed slope, mean [95% t interval]", fontsize=8)
    axl.legend(fontsize=7)
    fig.tight_layout()
    return fig


def summary(table: pd.DataFrame) -> str:
    g = curve(table)
    if g.empty:
        return "No finished runs."
    lines = ["| arm | m | N | excess risk (mean +- std) | runs | geo-mean chosen lambda |",
             "|---|---|---|---|---|---|"]
    for _, r in g.iterrows():
        std = 0.0 if pd.isna(r["std"]) else r["std"]
        lines.append(f"| {r['arm']} | {r['m']} | {int(r['N'])} | {r['excess']:.4f} +- {std:.4f} | {r['runs']} "
                     f"| {r['lam']:.2g} |")
    lines.append("")
    ref = _test_bayes_excess(table)
    if ref is not None:
        lines.append(f"This test set's Bayes rule has excess risk {ref:+.4f} against 0.1.")
    lines.append(_unconverged(table, ARMS) + ".")
    return "\n".join(lines)


def _claims(table: pd.DataFrame) -> list[dict]:
    sel = selected(table)
    out = []
    for arm in ARMS:
        cid = f"C4.3-decay-{arm.removeprefix('rfsvm_')}"
        stat = (f"per seed: slope of log(excess risk) against log(m), {LABELS[arm]}, lambda chosen on the "
                "validation sample per m; points with excess risk <= 0 dropped")
        why = "'decays as m increases': any negative exponent"
        slopes, dropped = seed_slopes(sel, arm) if len(sel) else (pd.Series(dtype=float), 0)
        if slopes.empty:
            out.append(not_run(cid, paper_text=FIG4_TEXT, statistic=stat, threshold=0.0, side="less",
                               threshold_why=why, reason=f"needs converged {arm} runs at two or more m"))
            continue
        out.append(judge(cid, paper_text=FIG4_TEXT, statistic=stat, values=slopes.tolist(), threshold=0.0,
                         side="less", threshold_why=why,
                         reason=f"{dropped} (m, seed) points with excess risk <= 0 dropped; "
                                + _unconverged(table, [arm])))
    stat = ("per seed: mean over m of excess risk(opt) - excess risk(unif), each at its validation-chosen "
            "lambda, paired by seed and m (same training sample)")
    why = "'outperforms': any reduction of the excess risk"
    if sel.empty:
        out.append(not_run("C4.3-opt", paper_text=FIG4_TEXT, statistic=stat, threshold=0.0, side="less",
                           threshold_why=why, reason="needs converged runs of both arms"))
        return out
    ex = sel.pivot_table(index=["seed", "m"], columns="arm", values="metrics.excess_risk")
    if not set(ARMS) <= set(ex.columns):
        out.append(not_run("C4.3-opt", paper_text=FIG4_TEXT, statistic=stat, threshold=0.0, side="less",
                           threshold_why=why, reason="needs converged runs of both arms"))
        return out
    diff = (ex["rfsvm_opt"] - ex["rfsvm_unif"]).dropna()
    per_seed = diff.groupby(level="seed").mean()
    out.append(judge("C4.3-opt", paper_text=FIG4_TEXT, statistic=stat, values=per_seed.tolist(), threshold=0.0,
                     side="less", threshold_why=why, reason=_unconverged(table, ARMS),
                     measured={"opt_minus_unif_by_m": {int(m): float(v)
                                                       for m, v in diff.groupby(level="m").mean().items()}}))
    return out


def claims(table: pd.DataFrame) -> list[dict]:
    return [with_data(c, *DATA) for c in _claims(table)]
