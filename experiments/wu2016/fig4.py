"""Wu et al. (2016) Fig. 4: RB train/test performance against D, R varied at the paper's sigma."""

from __future__ import annotations

import pandas as pd

from experiments.wu2016.common import (
    ERROR,
    TRAIN_ERROR,
    D,
    claim_data,
    label,
    not_run_reason,
    per_dataset,
    performance,
    seeds_text,
    slope_per_seed,
)
from rfrepro.harness.report.claims import judge, not_run, with_data
from rfrepro.harness.report.plots import caption, finished, grid_axes, not_run_panel

R = "method.n_components"
TEXT = ('"Fig 4 shows that the training and testing performance converge almost linearly with D, which again '
        'confirms our analysis in Theorem 1" (p. 1270, Sec. 5.1, Fig. 4)')
STAT = "per seed: least-squares slope of the test error against log10 D over the R grid"
WHY = "'converge ... with D': the test error falls as D grows (a negative slope, any size)"


def _curves(sub: pd.DataFrame) -> pd.DataFrame:
    sub = sub.assign(_test=performance(sub, ERROR)[0], _train=performance(sub, TRAIN_ERROR)[0])
    return sub.groupby(R).agg(D=(D, "mean"), test=("_test", "mean"), test_sd=("_test", "std"),
                              train=("_train", "mean")).reset_index().sort_values("D")


def figure(table: pd.DataFrame):
    names = [n for n, _ in per_dataset(table)]
    fig, axes = grid_axes(len(names), ncols=4, size=(4.0, 3.2))
    for ax, (name, sub) in zip(axes, per_dataset(table)):
        if sub.empty:
            not_run_panel(ax, label(name), not_run_reason(table, name))
            continue
        c = _curves(sub)
        sigma = float(sub["kernel.sigma"].iloc[0])
        ax.plot(c["D"], c["train"], "o-", color="tab:blue", ms=3, label=f"Train $\\sigma$={sigma:g}")
        ax.errorbar(c["D"], c["test"], yerr=c["test_sd"].fillna(0), fmt="s-", color="tab:red", ms=3,
                    label=f"Test $\\sigma$={sigma:g}")
        ax.set_xscale("log")
        ax.set_xlabel("D (varying R)")
        ax.set_ylabel(performance(sub)[1])
        ax.set_title(label(name), fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(f"Wu et al. 2016 Fig. 4: RB, R varied at fixed sigma ({seeds_text(finished(table))})")
    fig.tight_layout()
    caption(fig, "R = 1 .. 1024 grids; D = non-empty bins (mean over seeds). Ridge lambda = 0.01 by CG (tol 1e-3).")
    return fig


def summary(table: pd.DataFrame) -> str:
    lines = []
    for name, sub in per_dataset(table):
        if sub.empty:
            continue
        c = _curves(sub)
        lines += [f"### {label(name)}: {performance(sub)[1]} against D (mean over seeds)", "",
                  "| R | D | train | test |", "|---|---|---|---|"]
        lines += [f"| {int(r[R])} | {r['D']:.0f} | {r['train']:.4f} | {r['test']:.4f} |" for _, r in c.iterrows()]
        lines.append("")
    return "\n".join(lines) or "No finished runs."


def claims(table: pd.DataFrame) -> list[dict]:
    out = []
    for name, sub in per_dataset(table):
        cid = f"C5.2-fig4-{name}"
        if sub.empty:
            out.append(with_data(not_run(cid, paper_text=TEXT, statistic=STAT, reason=not_run_reason(table, name),
                                         threshold=0.0, side="less", threshold_why=WHY), *claim_data([name])))
            continue
        out.append(with_data(judge(cid, paper_text=TEXT + f" -- {label(name)}", statistic=STAT,
                                   values=slope_per_seed(sub, D, ERROR).tolist(), threshold=0.0, side="less",
                                   threshold_why=WHY), *claim_data([name])))
    return out
