"""Wu et al. (2016) Fig. 3: RB train/test performance and train time against D, sigma varied at R = 128."""

from __future__ import annotations

import pandas as pd

from experiments.wu2016.common import (
    ERROR,
    TRAIN_ERROR,
    D,
    claim_data,
    error_se,
    label,
    not_run_reason,
    per_dataset,
    performance,
    seeds_text,
)
from rfrepro.harness.report.claims import judge, not_run, with_data
from rfrepro.harness.report.plots import caption, finished, grid_axes, not_run_panel

SIGMA = "kernel.sigma"
TEXT_A = ('"Fig 3 shows that the training and testing performance coincidentally decrease (increase) before they '
          'diverge when D grows by increasing sigma" (p. 1270, Sec. 5.1, Fig. 3; D grows as sigma decreases)')
TEXT_B = TEXT_A + " -- the divergence (overfitting) at the largest D"


def _curves(sub: pd.DataFrame) -> pd.DataFrame:
    """Per sigma: mean D, mean train / test performance, mean train time."""
    sub = sub.assign(_test=performance(sub, ERROR)[0], _train=performance(sub, TRAIN_ERROR)[0])
    return sub.groupby(SIGMA).agg(D=(D, "mean"), test=("_test", "mean"), train=("_train", "mean"),
                                  time=("timings.train_s", "mean")).reset_index().sort_values("D")


def figure(table: pd.DataFrame):
    names = [n for n, _ in per_dataset(table)]
    fig, axes = grid_axes(2 * len(names), ncols=4, size=(4.0, 3.1))
    for i, (name, sub) in enumerate(per_dataset(table)):
        ax_err, ax_time = axes[2 * i], axes[2 * i + 1]
        if sub.empty:
            not_run_panel(ax_err, label(name), not_run_reason(table, name))
            not_run_panel(ax_time, label(name), not_run_reason(table, name))
            continue
        c = _curves(sub)
        ylab = performance(sub)[1]
        R = int(sub["method.n_components"].iloc[0])
        ax_err.plot(c["D"], c["train"], "o-", color="tab:blue", ms=3, label=f"Train R={R}")
        ax_err.plot(c["D"], c["test"], "s-", color="tab:red", ms=3, label=f"Test R={R}")
        best = c["test"].idxmin() if ylab == "relative error" else c["test"].idxmax()
        ax_err.plot(c.loc[best, "D"], c.loc[best, "test"], "ks", mfc="none", ms=9, label="best test")
        ax_time.plot(c["D"], c["time"], "o-", color="tab:red", ms=3, label=f"R={R}")
        for ax, y in ((ax_err, ylab), (ax_time, "train time (s)")):
            ax.set_xscale("log")
            ax.set_xlabel("D (varying $\\sigma$)")
            ax.set_ylabel(y)
            ax.set_title(label(name), fontsize=9)
            ax.legend(fontsize=6)
        ax_time.set_yscale("log")
    fig.suptitle(f"Wu et al. 2016 Fig. 3: RB, sigma varied at fixed R ({seeds_text(finished(table))})")
    fig.tight_layout()
    caption(fig, "Each point is one sigma of the grid (1e-2 .. 1e2); D = non-empty bins (mean over seeds). "
                 "Ridge lambda = 0.01 by CG with tol 1e-15 and a fixed iteration cap.")
    return fig


def summary(table: pd.DataFrame) -> str:
    lines = []
    for name, sub in per_dataset(table):
        if sub.empty:
            continue
        c = _curves(sub)
        unit = performance(sub)[1]
        lines += [f"### {label(name)}: {unit} against D (mean over seeds)", "",
                  "| sigma | D | train | test | train time (s) |", "|---|---|---|---|---|"]
        for _, r in c.sort_values(SIGMA).iterrows():
            lines.append(f"| {r[SIGMA]:g} | {r['D']:.0f} | {r['train']:.4f} | {r['test']:.4f} | {r['time']:.3g} |")
        lines.append("")
    return "\n".join(lines) or "No finished runs."


