"""Chen et al. (2015) Fig. 3: KRR relative RMSE against feature-map + training time.

Same computations as Fig. 2 (the sweep is shared through
``conf/experiment/chen2015/_base.yaml``, and the harness reuses Fig. 2's records).
Time = map_fit_s + map_transform_s + train_s of each run. The records do not
separate transforming the training rows from transforming the test rows, so
the map time includes the test rows too (the same for every method).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import NullFormatter

from experiments.chen2015.common import (
    BASELINES,
    LABELS,
    PAPER_KRR_DATASET,
    STYLE,
    TEFM,
    dataset_names,
    display_name,
    not_run_reason,
    substitute_label,
    variant_of,
)
from experiments.chen2015.fig2 import cv_choice
from rfrepro.plots import caption, finished, grid_axes, not_run_panel
from rfrepro.results import claim
from rfrepro.results.store import RecordStore

L = "fitted.n_features_out"
RMSE = "metrics.rel_rmse"
#: Targets of C1.4 (time): the best baseline's RMSE at its largest this-many l values ("small RMSE").
N_TARGETS = 2


def with_cv_from_source(table: pd.DataFrame) -> pd.DataFrame:
    """Fill the CV choice (cv.*) of reused runs from the records they were reused from.

    A reused record copies the source's metrics, timings and kernel but not its
    ``cv`` block, so the chosen lambda is read from the source record (named
    by ``reused_from``) under ``table.attrs["results_root"]``.
    """
    root = table.attrs.get("results_root")
    if table.empty or not root or "reused_from" not in table:
        return table
    if "cv.lam" in table and table["cv.lam"].notna().all():
        return table
    t = table.copy()
    for i, src in t["reused_from"].items():
        if not isinstance(src, str) or "/" not in src or ("cv.lam" in t and pd.notna(t.at[i, "cv.lam"])):
            continue
        slug, rid = src.split("/", 1)
        rec = RecordStore(root, slug).read(rid) or {}
        for k, v in (rec.get("cv") or {}).items():
            if isinstance(v, (int, float, str)):
                t.loc[i, f"cv.{k}"] = v
    return t


def with_time(table: pd.DataFrame) -> pd.DataFrame:
    t = finished(table).copy()
    if t.empty:
        return t
    parts = [c for c in ("timings.map_fit_s", "timings.map_transform_s", "timings.train_s") if c in t]
    t["time_s"] = t[parts].fillna(0.0).sum(axis=1)
    return t


def points(table: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, arm, l): mean RMSE and mean total time over seeds."""
    t = with_time(table)
    if t.empty:
        return t
    return (t.groupby(["dataset.name", "arm", L])
            .agg(rmse=(RMSE, "mean"), rmse_std=(RMSE, "std"), time_s=("time_s", "mean"), runs=("seed", "count"))
            .reset_index())


def figure(table: pd.DataFrame):
    names = dataset_names(table)
    p = points(table)
    ok = finished(with_cv_from_source(table))
    fig, axes = grid_axes(len(names), ncols=len(names), size=(5.0, 3.8))
    for ax, name in zip(axes, names):
        sub = p[p["dataset.name"] == name] if len(p) else p
        if sub.empty:
            not_run_panel(ax, display_name(name), not_run_reason(table, name))
            continue
        for arm in [a for a in LABELS if a in set(sub["arm"])]:
            a = sub[sub["arm"] == arm].sort_values("time_s")
            color, marker = STYLE[arm]
            ax.errorbar(a["time_s"], a["rmse"], yerr=a["rmse_std"].fillna(0), marker=marker, ms=4,
                        color=color, capsize=2, label=LABELS[arm])
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("feature map + training time (s)")
        ax.set_ylabel("relative RMSE on the test split")
        rows = ok[ok["dataset.name"] == name]
        ax.set_title(f"{substitute_label(name, variant_of(rows))}\nn = {int(rows['dataset.n_train'].iloc[0])}",
                     fontsize=9)
        ax.legend(fontsize=7)
        ax.text(0.02, 0.02, cv_choice(rows), transform=ax.transAxes, fontsize=6.5, va="bottom")
    ls = sorted(p[L].unique()) if len(p) else []
    span = f"points are l = {int(ls[0])} .. {int(ls[-1])}" if ls else "no points"
    fig.suptitle(f"Chen et al. 2015 Fig. 3: KRR accuracy against map + training time (means over seeds; {span})")
    fig.tight_layout()
    caption(fig, "Time = map fit + map transform + training, one BLAS thread per run, runs in parallel on a "
                 "shared machine; the transform time includes the test rows. "
                 f"{display_name(PAPER_KRR_DATASET)} is the paper's dataset; any other panel is a substitute.")
    return fig


