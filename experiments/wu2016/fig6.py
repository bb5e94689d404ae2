"""Wu et al. (2016) Fig. 6: speedup of parallel randomized coordinate descent against threads, RB vs RF."""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.wu2016.common import (
    claim_data,
    label,
    not_run_reason,
    per_dataset,
    seeds_text,
    unconverged,
)
from rfrepro.harness.report.claims import (
    add_reason,
    judge,
    limitation,
    not_run,
    with_data,
    withhold,
)
from rfrepro.harness.report.hostload import host_busy, unless_busy
from rfrepro.harness.report.plots import caption, finished, grid_axes, not_run_panel
from rfrepro.runner.cores import SHARED_CACHE_NS

P = "model.n_threads"
TIME = "timings.train_s"
ARMS = {"rb_lasso": ("RandBin, Lasso", "tab:red", "o-"), "rf_lasso": ("Fourier, Lasso", "tab:blue", "s-"),
        "rb_l1svm": ("RandBin, L1-SVM", "tab:red", "o--"), "rf_l1svm": ("Fourier, L1-SVM", "tab:blue", "s--")}
LOSSES = {"lasso": "L1-regularised least squares", "l1svm": "L1-regularised squared-hinge SVM"}
TEXT_RB = ('"When combined with Coordinate Descent to solve an L1 regularized objective, RB shows an almost linear '
           'speedup, in contrast to RF that has almost no speedup" (p. 1266, Sec. 1; Fig. 6)')
STAT_RB = "per seed: train time with 1 thread / train time with {p} threads, RB features ({loss})"
WHY_RB = ("'almost linear', against RF's 'almost no speedup': the paper prints no speedup value (Fig. 6's text "
          "has only its axes: threads ticked 0 to 15, speedup up to 10, 6, 12 and 5 on ijcnn1, cod_rna, covtype, "
          "SUSY), so none can be read at its smallest thread count and the threshold is our choice, from Eq. (29) "
          "alone: P / (1 + (R - 1)(P - 1) / (D - 1)) runs from 1 for a dense Z (D = R, RF) to P for D >> R (RB); "
          "'almost linear' = above the midpoint of that range, (1 + P) / 2 = {thr:g} at P = {p}")
STAT_D = "per seed: RB's speedup minus RF's speedup at {p} threads ({loss}), same seed"
WHY_D = "'in contrast to RF that has almost no speedup': RB's speedup is larger, by any amount"


#: What would settle a missed speedup bar: it measures our parallel RCD as much as the paper's claim.
SETTLE_RB = ("the paper's dataset timed on 4 or more cores that share a cache (the paper's Fig. 6 goes to 16 "
             "threads); scripts/bench_wu.py --only rcd prints the cache round trip beside each speedup")


#: How our host could change a missed speedup: the mechanism of the limitation.
MECHANISM_RB = "a speedup at {p} threads on 2 virtual CPUs, against the paper's 16 cores"
#: ... and, on a substitute smaller than the paper's set, the fixed cost of each epoch
SMALL_SUBSTITUTE = {"ijcnn1_val": ("; measured on a substitute a third of the paper's size (ijcnn1's 14990-row "
                                   "validation split: fits of 1-2 s, where each epoch's fixed costs weigh more "
                                   "than on 35000 rows)")}
MECHANISM_RF = ("our RF steps ignored the threads (beta = 1 at {p} threads), so dense RF parallelised as RB does: "
                "the comparison measures our step rule, not the paper's")
#: Why an RF comparison is ours when the solver's steps ignore the threads (beta = 1 recorded, or no record):
SETTLE_RF = ("steps of 1/(beta M_j) with beta = 1 + (omega - 1)(tau - 1)/(D - 1) (Richtarik & Takac's Theorem 19, "
             "behind Eq. (29)): our runs used beta = 1 at {p} threads, so dense RF took full steps and parallelised "
             "as RB does, where the paper's solver halves RF's steps at 2 threads (omega = D)")
BETA = "fitted.model_step_beta"
#: the cache-line round trip between the threads' cores at a run's start and end (rfrepro.runner.cores)
NEAR = ("host_load.core_round_trip_ns.start", "host_load.core_round_trip_ns.end")


