"""Hamid et al. (2014) Fig. 5: kernel reconstruction error against the polynomial degree r on MNIST."""

from __future__ import annotations

import pandas as pd

from experiments.hamid2014.common import (
    BASE_OF,
    LABELS,
    NRMS,
    arms_in,
    claim_data,
    degree_of,
    log_ratios,
    not_run_reason,
    per_cell,
    plot_arms,
)
from rfrepro.harness.report.claims import judge_every, with_data
from rfrepro.harness.report.plots import caption, finished, grid_axes, not_run_panel

R = "degree"
#: What is tested, stated as such: Fig. 4's unquantified 'significant' improvement, against the degree.
C32_TEXT = ("CRAFTMaps' kernel reconstruction error (Nrms) is lower than that of the map they up-project, random "
            "maps (RM) and tensor sketches (TS), at every polynomial degree r (Sec. 5.1, Fig. 5: Nrms against r on "
            "MNIST, 10 sets of 1000 random points)")
C32_WHY = ("the paper's sentences are \"As shown, CRAFTMaps provide a significant reconstruction improvement for "
           "random maps and tensor sketches.\" (Fig. 4) and \"Figure 5 shows the reconstruction improvements due to "
           "CRAFTMaps depending on the polynomial degree.\" (Sec. 5.1); 'significant' is not quantified: the text "
           "gives no size and Fig. 5's curves cannot be read into numbers from the text we have, so any improvement "
           "is tested: CRAFT's error below its base map's, a ratio below 1, at each degree r (each degree a cell "
           "that must pass), no margin")


def _with_degree(table: pd.DataFrame) -> pd.DataFrame:
    t = finished(table).copy()
    if len(t):
        t[R] = degree_of(t)
    return t


def figure(table: pd.DataFrame):
    ok = _with_degree(table)
    fig, axes = grid_axes(1, ncols=1, size=(6.0, 4.2))
    ax = axes[0]
    if ok.empty:
        not_run_panel(ax, "MNIST", not_run_reason(table))
        return fig
    plot_arms(ax, ok, R, NRMS)
    ax.set_yscale("log")
    ax.set_xlabel("polynomial degree r")
    ax.set_ylabel("Nrms  ||K - ZZ^T||_F / ||K||_F")
    E = int(ok["method.n_components"].iloc[0])
    ax.set_title(f"Hamid et al. 2014 Fig. 5: MNIST, q = 1, E = {E}, CRAFT D = 4E;\n"
                 f"mean $\\pm$ std over {ok['seed'].nunique()} fold(s)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    caption(fig, "Rows scaled to unit L2 norm; RM without H0/1.")
    return fig


def summary(table: pd.DataFrame) -> str:
    ok = _with_degree(table)
    if ok.empty:
        return "No finished runs."
    arms = arms_in(ok)
    m = ok.groupby([R, "arm"])[NRMS].mean().unstack("arm")
    lines = ["### Mean Nrms over folds, MNIST", "", "| r | " + " | ".join(LABELS.get(a, a) for a in arms) + " |",
             "|---|" + "---|" * len(arms)]
    for r, row in m.iterrows():
        lines.append(f"| {int(r)} | " + " | ".join(f"{row.get(a, float('nan')):.4g}" for a in arms) + " |")
    return "\n".join(lines)


def claims(table: pd.DataFrame) -> list[dict]:
    t = _with_degree(table)
    reason = "" if len(t) else not_run_reason(table)
    out = []
    for i, craft in enumerate(("craft_rm_gauss", "craft_rm_srht", "craft_ts_gauss", "craft_ts_srht"), 1):
        base = BASE_OF[craft]
        logs = log_ratios(t, craft, base, NRMS, [R]) if len(t) else pd.Series(dtype=float)
        cells = per_cell(logs, [R], lambda r: f"r={int(r)}")
        out.append(judge_every(
            f"C3.2-r{i}", cells, paper_text=C32_TEXT, log=True, side="less",
            statistic=(f"per degree r (cell), per fold (seed): Nrms({LABELS[craft]}) / Nrms({LABELS[base]}), "
                       f"paired by (fold, r); the claim must hold at every degree; MNIST, "
                       f"r in {', '.join(c.removeprefix('r=') for c in cells) or 'none'}"),
            threshold=1.0, threshold_why=C32_WHY, reason=reason))
    return [with_data(c, *claim_data(["mnist"])) for c in out]