def _minimum_per_seed(test: pd.DataFrame) -> pd.Series:
    """Per seed, the sigma of the lowest mean test error over the other seeds (leave one seed out, so a
    seed's statistic never chooses its own minimum; one seed alone: its own)."""
    out = {}
    for seed in test.index:
        rest = test.drop(index=seed) if len(test) > 1 else test
        out[seed] = rest.mean().idxmin()
    return pd.Series(out)


def _step(sigmas: list, at, away_from) -> float:
    """``at``, or, when it is the end ``away_from`` of the sigma grid, the next sigma inwards: a minimum at
    an end of the grid leaves no fall (or no divergence) to measure, and the first step shows which way the
    curve goes."""
    if at != away_from:
        return at
    i = sigmas.index(at)
    return sigmas[i + 1] if i + 1 < len(sigmas) else sigmas[i - 1]


def claims(table: pd.DataFrame) -> list[dict]:
    """The shape the sentence states, per seed: the test error falls as D grows up to its minimum
    (``-improves``), then the train/test gap opens (``-diverges``). The minimum is, per seed, the sigma
    of the lowest mean test error over the other seeds (never chosen on the seed it judges); a minimum at
    an end of the grid is replaced by its neighbour, so a curve that only rises (or only falls) fails
    instead of giving zero in every seed."""
    stat_a = ("per seed: test error at the smallest D (the largest sigma) minus the test error at the curve's "
              "minimum (the sigma of the lowest mean test error over the other seeds; the next sigma when that "
              "is the largest)")
    why_a = "'decrease when D grows': the error at the curve's minimum is below that at the smallest D, any amount"
    stat_b = ("per seed: (test - train error) at the largest D (the smallest sigma) minus (test - train error) at "
              "the curve's minimum (as in -improves; the next larger sigma when the minimum is the smallest)")
    why_b = "'before they diverge': past the minimum the train/test gap widens as D grows, any amount"
    out = []
    for name, sub in per_dataset(table):
        cid = f"C5.2-{name}"
        data = claim_data([name])
        if sub.empty:
            reason = not_run_reason(table, name)
            out += [with_data(not_run(f"{cid}-improves", paper_text=TEXT_A, statistic=stat_a, reason=reason,
                                      threshold=0.0, side="greater", threshold_why=why_a), *data),
                    with_data(not_run(f"{cid}-diverges", paper_text=TEXT_B, statistic=stat_b, reason=reason,
                                      threshold=0.0, side="greater", threshold_why=why_b), *data)]
            continue
        test = sub.groupby(["seed", SIGMA])[ERROR].mean().unstack()
        gap = sub.assign(gap=sub[ERROR] - sub[TRAIN_ERROR]).groupby(["seed", SIGMA])["gap"].mean().unstack()
        sigmas = sorted(test.columns, reverse=True)          # smallest D first
        first, last = sigmas[0], sigmas[-1]
        best = _minimum_per_seed(test)
        where = (f"minimum at sigma {test.mean().idxmin():g} on the mean curve (per seed: "
                 + ", ".join(f"{k:g} x {v}" for k, v in best.value_counts().items())
                 + f"); smallest D at sigma {first:g}, largest at {last:g}")
        for suffix, text, stat, why, end, curve in (("improves", TEXT_A, stat_a, why_a, first, test),
                                                    ("diverges", TEXT_B, stat_b, why_b, last, gap)):
            at = {s: _step(sigmas, b, end) for s, b in best.items()}
            # improves: error at the smallest D minus at the minimum; diverges: gap at the largest D minus there
            values = pd.Series({s: curve.loc[s, end] - curve.loc[s, b] for s, b in at.items()}).dropna()
            se = error_se(sub, test[[end, at[values.index[0]]]].mean()) if len(values) else None
            out.append(with_data(judge(f"{cid}-{suffix}", paper_text=text + f" -- {label(name)}", statistic=stat,
                                       values=values.tolist(), threshold=0.0, side="greater", threshold_why=why,
                                       reason=where, test_rows_se=se), *data))
    return out