def converged_pairs(sub: pd.DataFrame, top: int) -> set:
    """The (arm, seed) pairs whose 1-thread and ``top``-thread runs both met the stopping rule (a run stopped
    at ``max_epochs`` times a fixed number of epochs, not a solve)."""
    both = sub[sub[P].isin([1, top])]
    bad = both.assign(_bad=unconverged(both)).groupby(["arm", "seed"])["_bad"].any()
    return set(bad[~bad].index)


def near_pairs(sub: pd.DataFrame, top: int) -> set:
    """The (arm, seed) pairs whose ``top``-thread run began and ended with its cores sharing a cache.

    A cache-line round trip above ``SHARED_CACHE_NS`` at either end means the
    host had put the threads on cores that share none (rfrepro.runner.cores),
    where 2-thread fits ran no faster than one thread (round trips of 81-170
    ns) or 2.5x slower than on a shared cache (316-684 ns). A run that recorded no
    round trip (older records) is kept.
    """
    many = sub[sub[P] == top]
    far = pd.Series(False, index=many.index)
    for col in NEAR:
        if col in many:
            far |= pd.to_numeric(many[col], errors="coerce").fillna(0) > SHARED_CACHE_NS
    bad = many.assign(_far=far).groupby(["arm", "seed"])["_far"].any()
    return set(sub[["arm", "seed"]].itertuples(index=False, name=None)) - set(bad[bad].index)


def kept(seed, arms: list[str], loss: str, good: set) -> bool:
    """Whether every arm of ``arms`` (with ``loss``) has its pair for ``seed`` in ``good``."""
    return all((f"{a}_{loss}", seed) in good for a in arms)


def left_out(claim: dict, counts: dict, n_all: int, *, cap="the cap", p: int = 2) -> dict:
    """``claim``, saying how many seeds each rule left out (``counts``: ``capped``, ``far``); a verdict
    on every seed is withheld (``inconclusive``) when the rules together left none.

    >>> c = left_out({"verdict": "pass", "reason": ""}, {"capped": 10}, 10, cap=500)
    >>> c["verdict"], c["measured_verdict"]
    ('inconclusive', 'pass')
    >>> left_out({"verdict": "fail", "reason": "r"}, {"capped": 2}, 10, cap=500)["reason"]
    'r; 2 of 10 seeds left out: a run stopped at max_epochs = 500 before the stopping rule held'
    >>> c = left_out({"verdict": "fail", "reason": "r"}, {"far": 3}, 10)
    >>> c["verdict"], c["reason"]
    ('fail', 'r; 3 of 10 seeds left out: their 2-thread run began or ended on cores that share no cache (a cache-line round trip above 100 ns)')
    >>> left_out({"verdict": "fail", "reason": ""}, {"capped": 4, "far": 6}, 10)["verdict"]
    'inconclusive'
    """
    capped, far = counts.get("capped", 0), counts.get("far", 0)
    if capped + far and n_all:
        claim["n_planned"] = n_all   # the claim line shows "n of planned"
    if capped >= n_all > 0:
        return withhold(claim, f"every seed's runs stopped at max_epochs = {cap} before the stopping rule held: "
                        f"the speedup is that of a fixed number of epochs, not of a solve (judged on them all, "
                        f"not a verdict)", after=True)
    if far >= n_all > 0:
        return withhold(claim, f"every seed's {p}-thread run began or ended on cores that share no cache (a "
                        f"cache-line round trip above {SHARED_CACHE_NS:g} ns), where this host's 2-thread fits "
                        f"ran no faster than one thread or slower still: the times measure where the host put "
                        f"the threads (judged on them all, not a verdict)", after=True)
    if capped:
        add_reason(claim, f"{capped} of {n_all} seeds left out: a run stopped at max_epochs = {cap} before the "
                          f"stopping rule held")
    if far:
        add_reason(claim, f"{far} of {n_all} seeds left out: their {p}-thread run began or ended on cores that "
                          f"share no cache (a cache-line round trip above {SHARED_CACHE_NS:g} ns)")
    if capped + far >= n_all > 0:  # each rule left some, together all
        withhold(claim, "no seed is left once both rules apply (judged on them all, not a verdict)", after=True)
    return claim