def summary(table: pd.DataFrame) -> str:
    p = points(table)
    if p.empty:
        return "No finished runs."
    ok = finished(with_cv_from_source(table))
    lines = []
    for name in dataset_names(ok):
        sub = p[p["dataset.name"] == name]
        rows = ok[ok["dataset.name"] == name]
        lines += [f"### {substitute_label(name, variant_of(rows))}", "", cv_choice(rows), "",
                  "| method | l | relative RMSE | map + train time (s) | runs |", "|---|---|---|---|---|"]
        for arm in [a for a in LABELS if a in set(sub["arm"])]:
            for _, r in sub[sub["arm"] == arm].sort_values(L).iterrows():
                lines.append(f"| {LABELS[arm]} | {int(r[L])} | {r['rmse']:.4f} | {r['time_s']:.2f} | {int(r['runs'])} |")
        lines.append("")
    return "\n".join(lines)


def time_to_reach(sub: pd.DataFrame, arm: str, target: float) -> float:
    """Least mean time at which ``arm`` has a mean RMSE <= target (inf: never)."""
    a = sub[(sub["arm"] == arm) & (sub["rmse"] <= target)]
    return float(a["time_s"].min()) if len(a) else float("inf")


def time_claim_data(sub: pd.DataFrame) -> dict:
    """For the smallest-RMSE targets: time of each TEFM map and of the fastest baseline to reach them."""
    base = sub[sub["arm"].isin(BASELINES)]
    if base.empty:
        return {}
    best = base.groupby(L)["rmse"].min().sort_index()
    targets = best.iloc[-N_TARGETS:]
    out = {}
    for ell, target in targets.items():
        fastest = min(time_to_reach(sub, b, target) for b in BASELINES if b in set(sub["arm"]))
        out[f"rmse<={target:.4f} (best baseline at l={int(ell)})"] = {
            "fastest_baseline_s": fastest,
            **{f"{t}_s": time_to_reach(sub, t, target) for t in TEFM if t in set(sub["arm"])},
        }
    return out


def claims(table: pd.DataFrame) -> list[dict]:
    p = points(table)
    stmt = ("On Slice, TEFM reaches small relative RMSE targets in less total (map + training) time than "
            "RKS, Comp, Quasi and Ffood (Fig. 3)")
    names = sorted(set(p["dataset.name"])) if len(p) else []
    if not names:
        return [claim("C1.4-time", stmt, None, None, "no finished runs (Slice data unavailable)")]
    ok = finished(table)
    out = []
    for name in dataset_names(ok):
        sub = p[p["dataset.name"] == name]
        data = time_claim_data(sub)
        label = substitute_label(name, variant_of(ok[ok["dataset.name"] == name]))
        passed = bool(data) and all(
            all(v[f"{t}_s"] < v["fastest_baseline_s"] for t in TEFM if f"{t}_s" in v) for v in data.values())
        out.append(claim(
            "C1.4-time", stmt + ("" if name == PAPER_KRR_DATASET else f" -- measured on {label}"),
            {"dataset": label, "targets": data},
            passed if data else None,
            f"targets: the best baseline's mean RMSE at its {N_TARGETS} largest l; time to reach = least mean "
            "time among the l values whose mean RMSE is <= the target (inf = never); pass when TEFM-G and "
            "TEFM-S are faster than the fastest baseline for every target",
        ))
    if PAPER_KRR_DATASET not in names:
        out.append(claim("C1.4-time", stmt + " -- on Slice itself", None, None,
                         "not run: Slice Localization data unavailable"))
    return out



