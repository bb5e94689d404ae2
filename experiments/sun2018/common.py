"""Figures and claims shared by the Sun et al. (2018) accuracy-vs-lambda studies."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfrepro.plots import band, finished, grid_axes, mean_std
from rfrepro.results import claim

BAYES_ACCURACY = 0.9
LABELS = {"ksvm": "KSVM", "rfsvm_unif": "RFSVM unif", "rfsvm_opt": "RFSVM opt"}


def _curves(table: pd.DataFrame) -> pd.DataFrame:
    t = finished(table).copy()
    t["log10_lambda"] = np.round(np.log10(t["model.lam"].astype(float)), 3)
    t["N"] = t["method.n_components"].fillna(0).astype(int) if "method.n_components" in t else 0
    return t


def accuracy_vs_lambda_figure(table: pd.DataFrame, title: str):
    t = _curves(table)
    Ns = sorted(n for n in t["N"].unique() if n > 0) or [0]
    fig, axes = grid_axes(len(Ns), ncols=min(3, len(Ns)), size=(5.0, 3.6))
    for ax, N in zip(axes, Ns):
        sub = t[(t["N"] == N) | (t["arm"] == "ksvm")]
        g = mean_std(sub, "log10_lambda", "metrics.accuracy", "arm")
        for arm in [a for a in LABELS if a in set(g["arm"])]:
            a = g[g["arm"] == arm]
            band(ax, a["log10_lambda"], a["mean"], a["std"], LABELS[arm], key=arm)
        ax.axhline(BAYES_ACCURACY, ls="--", lw=0.8, color="gray", label="Bayes (0.9)")
        ax.set_xlabel(r"$\log_{10}\lambda$")
        ax.set_ylabel("test accuracy")
        n_runs = int(g["count"].max()) if len(g) else 0
        ax.set_title(f"N = {N}  ({n_runs} runs per point, mean $\\pm$ std)")
        ax.set_ylim(0.4, 0.95)
    axes[-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"Sun et al. 2018 {title}: disk/annulus, m = {_m(t)}, {_n_test(t)} test points")
    fig.tight_layout()
    return fig


def _m(t):
    return int(t["dataset.n_train"].iloc[0]) if len(t) else 0


def _n_test(t):
    return int(t["dataset.n_test"].iloc[0]) if len(t) else 0


def _best(t: pd.DataFrame, arm: str, N: int | None = None) -> float | None:
    sub = t[t["arm"] == arm]
    if N is not None:
        sub = sub[sub["N"] == N]
    if sub.empty:
        return None
    return float(sub.groupby("log10_lambda")["metrics.accuracy"].mean().max())


def accuracy_claims(table: pd.DataFrame) -> list[dict]:
    t = _curves(table)
    out = []
    ksvm = _best(t, "ksvm")
    out.append(claim(
        "C4.4", "Best KSVM accuracy is close to the Bayes accuracy 0.9 (within 0.02)",
        ksvm, None if ksvm is None else abs(ksvm - BAYES_ACCURACY) <= 0.02,
        "best mean accuracy over lambda",
    ))
    Ns = sorted(n for n in t["N"].unique() if n > 0)
    unif = {N: _best(t, "rfsvm_unif", N) for N in Ns}
    below = [ksvm is not None and u is not None and u <= ksvm + 0.005 for u in unif.values()]
    rises = [a <= b + 0.005 for a, b in zip(list(unif.values()), list(unif.values())[1:]) if a and b]
    out.append(claim(
        "C4.1", "RFSVM accuracy is slightly below KSVM and rises with N",
        {"ksvm_best": ksvm, "rfsvm_unif_best_by_N": unif},
        (all(below) and all(rises)) if ksvm is not None and unif else None,
        "below: best RFSVM <= best KSVM + 0.005 for every N; rises: non-decreasing in N "
        + ("(only one N in this study)" if len(Ns) < 2 else ""),
    ))
    opt = {N: _best(t, "rfsvm_opt", N) for N in Ns}
    if any(v is not None for v in opt.values()):
        diffs = {}
        for N in Ns:
            a = t[(t["arm"] == "rfsvm_opt") & (t["N"] == N)].groupby("log10_lambda")["metrics.accuracy"].mean()
            b = t[(t["arm"] == "rfsvm_unif") & (t["N"] == N)].groupby("log10_lambda")["metrics.accuracy"].mean()
            common = a.index.intersection(b.index)
            if len(common):
                diffs[N] = {"mean_gain": float((a[common] - b[common]).mean()),
                            "min_gain": float((a[common] - b[common]).min())}
        passed = bool(diffs) and all(d["mean_gain"] >= 0 for d in diffs.values())
        out.append(claim("C4.2", "opt >= unif across lambda, most visibly at small N", diffs, passed,
                         "mean over lambda of accuracy(opt) - accuracy(unif), per N"))
    else:
        out.append(claim("C4.2", "opt >= unif across lambda, most visibly at small N", None, None,
                         "no 'opt' runs in this study"))
    return out