def rb_threshold(p: int) -> float:
    """C5.3's bar for RB's speedup at ``p`` threads: (1 + p) / 2, the midpoint of Eq. (29)'s range.

    Eq. (29) gives p / (1 + (R - 1)(p - 1) / (D - 1)): 1 for a dense Z (D = R,
    the 'almost no speedup' of RF) and p for D >> R (linear). The paper prints
    no speedup value to take a bar from, so this is our choice (declared in
    conf/experiment/wu2016/fig6.yaml).

    >>> rb_threshold(2), rb_threshold(16)
    (1.5, 8.5)
    """
    return (1 + p) / 2


def speedups(sub: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, seed, threads): train time at 1 thread / train time at that many threads."""
    t = sub.groupby(["arm", "seed", P])[TIME].mean().unstack(P)
    if 1 not in t:
        return pd.DataFrame(columns=["arm", "seed", P, "speedup"])
    s = (1.0 / t).mul(t[1], axis=0)
    return s.stack().rename("speedup").reset_index()


def figure(table: pd.DataFrame):
    rows = list(per_dataset(table))
    fig, axes = grid_axes(len(rows), ncols=4, size=(4.0, 3.3))
    for ax, (name, sub) in zip(axes, rows):
        if sub.empty:
            not_run_panel(ax, label(name), not_run_reason(table, name))
            continue
        s = speedups(sub)
        top = int(sub[P].max())
        ax.plot([1, top], [1, top], color="grey", lw=0.8, ls=":", label="linear")
        for arm, (lab, color, style) in ARMS.items():
            g = s[s["arm"] == arm].groupby(P)["speedup"].agg(["mean", "std"]).reset_index()
            if len(g):
                ax.errorbar(g[P], g["mean"], yerr=g["std"].fillna(0), fmt=style, color=color, ms=4, label=lab)
        ax.set(xlabel="number of threads", ylabel="speedup (over 1 thread)", title=f"{label(name)}: train time")
        ax.set_xticks(sorted(sub[P].unique()))
        ax.text(0.98, 0.02, f"{top} threads = all cores of this machine", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=6.5)
        ax.legend(fontsize=6)
    fig.suptitle(f"Wu et al. 2016 Fig. 6: parallel RCD speedup ({seeds_text(finished(table))})")
    fig.tight_layout()
    caption(fig, "Speedup = train time with 1 thread / with P threads, paired by seed; each run stops when an epoch "
                 "lowers the objective by less than the tolerance. The paper uses up to 16 cores; this machine "
                 "had the thread counts shown.")
    return fig


def summary(table: pd.DataFrame) -> str:
    lines = []
    for name, sub in per_dataset(table):
        if sub.empty:
            continue
        s = speedups(sub)
        extra = sub.groupby(["arm", P]).agg(time=(TIME, "mean"), D=("fitted.n_features_out", "mean"),
                                            nz=("fitted.model_nonzero_fraction", "mean"),
                                            obj=("fitted.model_objective", "mean"),
                                            epochs=("fitted.model_n_iter", "mean")).reset_index()
        extra = extra.merge(s.groupby(["arm", P])["speedup"].mean().reset_index(), on=["arm", P], how="left")
        lines += [f"### {label(name)} (mean over seeds; {host_busy(sub)[1]})", "",
                  "| arm | threads | D | train time (s) | speedup | epochs | objective | non-zero share |",
                  "|---|---|---|---|---|---|---|---|"]
        for _, r in extra.iterrows():
            lines.append(f"| {r['arm']} | {int(r[P])} | {r['D']:.0f} | {r['time']:.3g} | {r['speedup']:.3g} | "
                         f"{r['epochs']:.0f} | {r['obj']:.6g} | {r['nz']:.3f} |")
        lines.append("")
    return "\n".join(lines) or "No finished runs."


def claims(table: pd.DataFrame) -> list[dict]:
    ok = finished(table)
    top = int(ok[P].max()) if len(ok) and P in ok else 2
    out = []
    for name, sub in per_dataset(table):
        s = speedups(sub) if len(sub) else pd.DataFrame(columns=["arm", "seed", P, "speedup"])
        s = s[s[P] == top]
        data = claim_data([name])
        for loss, what in LOSSES.items():
            cid = f"C5.3-{name}-{loss}"
            stat_rb, stat_d = STAT_RB.format(p=top, loss=what), STAT_D.format(p=top, loss=what)
            bar = rb_threshold(top)
            why_rb = WHY_RB.format(p=top, thr=bar)
            rb = s[s["arm"] == f"rb_{loss}"].set_index("seed")["speedup"]
            rf = s[s["arm"] == f"rf_{loss}"].set_index("seed")["speedup"]
            if top < 2 or rb.empty:
                reason = not_run_reason(table, name) if sub.empty else "no multi-thread runs"
                out += [with_data(not_run(f"{cid}-rb", paper_text=TEXT_RB, statistic=stat_rb, reason=reason,
                                          threshold=bar, side="greater", threshold_why=why_rb), *data),
                        with_data(not_run(f"{cid}-vs-rf", paper_text=TEXT_RB, statistic=stat_d, reason=reason,
                                          threshold=0.0, side="greater", threshold_why=WHY_D), *data)]
                continue
            busy, load_text = host_busy(finished(sub))
            conv, near = converged_pairs(finished(sub), top), near_pairs(finished(sub), top)
            cap = sub["model.max_epochs"].max() if "model.max_epochs" in sub else "the cap"
            # unconverged pairs and pairs timed on far cores left out; when none is left, all are judged and
            # the verdict withheld
            both = conv & near
            diff_all = (rb - rf).dropna()
            rb_ok = rb[[kept(s, ["rb"], loss, both) for s in rb.index]]
            diff_ok = diff_all[[kept(s, ["rb", "rf"], loss, both) for s in diff_all.index]]
            counts = []
            for seeds, arms in ((rb.index, ["rb"]), (diff_all.index, ["rb", "rf"])):
                capped = [s for s in seeds if not kept(s, arms, loss, conv)]
                counts.append({"capped": len(capped), "far": sum(s not in capped and not kept(s, arms, loss, near)
                                                                 for s in seeds)})
            pair = [judge(f"{cid}-rb", paper_text=TEXT_RB + f" -- {label(name)}, {what}", statistic=stat_rb,
                          values=(rb_ok if len(rb_ok) else rb).tolist(), interval="bootstrap", threshold=bar,
                          side="greater", threshold_why=why_rb, measured={"host_load": load_text}),
                    judge(f"{cid}-vs-rf", paper_text=TEXT_RB + f" -- {label(name)}, {what}", statistic=stat_d,
                          values=(diff_ok if len(diff_ok) else diff_all).tolist(), threshold=0.0, side="greater",
                          threshold_why=WHY_D,
                          measured={"rf_speedup_mean": float(np.mean(rf)) if len(rf) else None,
                                    "host_load": load_text})]
            left_out(pair[0], counts[0], len(rb), cap=cap, p=top)
            left_out(pair[1], counts[1], len(diff_all), cap=cap, p=top)
            # the bar is missed: 2 threads on a host that moves its CPUs, against the paper's 16 cores
            limitation(pair[0], MECHANISM_RB.format(p=top) + SMALL_SUBSTITUTE.get(name, ""), SETTLE_RB)
            rf_beta = sub.loc[(sub["arm"] == f"rf_{loss}") & (sub[P] == top), BETA] if BETA in sub else None
            if rf_beta is None or pd.to_numeric(rf_beta).fillna(1).max() <= 1:
                limitation(pair[1], MECHANISM_RF.format(p=top), SETTLE_RF.format(p=top))
            why = "speedups need idle cores, so the times are not a verdict; rerun on an idle machine"
            out += [with_data(unless_busy(c, busy, load_text, why), *data) for c in pair]
    return out
