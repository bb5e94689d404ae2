"""Hamid et al. (2014) Table 1: classification error of RM, TS and their CRAFTMaps with ECOC least squares."""

from __future__ import annotations

import pandas as pd

from experiments.hamid2014.common import (
    BASE_OF,
    E_COL,
    LABELS,
    arms_in,
    claim_data,
    dataset_names,
    display_name,
    not_run_reason,
    per_cell,
)
from rfrepro.harness.report.claims import judge_every, paired_values, with_data
from rfrepro.harness.report.plots import caption, finished, grid_axes, not_run_panel

ERR = "metrics.error"
C33_TEXT = ('"Results across 4 different datasets are presented, on which CRAFTMaps delivered consistently improved '
            'classification results." (Sec. 5, Table 1: test error of RM, TS and their CRAFTMaps, small and large E)')
C33_WHY = ("'consistently improved': a lower test error than the base map in every (dataset, E) cell, so each "
           "cell's difference must be below 0; the paper states no size, so no margin")


def _cells(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds of the test error (%) per (dataset, E, arm)."""
    ok = finished(table)
    g = ok.groupby(["dataset.name", E_COL, "arm"])[ERR].agg(["mean", "std", "count"]).reset_index()
    g[["mean", "std"]] *= 100
    return g


def figure(table: pd.DataFrame):
    names = dataset_names(table)
    ok = finished(table)
    fig, axes = grid_axes(len(names), ncols=4, size=(3.8, 3.4))
    cells = _cells(table) if len(ok) else pd.DataFrame()
    for ax, name in zip(axes, names):
        c = cells[cells["dataset.name"] == name] if len(cells) else cells
        if c.empty:
            not_run_panel(ax, display_name(name), not_run_reason(table, name))
            continue
        es = sorted(c[E_COL].unique())
        arms = arms_in(ok)
        width = 0.8 / len(arms)
        for j, arm in enumerate(arms):
            a = c[c["arm"] == arm].set_index(E_COL).reindex(es)
            ax.bar([i + (j - (len(arms) - 1) / 2) * width for i in range(len(es))], a["mean"], width,
                   yerr=a["std"], label=LABELS.get(arm, arm), capsize=2)
        ax.set_xticks(range(len(es)), [f"E = {int(e)}" for e in es])
        ax.set_ylabel("test error (%)")
        d = int(ok.loc[ok["dataset.name"] == name, "dataset.d"].iloc[0])
        ax.set_title(f"{display_name(name)} (d = {d})", fontsize=9)
        ax.legend(fontsize=6)
    seeds = int(ok["seed"].nunique()) if len(ok) else 0
    fig.suptitle(f"Hamid et al. 2014 Table 1: test error with ECOC least squares, mean $\\pm$ std over {seeds} seed(s)")
    fig.tight_layout()
    caption(fig, "Polynomial kernel r = 7, q = 1, rows scaled to unit L2 norm; CRAFT: D = 4E features "
                 "projected to E by an SRHT; RM without H0/1; random dense ECOC codes.")
    return fig


def summary(table: pd.DataFrame) -> str:
    ok = finished(table)
    if ok.empty:
        return "No finished runs."
    cells = _cells(table)
    arms = arms_in(ok)
    lines = ["### Test error (%), mean +- std over seeds", "",
             "| dataset | E | " + " | ".join(LABELS.get(a, a) for a in arms) + " |", "|---|---|" + "---|" * len(arms)]
    for name in dataset_names(ok):
        for e in sorted(cells.loc[cells["dataset.name"] == name, E_COL].unique()):
            c = cells[(cells["dataset.name"] == name) & (cells[E_COL] == e)].set_index("arm")
            vals = [f"{c.at[a, 'mean']:.2f} +- {c.at[a, 'std']:.2f}" if a in c.index else "-" for a in arms]
            lines.append(f"| {display_name(name)} | {int(e)} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def difference_cells(table: pd.DataFrame, craft: str, base: str) -> dict[str, pd.Series]:
    """Per (dataset, E) cell: per seed, test error(craft) - error(base) in points, paired by (seed, dataset, E)."""
    ok = finished(table)
    if ok.empty or not {craft, base} <= set(ok["arm"]):
        return {}
    diff = 100 * paired_values(ok, arm_col="arm", a=craft, b=base, value=ERR, on=["seed", "dataset.name", E_COL])
    return per_cell(diff.dropna(), ["dataset.name", E_COL], lambda n, e: f"{display_name(n)} E={int(e)}")


def claims(table: pd.DataFrame) -> list[dict]:
    names = dataset_names(table)
    ok = finished(table)
    missing = [n for n in names if ok.empty or ok[ok["dataset.name"] == n].empty]
    note = f"not run ({', '.join(f'{display_name(n)}: {not_run_reason(table, n)}' for n in missing)})" \
        if missing else ""
    data = claim_data([n for n in names if n not in missing] or names or ["mnist"])
    out = []
    for cid, craft in (("C3.3-RM", "craft_rm"), ("C3.3-TS", "craft_ts")):
        base = BASE_OF[craft]
        stat = (f"per (dataset, E) cell, per seed: test error({LABELS[craft]}) - error({LABELS[base]}) in "
                "percentage points, paired by (seed, dataset, E); the claim must hold in every cell")
        out.append(judge_every(cid, difference_cells(table, craft, base), paper_text=C33_TEXT, statistic=stat,
                               threshold=0.0, side="less", threshold_why=C33_WHY,
                               reason=note or ("" if len(ok) else not_run_reason(table))))
    return [with_data(c, *data) for c in out]
