"""Sun, Gilbert and Tewari (2018) Fig. 4: excess risk against m with lambda chosen on validation."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.sun2018.common import LABELS
from rfrepro.plots import STYLE, finished
from rfrepro.results import claim


def selected(table: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, m, seed): the run whose lambda has the best validation accuracy."""
    t = finished(table).copy()
    if t.empty:
        return t
    t["m"] = t["dataset.n_train"].astype(int)
    t = t.sort_values(["arm", "m", "seed", "metrics.val_accuracy", "model.lam"],
                      ascending=[True, True, True, False, False])
    return t.groupby(["arm", "m", "seed"], as_index=False).head(1)


def curve(table: pd.DataFrame) -> pd.DataFrame:
    sel = selected(table)
    return (sel.groupby(["arm", "m"])
            .agg(excess=("metrics.excess_risk", "mean"), std=("metrics.excess_risk", "std"),
                 runs=("seed", "count"), N=("method.n_components", "first"),
                 lam=("model.lam", lambda s: float(np.exp(np.log(s).mean()))))
            .reset_index())


def figure(table: pd.DataFrame):
    g = curve(table)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for arm in [a for a in LABELS if a in set(g["arm"])]:
        a = g[g["arm"] == arm]
        color, marker = STYLE[arm]
        ax.errorbar(np.log10(a["m"]), a["excess"], yerr=a["std"].fillna(0), marker=marker,
                    color=color, capsize=3, label=LABELS[arm])
    ax.axhline(0, color="gray", lw=0.8)
    ax.set_xlabel(r"$\log_{10} m$")
    ax.set_ylabel("excess risk (test error - 0.1)")
    if len(g):
        Ns = ", ".join(f"{int(m)}:{int(n)}" for m, n in g.groupby("m")["N"].first().items())
        ax.set_title(f"Sun et al. 2018 Fig. 4 (m:N = {Ns})", fontsize=8)
    ax.legend()
    fig.tight_layout()
    return fig


def summary(table: pd.DataFrame) -> str:
    g = curve(table)
    if g.empty:
        return "No finished runs."
    lines = ["| arm | m | N | excess risk (mean +- std) | runs | geo-mean chosen lambda |", "|---|---|---|---|---|---|"]
    for _, r in g.iterrows():
        lines.append(f"| {r['arm']} | {r['m']} | {int(r['N'])} | {r['excess']:.4f} +- {0 if pd.isna(r['std']) else r['std']:.4f} "
                     f"| {r['runs']} | {r['lam']:.2g} |")
    return "\n".join(lines)


def claims(table: pd.DataFrame) -> list[dict]:
    g = curve(table)
    out = []
    if g.empty:
        return [claim("C4.3", "Excess risk falls with m for both; opt stays below unif", None, None, "no runs")]
    slopes, below = {}, None
    for arm, a in g.groupby("arm"):
        if a["m"].nunique() >= 2:
            slopes[arm] = float(np.polyfit(np.log10(a["m"]), a["excess"], 1)[0])
    u = g[g["arm"] == "rfsvm_unif"].set_index("m")["excess"]
    o = g[g["arm"] == "rfsvm_opt"].set_index("m")["excess"]
    common = u.index.intersection(o.index)
    if len(common):
        below = {int(m): float(o[m] - u[m]) for m in common}
    falls = bool(slopes) and all(s < 0 for s in slopes.values())
    opt_below = below is not None and sum(v <= 0 for v in below.values()) >= 0.7 * len(below)
    out.append(claim(
        "C4.3", "Excess risk falls with m for both samplers; opt stays below unif (Fig. 4)",
        {"slope_per_decade": slopes, "opt_minus_unif_by_m": below},
        (falls and opt_below) if below is not None else None,
        "falls: fitted slope of excess risk against log10 m < 0 for each arm; "
        "below: opt <= unif at >= 70% of the m values",
    ))
    return out
