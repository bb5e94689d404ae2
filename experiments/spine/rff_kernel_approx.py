"""The harness's real-data check: Gaussian kernel error against D for RKS and Nystrom."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfrepro.plots import band, finished, grid_axes, mean_std, not_run_panel
from rfrepro.results import claim

ARMS = {"rks_cos": "RKS cos(Wx+b)", "rks_cossin": "RKS [cos, sin]", "nystrom": "Nystrom"}
NORMS = {"metrics.kerr_spec": "spectral", "metrics.kerr_fro": "Frobenius"}


def _datasets(table: pd.DataFrame) -> list[str]:
    return sorted(table["dataset.name"].dropna().unique())


def figure(table: pd.DataFrame):
    names = _datasets(table)
    ok = finished(table)
    fig, axes = grid_axes(len(names) * len(NORMS), ncols=len(NORMS), size=(4.6, 3.4))
    for i, name in enumerate(names):
        sub = ok[ok["dataset.name"] == name]
        for j, (col, norm) in enumerate(NORMS.items()):
            ax = axes[i * len(NORMS) + j]
            if sub.empty:
                statuses = set(table.loc[table["dataset.name"] == name, "status"])
                not_run_panel(ax, name, "data unavailable" if statuses == {"unavailable"} else "no finished runs")
                continue
            g = mean_std(sub, "fitted.n_features_out", col, "arm")
            for arm in [a for a in ARMS if a in set(g["arm"])]:
                a = g[g["arm"] == arm]
                band(ax, a["fitted.n_features_out"], a["mean"], a["std"], ARMS[arm], key=arm)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("output features D")
            ax.set_ylabel(f"relative error ({norm})")
            n, d = int(sub["dataset.n_train"].iloc[0]), int(sub["dataset.d"].iloc[0])
            ax.set_title(f"{name} (n={n}, d={d}), {norm}", fontsize=10)
            ax.legend(fontsize=8)
    pts = ok["eval.kernel_error_points"].iloc[0] if "eval.kernel_error_points" in ok else None
    fig.suptitle("Gaussian kernel approximation: ||K - ZZ^T|| / ||K|| (mean $\\pm$ std over seeds)"
                 + (f", K on {int(pts)} training rows" if pts is not None and len(ok) else ""))
    fig.tight_layout()
    return fig


def slope(sub: pd.DataFrame, col: str) -> float:
    g = sub.groupby("fitted.n_features_out")[col].mean()
    return float(np.polyfit(np.log(g.index.astype(float)), np.log(g.values), 1)[0])


def claims(table: pd.DataFrame) -> list[dict]:
    ok = finished(table)
    out = []
    for name in _datasets(table):
        sub = ok[(ok["dataset.name"] == name) & (ok["arm"] == "rks_cos")]
        if sub.empty or sub["fitted.n_features_out"].nunique() < 2:
            out.append(claim(f"S.{name}", f"RKS Frobenius error falls like D^-1/2 on {name}", None, None,
                             "not run: data unavailable or too few D values"))
            continue
        s = slope(sub, "metrics.kerr_fro")
        out.append(claim(f"S.{name}", f"RKS Frobenius error falls like D^-1/2 on {name} (slope in [-0.6, -0.4])",
                         s, -0.6 <= s <= -0.4, "log-log slope of the mean error against D"))
    return out
