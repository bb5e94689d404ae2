"""Shared pieces of the leaderboard studies: budgets, ranks, Pareto fronts, cross-paper claims.

One pair of studies per kernel (regression, classification): the Gaussian maps,
the Laplacian maps (random binning among them) and the polynomial maps are
ranked each against the exact kernel they approximate, never together.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator
from scipy import stats

from rfrepro.harness.report.claims import FAIL, judge_every, limitation, with_data
from rfrepro.harness.report.hostload import BUSY_MARGIN, host_busy
from rfrepro.harness.report.plots import finished, grid_axes, not_run_panel
from rfrepro.harness.run.arms import kernel_arms, label

KERR = "metrics.kerr_fro"
#: the held-out train x test block's error (eval.kernel_error_split = test), what prediction uses
KERR_CROSS = "metrics.kerr_cross_fro"
ERROR = "metrics.error"
BUDGET = "budget"
#: what a user of the map pays once lambda is known: map fit + training transform + the final fit
TIME = "map_train_s"
#: the lambda search (the model's own CV), timed apart from TIME
SEARCH = "timings.train_s"
#: the run's own peak of traced (numpy + Python) allocations (rfrepro.runner.memory)
MEMORY = "memory.peak_bytes"
PREDICTED = "eval.predict"
#: display labels and each kernel's member arms come from the maps' own declarations (the
#: ``leaderboard:`` block of each method yaml, rfrepro.harness.run.arms)
#: arms given a cap they may not fill, and the record's column of that cap with the output columns per unit:
#: each run sits at its cap's D (charged what it used). RFF selection keeps at most max_components
#: frequencies, two columns each; Nystrom given more landmarks than training rows uses every row
CAPPED = {"rff_selection": ("method.max_components", 2.0), "nystrom": ("method.n_components", 1.0)}
#: arms charged by their non-zeros per row, not their columns: random binning's R grids put R
#: non-zeros in every row whatever its number of columns (the non-empty bins), so it runs at R = D
PER_ROW = {"rb": "method.n_components"}
#: the arms that draw more random frequencies than they output columns: TEFM and Comp up-project
#: to method.n_up_components (null: 4 D) RKS features and keep D columns
UP_PROJECTED = ("tefm_g", "tefm_s", "comp", "craft_rm", "craft_ts")
#: kernel errors below this are at the rounding floor of the error itself (an exact map's residual):
#: a ratio of two of them is noise, so a (dataset, D, seed) where both maps are below it is not compared
FLOOR = 1e-6
#: a kernel-error claim's held-out reading (eval.kernel_error_split = test): the papers measure the error on the
#: rows their maps were fitted on (the training rows' block, kept beside the held-out one in each record), so
#: the claim is judged there and its re-reading on held-out rows is an extension claim (``<id>-heldout``)
HELD_OUT = " (re-read on held-out test rows no map was fitted on: beyond the paper, which measures on its data)"


def training_reading(value: str) -> str:
    """The column of ``value``'s training-row reading (``metrics.kerr_spec`` -> ``metrics.train_kerr_spec``)."""
    return value.replace("metrics.kerr_", "metrics.train_kerr_", 1)


#: the generated datasets (the others are the paper's data or a substitute)
GENERATED = {"checkerboard", "disk_annulus"}


def budget(table: pd.DataFrame) -> pd.Series:
    """The budget each run is charged at: its D on the leaderboard's axis.

    ``fitted.n_features_out`` (a [cos, sin] map with D / 2 frequencies outputs
    D columns), except a :data:`CAPPED` arm (RFF selection, given a cap of
    D / 2 frequencies, keeps fewer): it sits at its cap's D, compared with the
    other maps at the budget it was allowed (it is charged less); and a
    :data:`PER_ROW` arm (random binning), charged by its non-zeros per row, R.
    """
    out = table["fitted.n_features_out"].astype(float)
    for arm, (cap, per_unit) in CAPPED.items():
        if cap in table:
            sel = (table["arm"] == arm) & table[cap].notna()
            out = out.where(~sel, per_unit * table[cap].astype(float))
    for arm, col in PER_ROW.items():
        if col in table:
            sel = table["arm"] == arm
            out = out.where(~sel, table[col].astype(float))
    return out


def map_train_time(table: pd.DataFrame) -> pd.Series:
    """Seconds a user of the map pays: map fit + training transform + the model's final fit.

    ``timings.final_fit_s`` (the fit at the chosen lambda, timed apart from the
    search) where the run has it, else ``timings.train_s`` (the whole training).
    """
    cols = ["timings.fit_s", "timings.transform_train_s", "timings.fit_transform_s"]
    mapped = table.reindex(columns=cols).fillna(0.0).sum(axis=1)
    final = table["timings.final_fit_s"] if "timings.final_fit_s" in table else pd.Series(np.nan, index=table.index)
    train = table["timings.train_s"] if "timings.train_s" in table else pd.Series(0.0, index=table.index)
    return mapped + final.fillna(train.fillna(0.0))


def draws(table: pd.DataFrame) -> pd.Series:
    """Random frequencies (or grids, landmarks) each run drew: 4 D (or ``n_up_components``) for the
    :data:`UP_PROJECTED` maps, ``method.n_components`` otherwise (nan where a map has none)."""
    n = pd.to_numeric(table.get("method.n_components", pd.Series(np.nan, index=table.index)), errors="coerce")
    up = pd.to_numeric(table.get("method.n_up_components", pd.Series(np.nan, index=table.index)), errors="coerce")
    upp = table["arm"].isin(UP_PROJECTED)
    return n.where(~upp, up.fillna(4.0 * n))


def prepare(table: pd.DataFrame) -> pd.DataFrame:
    """Finished runs with the ``budget``, ``map_train_s``, ``nnz_per_row`` and ``draws`` columns added."""
    ok = finished(table).copy()
    if ok.empty:
        return ok.assign(**{BUDGET: pd.Series(dtype=float), TIME: pd.Series(dtype=float)})
    ok[BUDGET] = budget(ok)
    ok[TIME] = map_train_time(ok)
    if "memory.feature_nnz" in ok and "dataset.n_train" in ok:
        ok["nnz_per_row"] = ok["memory.feature_nnz"].astype(float) / ok["dataset.n_train"].astype(float)
    ok["draws"] = draws(ok)
    return ok


def pareto_front(time: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Boolean mask of the points no other point beats in both time and error (both minimised).

    A point is dominated when another is no worse in both and strictly better
    in one; ties in both are all kept.
    """
    t, e = np.asarray(time, dtype=float), np.asarray(error, dtype=float)
    le = (t[None, :] <= t[:, None]) & (e[None, :] <= e[:, None])
    lt = (t[None, :] < t[:, None]) | (e[None, :] < e[:, None])
    return ~(le & lt).any(axis=1)


def ranks(table: pd.DataFrame, value: str, *, block: tuple[str, ...] = ("dataset.name", BUDGET, "seed"),
          method: str = "arm") -> pd.DataFrame:
    """Rank of each method within each block (1 = lowest ``value``; ties share the mean rank).

    Only blocks where every method that measured ``value`` has it are kept, so each block ranks the
    same set.
    """
    wide = table.pivot_table(index=list(block), columns=method, values=value, aggfunc="mean")
    # a method that never measured the value (a run with eval.predict false) is left out, not every block
    wide = wide.dropna(axis=1, how="all").dropna()
    return wide.rank(axis=1, method="average")


def rank_table(table: pd.DataFrame, value: str, **kw) -> pd.DataFrame:
    """Mean rank per method with a 95% bootstrap interval over blocks, and Friedman's test.

    Blocks are (dataset, D, seed); the interval resamples blocks
    (scipy.stats.bootstrap, percentile, fixed seed). ``attrs`` carries the
    Friedman statistic and p-value over the same blocks (nan with fewer
    than three methods or two blocks).
    """
    r = ranks(table, value, **kw)
    rows = []
    for m in r.columns:
        x = r[m].to_numpy()
        if len(x) >= 2 and np.ptp(x) > 0:
            ci = stats.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                                 random_state=np.random.default_rng(0)).confidence_interval
            lo, hi = float(ci.low), float(ci.high)
        else:
            lo = hi = float(x.mean()) if len(x) else np.nan
        rows.append({"method": m, "mean_rank": float(x.mean()) if len(x) else np.nan,
                     "ci_low": lo, "ci_high": hi, "blocks": len(x)})
    out = pd.DataFrame(rows, columns=["method", "mean_rank", "ci_low", "ci_high", "blocks"])
    out = out.sort_values("mean_rank").reset_index(drop=True)
    stat = p = np.nan
    if r.shape[1] >= 3 and r.shape[0] >= 2:
        stat, p = stats.friedmanchisquare(*[r[m].to_numpy() for m in r.columns])
    out.attrs.update(friedman_stat=float(stat), friedman_p=float(p))
    return out


def ranked(error_words: str, kernel: str = "") -> dict[str, str]:
    """A study's ranked quantities (column -> words): the held-out kernel error, the train x held-out
    block's, and the test error (``error_words``); ``kernel`` names the kernel where it is not Gaussian."""
    of = f", {kernel} kernel" if kernel else ""
    return {KERR: f"relative kernel error on held-out rows (Frobenius{of})",
            KERR_CROSS: f"relative kernel error, train x held-out block (Frobenius{of})", ERROR: error_words}


def costs(table: pd.DataFrame, value: str, block: tuple[str, ...] = ("dataset.name", BUDGET, "seed"),
          method: str = "arm") -> pd.DataFrame:
    """Per method, over the runs :func:`ranks` ranks on ``value``: what it holds and what it costs.

    Means of ``columns`` (output columns), ``nnz_per_row`` (stored values per
    training row), ``draws`` (random frequencies, grids or landmarks drawn),
    ``time_s`` (:data:`TIME`), ``search_s`` (the lambda search), ``memory_mib``
    (``memory.peak_bytes`` / 2^20) and ``trained`` (False when a run of the
    method trained no model, ``eval.predict`` false: its time and memory are
    the map's alone). Columns a run did not record are nan.
    """
    r = ranks(table, value, block=block, method=method)
    cols = ["columns", "nnz_per_row", "draws", "time_s", "search_s", "memory_mib", "trained"]
    if r.empty:
        return pd.DataFrame(columns=cols)
    inside = pd.MultiIndex.from_frame(table[list(block)]).isin(r.index)
    sub = table[inside & table[method].isin(r.columns) & table[value].notna()]

    def col(name, scale=1.0):
        return sub[name].astype(float) / scale if name in sub else pd.Series(np.nan, index=sub.index)

    trained = sub[PREDICTED].astype(bool) if PREDICTED in sub else pd.Series(True, index=sub.index)
    return pd.DataFrame({"columns": col("fitted.n_features_out"), "nnz_per_row": col("nnz_per_row"),
                         "draws": col("draws"), "time_s": col(TIME), "search_s": col(SEARCH),
                         "memory_mib": col(MEMORY, 2.0**20), "trained": trained, method: sub[method]}
                        ).groupby(method).agg(
        columns=("columns", "mean"), nnz_per_row=("nnz_per_row", "mean"), draws=("draws", "mean"),
        time_s=("time_s", "mean"), search_s=("search_s", "mean"), memory_mib=("memory_mib", "mean"),
        trained=("trained", "all"))


#: the block of the matched-cost rankings: a level of time (or of memory) replaces D
LEVEL = "cost_level"
#: what a map's training features hold: n x D values for a dense map, the non-zeros and their indices
#: for a sparse one (random binning)
FEATURE_MEMORY = "memory.feature_bytes"
#: the costs a ranking is matched on: column -> (words, unit of the levels)
MATCHED = {TIME: ("time", "s"), FEATURE_MEMORY: ("memory of the training features", "bytes")}


def at_matched(ok: pd.DataFrame, value: str, cost: str = TIME) -> pd.DataFrame:
    """Each method's best ``value`` within each of a dataset's levels of ``cost``, per seed.

    The levels of a dataset are, per budget D, the median over methods of
    their mean ``cost`` (:data:`TIME`, or :data:`FEATURE_MEMORY`) at that D: a
    common scale of seconds or bytes. At level L a method's value is the least
    of its runs (of that seed) that cost at most L; a method none of whose runs
    fits in L gets +inf, so it ranks last there (tied with any other such).
    Returns rows of (dataset, level, seed, arm, value) for :func:`ranks` with
    ``block=("dataset.name", LEVEL, "seed")``.
    """
    rows = []
    sub_all = ok.dropna(subset=[value, cost]) if cost in ok else ok.iloc[:0]
    for name, sub in sub_all.groupby("dataset.name"):
        levels = sorted(set(sub.groupby(["arm", BUDGET])[cost].mean().groupby(BUDGET).median()))
        for (arm, seed), runs in sub.groupby(["arm", "seed"]):
            t, v = runs[cost].to_numpy(float), runs[value].to_numpy(float)
            for level in levels:
                inside = v[t <= level]
                rows.append({"dataset.name": name, LEVEL: level, "seed": seed, "arm": arm,
                             value: float(inside.min()) if inside.size else np.inf})
    return pd.DataFrame(rows, columns=["dataset.name", LEVEL, "seed", "arm", value])


def _num(x, fmt: str = ".3g") -> str:
    return "" if x is None or not np.isfinite(x) else format(x, fmt)


def rank_markdown(table: pd.DataFrame, values: dict[str, str]) -> str:
    """Markdown rank tables, one per measured quantity (``values``: column -> words), then at matched time.

    Beside each method's rank: what it holds (output columns, stored values
    per row, random draws) and what it costs (time, the lambda search, peak
    memory) over the runs ranked. The last two tables rank the test error (or the
    first quantity) at matched time and at matched memory of the training features (:func:`at_matched`).
    """
    ok = prepare(table)
    parts = []
    for col, words in values.items():
        rt = rank_table(ok, col) if len(ok) else pd.DataFrame()
        if rt.empty or rt["blocks"].max() == 0:
            parts.append(f"**{words}**: no block where every method finished.")
            continue
        cost = costs(ok, col)
        lines = [f"**{words}**: mean rank over {int(rt['blocks'].iloc[0])} blocks (dataset x D x seed), "
                 f"1 = best; 95% bootstrap interval over blocks. Friedman chi2 = "
                 f"{rt.attrs['friedman_stat']:.3g}, p = {rt.attrs['friedman_p']:.2g}. Beside it, means over the "
                 "runs ranked: output columns, stored values per training row, random frequencies (grids, "
                 "landmarks) drawn, time (map fit + training transform + the final fit at the chosen lambda, the "
                 "fastest of 3), the lambda search's time, and the run's traced peak memory.", "",
                 "| method | mean rank | 95% interval | columns | values / row | draws | time (s) | search (s) "
                 "| peak memory (MiB) |", "|---|---|---|---|---|---|---|---|---|"]
        for r in rt.itertuples():
            c = cost.loc[r.method] if r.method in cost.index else None
            mark = "" if c is None or c["trained"] else " (map only)"
            cells = ["", "", "", "", "", ""] if c is None else [
                _num(c["columns"], ".0f"), _num(c["nnz_per_row"], ".0f"), _num(c["draws"], ".0f"),
                _num(c["time_s"]) + mark, _num(c["search_s"]), _num(c["memory_mib"]) + mark]
            lines.append(f"| {label(r.method)} | {r.mean_rank:.2f} | [{r.ci_low:.2f}, {r.ci_high:.2f}] | "
                         + " | ".join(cells) + " |")
        if len(cost) and not cost["trained"].all():
            lines += ["", "(map only): these runs train no model (eval.predict false), so their time and memory "
                          "are the map's and the kernel error's alone."]
        parts.append("\n".join(lines))
    matched = next((c for c in (ERROR, *values) if c in values and c in ok), None) if len(ok) else None
    for cost, (words, unit) in MATCHED.items() if matched is not None else ():
        at = at_matched(ok, matched, cost)
        rt = rank_table(at, matched, block=("dataset.name", LEVEL, "seed")) if len(at) else pd.DataFrame()
        if not len(rt) or rt["blocks"].max() == 0:
            continue
        guard = ""
        if cost == TIME:
            busy, load = host_busy(ok)
            guard = (f" Not evidence: the host was busy ({load}, above cores + {BUSY_MARGIN})." if busy
                     else f" The times were taken one run at a time ({load}).")
        lines = [f"**{values[matched]} at matched {words}**: mean rank over {int(rt['blocks'].iloc[0])} blocks "
                 f"(dataset x level x seed). A dataset's levels are, per D, the median over methods of their mean "
                 f"{words} ({unit}); at each level a method's value is its best among its runs that cost at most "
                 "that much, and a method with no run that cheap ranks last there." + guard, "",
                 "| method | mean rank | 95% interval |", "|---|---|---|"]
        lines += [f"| {label(r.method)} | {r.mean_rank:.2f} | [{r.ci_low:.2f}, {r.ci_high:.2f}] |"
                  for r in rt.itertuples()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def figure(table: pd.DataFrame, title: str):
    """Per dataset: kernel and test error against D, and test error against map + train time with the Pareto front.

    Each arm keeps one colour, marker and dash in every panel; the legend is
    in the kernel-error panel, where every arm has points (an arm run with
    ``eval.predict`` false has no test error).
    """
    ok = prepare(table)
    names = sorted(table["dataset.name"].dropna().unique()) if "dataset.name" in table else []
    panels = [(n, k) for n in names for k in ("kerr_D", "err_D", "err_time")]
    # more methods than colours: the marker and dash tell the repeated colours apart
    style = {arm: {"color": f"C{i % 10}", "marker": "os^"[i // 10 % 3], "ls": "-:"[i // 10 % 2]}
             for i, arm in enumerate(sorted(ok["arm"].unique()) if len(ok) else [])}
    fig, axes = grid_axes(max(len(panels), 1), ncols=3, size=(4.6, 3.4))
    for ax, (name, kind) in zip(axes, panels):
        sub = ok[ok["dataset.name"] == name]
        if sub.empty:
            not_run_panel(ax, name, "no finished runs")
            continue
        y = KERR if kind == "kerr_D" else ERROR
        # bars: the 16th and 84th percentiles over seeds (+-1 std for a normal spread), which stay
        # positive on the log axes where mean - std of a skewed error can fall below zero
        g = sub.groupby(["arm", BUDGET]).agg(y=(y, "mean"), lo=(y, lambda v: v.quantile(0.16)),
                                             hi=(y, lambda v: v.quantile(0.84)), t=(TIME, "mean")).reset_index()
        g = g.dropna(subset=["y"])  # an arm that did not measure it (eval.predict false)
        for arm, a in g.groupby("arm"):
            x = a["t"] if kind == "err_time" else a[BUDGET]
            bars = np.clip(np.vstack([a["y"] - a["lo"], a["hi"] - a["y"]]), 0.0, None)
            ax.errorbar(x, a["y"], yerr=bars, ms=3, capsize=2, label=label(arm), **style[arm])
        if kind == "err_time":
            front = g[pareto_front(g["t"], g["y"])].sort_values("t")
            (line,) = ax.step(front["t"], front["y"], where="post", color="k", lw=1.5, ls="--", label="Pareto front")
            ax.scatter(front["t"], front["y"], s=60, facecolors="none", edgecolors="k", zorder=5)
            ax.set_xlabel("map + train time (s)")
            ax.set_xscale("log")
            # plain numbers at 1, 2, 5 x 10^k: a time axis spans about a decade, where the
            # default labels every minor tick in scientific notation and they overlap
            plain = FuncFormatter(lambda v, _: f"{v:g}")
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
            ax.xaxis.set_minor_formatter(plain)
            ax.legend(handles=[line], fontsize=6)
        else:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("output columns D")
        ax.set_yscale("log")
        ax.set_ylabel("relative kernel error (Frobenius)" if kind == "kerr_D" else "test error")
        ax.set_title(name, fontsize=10)
        if kind == "kerr_D":
            ax.legend(fontsize=6, ncol=2)
    fig.suptitle(title + " (mean over seeds; bars: 16th-84th percentiles)")
    fig.tight_layout()
    return fig


#: the dimensions of Chen et al.'s data (Fig. 1: cpu 21 ... MNIST 784; Fig. 2-3: Slice, 384), and why a map's
#: standing moves with d there
CHEN_D = (21, 784)
CHEN_D_WHY = ("Chen et al.'s Sec. 2.1: quasi-Monte Carlo improves the error only when the number of features "
              "is exponential in the data dimension")

#: each paper's central claim on the Gaussian kernel: champion arm(s), the maps the paper itself compared them
#: with (``met``: a claim against any other map is an extension beyond the paper), the compared quantity,
#: threshold and its reason, and (``paper_d``) the range of dimension of the paper's data where the papers'
#: data do not cover the leaderboard's (:func:`by_range`)
CROSS_CLAIMS = {
    "C1.1": {
        "champions": ("tefm_g", "tefm_s"), "value": "metrics.kerr_spec", "log": True, "threshold": 2 ** -0.5,
        "paper_d": CHEN_D, "d_why": CHEN_D_WHY,
        "met": ("rks_cos", "rks_cossin", "comp", "quasi", "fastfood"),
        "text": ('Chen et al. (2015): "our algorithms incur nearly half of approximation error compared to '
                 'others" (Sec. 4.1, Fig. 1), re-tested against every other Gaussian map at equal output columns'),
        "why": ("'nearly half' = a ratio below the geometric midpoint of 1/2 and 1, 2^-1/2 (the threshold of our "
                "chen2015/fig1 C1.1), here in every (dataset, D) cell against each map apart: stricter than "
                "chen2015/fig1, which pools the ratio over datasets, l and baselines"),
    },
    "C1.4": {
        "champions": ("tefm_g", "tefm_s"), "value": ERROR, "log": False, "threshold": 0.0,
        "paper_d": CHEN_D, "d_why": CHEN_D_WHY,
        "met": ("rks_cos", "rks_cossin", "comp", "quasi", "fastfood"),
        "text": ('Chen et al. (2015): TEFM reaches a given test error with fewer features (Sec. 4.2, Fig. 2), '
                 'read at equal features: a lower test error'),
        "why": "'fewer features for the same accuracy' at equal features: a lower test error, a difference below 0",
    },
    "C2.2": {
        "champions": ("rff_selection",), "value": ERROR, "log": False, "threshold": 0.01,
        "met": ("rks_cossin",),
        "text": ('Schleif et al. (2016): the selected small set D* keeps "almost the same accuracy" (Table 1), '
                 're-tested against each other map given the full budget D'),
        "why": ("as in the paper's own C2.2: 'almost the same accuracy' = a loss below 1 point (0.01 of error; on "
                "the regression studies 0.01 of relative RMSE, by analogy: the paper reports accuracy only)"),
    },
    "C3.2": {
        "champions": ("comp",), "value": KERR, "log": True, "threshold": 1.0,
        "met": (),  # Hamid et al. use only the polynomial kernel: Comp on the Gaussian is Chen's adaptation
        "text": ('Hamid et al. (2014): "CRAFTMaps provide a significant reconstruction improvement" (Sec. 5, '
                 'Fig. 4); here CRAFT over RKS (Comp), against every other Gaussian map at equal output columns'),
        "why": "as in the paper's own C3.2: a kernel error below the other map's, a ratio below 1 in every cell",
    },
    "C3.3": {
        "champions": ("comp",), "value": ERROR, "log": False, "threshold": 0.0,
        "met": (),
        "text": 'Hamid et al. (2014): CRAFTMaps improve the classification error at equal E (Sec. 5, Table 2)',
        "why": "'improve': a lower test error, a difference below 0, in every cell (no margin stated)",
    },
    "C4.2": {
        "champions": ("rff_opt",), "value": ERROR, "log": False, "threshold": 0.0,
        "met": ("rks_cossin",),
        "text": ('Sun et al. (2018): leverage-weighted ("opt") features perform better than uniform ones '
                 '(Sec. 5, Fig. 1), re-tested against every other Gaussian map at equal output columns'),
        "why": "as in the paper's own C4.2: 'performs better' = any gain, a test-error difference below 0",
    },
}


#: the claims re-tested on the Laplacian kernel's maps
LAPLACIAN_CLAIMS = {
    "C5.1": {
        "champions": ("rb",), "value": ERROR, "log": False, "threshold": 0.0,
        "met": ("rks_cos", "rks_cossin", "nystrom"),
        "text": ('Wu et al. (2016): "RB significantly outperforms other methods in testing performance on all of '
                 'these datasets, especially when R is relatively small" (Sec. 5.2, Fig. 5), re-tested against every '
                 'other Laplacian map at equal output columns'),
        "why": ("as in the paper's own C5.1: 'outperforms' = a lower test error by any amount, a difference below 0, "
                "in every (dataset, D) cell; as in the paper, at equal R: RB's R grids against D = R columns of "
                "the other maps (equal non-zeros per row)"),
    },
}

#: the claims re-tested on the polynomial kernel's maps (Hamid et al.'s r = 7, q = 1)
POLYNOMIAL_CLAIMS = {
    "C3.2": {
        "champions": ("craft_rm", "craft_ts"), "value": KERR, "log": True, "threshold": 1.0,
        "met": {"craft_rm": ("rm",), "craft_ts": ("ts",)},  # each CRAFT map against its own up-projection
        "text": ('Hamid et al. (2014): "CRAFTMaps provide a significant reconstruction improvement for random '
                 'maps and tensor sketches" (Sec. 5.1, Fig. 4, the r = 7, q = 1 polynomial kernel), re-tested '
                 'against every other polynomial map at equal output columns'),
        "why": ("as in the paper's own C3.2: 'significant' is not quantified, so any improvement: a kernel error "
                "(Frobenius, Hamid's Nrms) below the other map's, a ratio below 1, in every (dataset, D) cell"),
    },
    "C3.3": {
        "champions": ("craft_rm", "craft_ts"), "value": ERROR, "log": False, "threshold": 0.0,
        "met": {"craft_rm": ("rm",), "craft_ts": ("ts",)},  # each CRAFT map against its own up-projection
        "text": ('Hamid et al. (2014): "CRAFTMaps delivered consistently improved classification results" over '
                 'random maps and tensor sketches (Sec. 5.2, Table 1), re-tested against every other polynomial '
                 'map at equal output columns with the leaderboard\'s linear SVM'),
        "why": ("as in the paper's own C3.3: 'consistently improved' = a lower test error, a difference below 0, "
                "in every (dataset, D) cell (no margin stated)"),
    },
}

#: the claims re-tested on each kernel's maps
KERNEL_CLAIMS = {"gaussian": CROSS_CLAIMS, "laplacian": LAPLACIAN_CLAIMS, "polynomial": POLYNOMIAL_CLAIMS}


def data_kind(names) -> tuple[str, str]:
    """The claim's ``data`` kind: generated when every dataset is, else a substitute for the paper's data."""
    names = set(names)
    if names and names <= GENERATED:
        return "generated", "generated data: " + ", ".join(sorted(names))
    return "substitute", ("the leaderboard's common setting (" + ", ".join(sorted(names)) +
                          ", subsampled), not the paper's datasets")


def cross_claims(table: pd.DataFrame, claim_ids=None, *, kernel: str = "gaussian") -> list[dict]:
    """One claim per (paper claim, champion, challenger): does the claim hold against that method?

    ``kernel`` picks the claims (:data:`KERNEL_CLAIMS`) and the challengers
    (the study's arms; the kernel's declared arms (rfrepro.harness.run.arms) when the champion has no
    finished run); ``claim_ids`` the claims judged (default: all of the
    kernel's). Each (dataset, D) is a cell; the per-seed statistic is the
    champion's value minus (or, ``log``, the log ratio to) the challenger's at
    the same dataset, D and seed; judged by :func:`judge_every` (every cell
    must pass).
    """
    specs = KERNEL_CLAIMS[kernel]
    claim_ids = tuple(specs) if claim_ids is None else tuple(claim_ids)
    ok = prepare(table)
    arms = sorted(set(ok["arm"])) if len(ok) else list(kernel_arms(kernel))
    kind, note = data_kind(ok["dataset.name"].unique() if len(ok) else table.get("dataset.name", []))
    out = []
    for cid, spec in specs.items():
        if cid not in claim_ids:
            continue
        champions = spec["champions"]
        same = _coincide(ok, champions, spec["value"])
        for champ in champions[:1] if same else champions:
            tag = f"X-{cid}" + (f"-{champ}" if len(champions) > 1 and not same else "")
            pool = arms if champ in arms else kernel_arms(kernel)
            for other in [a for a in pool if a not in champions]:
                who = label(champ) + (" (= " + ", ".join(label(c) for c in champions[1:])
                                      + " in every cell: the maps coincide here)" if same else "")
                claim_id = f"{tag}-vs-{other}"
                common = dict(paper_text=spec["text"], threshold=spec["threshold"], side="less",
                              threshold_why=spec["why"], log=spec["log"])
                # a kernel-error claim is judged as the papers measure it, on the rows the maps were fitted on;
                # its held-out reading is a finding beyond the paper (an extension claim of its own)
                train = training_reading(spec["value"])
                value = train if train != spec["value"] and train in ok and ok[train].notna().any() else spec["value"]
                claim = _judged(claim_id, ok, (champ, who), other, value, common)
                met = spec["met"].get(champ, ()) if isinstance(spec["met"], dict) else spec["met"]
                if other not in met:
                    claim["extension"] = True  # the paper never compared with this map
                claim = by_budget(with_data(claim, kind, note), ok)
                out.append(by_range(claim, ok, spec, value, ((champ, who), other, common)))
                if value != spec["value"]:
                    held = _judged(f"{claim_id}-heldout", ok, (champ, who), other, spec["value"],
                                   {**common, "paper_text": spec["text"] + HELD_OUT})
                    held["extension"] = True
                    out.append(with_data(held, kind, note))
    return out


#: a cell where D is at least this share of the training rows is outside the regime random features are for:
#: Nystrom with D >= n landmarks is the exact kernel, TEFM at l >= n the Gram of its RKS features
DEGENERATE_SHARE = 0.5


def by_budget(claim: dict, ok: pd.DataFrame) -> dict:
    """A fail decided by a cell with D >= n/2 is a limitation of our budget axis (its mechanism: the maps
    there are exact or near it, and ratios of their errors are of rounding noise), not a disagreement."""
    if claim["verdict"] != FAIL:
        return claim
    cell = str(claim.get("interval", "")).rpartition("binding cell: ")[2]
    m = re.fullmatch(r".+, D=(\d+), n=(\d+)", cell)
    if m and int(m.group(1)) >= DEGENERATE_SHARE * int(m.group(2)):
        limitation(claim, f"decided by the cell {cell} with D >= n/2, where data-dependent maps are the exact "
                          "kernel or near it and error ratios are of rounding noise",
                   "the same claim on cells with n >= 8 D (more training rows, or D at most n/8)")
    return claim


def _judged(cid: str, ok: pd.DataFrame, champion: tuple[str, str], other: str, value: str, common: dict) -> dict:
    """:func:`judge_every` of the champion (arm, label) against ``other`` on ``value``, every (dataset, D) a
    cell; ``common``: the claim's text, threshold and ``log``."""
    champ, who = champion
    log = common["log"]
    cells, floored = _cells(ok, champ, other, value, log) if len(ok) else ({}, 0)
    stat = (f"per seed, in each (dataset, D) cell: {value} of {who} " + ("/" if log else "-")
            + f" that of {label(other)}")
    if floored:
        stat += f"; {floored} (dataset, D, seed) pairs where both errors are below {FLOOR:g} (the rounding floor) are left out"
    return judge_every(cid, cells, statistic=stat, reason="" if cells else _missing(ok, champ, other, value), **common)


def by_range(claim: dict, ok: pd.DataFrame, spec: dict, value: str, pair: tuple) -> dict:
    """A fail that holds only on data outside the paper's own range of dimension d (``spec["paper_d"]``) is a
    limitation of our data, not a disagreement: the claim is judged again on the datasets inside the range,
    and the fail stays evidence against the paper only when it fails there too."""
    if claim["verdict"] != FAIL or claim.get("fail_kind") == "limitation" or claim.get("extension") \
            or "paper_d" not in spec or "dataset.d" not in ok:
        return claim
    lo, hi = spec["paper_d"]
    d = ok.groupby("dataset.name")["dataset.d"].first().astype(int)
    outside = sorted(n for n, v in d.items() if not lo <= v <= hi)
    if not outside:
        return claim
    champion, other, common = pair
    inside = _judged(claim["id"], ok[~ok["dataset.name"].isin(outside)], champion, other, value, common)
    if inside["verdict"] == FAIL:
        return claim
    where = ", ".join(f"{n} (d = {d[n]})" for n in outside)
    limitation(claim, f"decided by data outside the paper's range of dimension, d = {lo}..{hi}: {where}; a map's "
                      f"error depends on d ({spec.get('d_why', 'the paper measured none below it')})",
               f"the same claim on data with d in the paper's range: on the others here it is {inside['verdict']}"
               + (f" ({inside['reason']})" if inside.get("reason") else ""))
    return claim


def _missing(ok: pd.DataFrame, champ: str, other: str, value: str) -> str:
    """Why a claim has no cell: an arm without finished runs, or without the value (it did not predict)."""
    for arm in (champ, other):
        runs = ok[ok["arm"] == arm] if len(ok) else ok
        if runs.empty:
            return f"no finished runs of {arm}"
        if value not in runs or runs[value].isna().all():
            why = (" (its runs train no model: eval.predict is false, see the study's deviations)"
                   if PREDICTED in runs and not runs[PREDICTED].astype(bool).any() else "")
            return f"{arm} has no {value}{why}"
    return f"no paired finished runs of {champ} and {other}"


def claims_markdown(claims: list[dict]) -> str:
    """The cross-paper claims as one table: claim (rows) x challenger (columns) -> verdict [interval]."""
    cells: dict[str, dict[str, str]] = {}
    for c in claims:
        claim, other = c["id"].rsplit("-vs-", 1)
        ci = "" if c["ci_low"] is None else f" [{c['ci_low']:.3g}, {c['ci_high']:.3g}]"
        cells.setdefault(claim, {})[label(other)] = f"{c['verdict']}{ci}"
    if not cells:
        return ""
    cols = sorted({o for row in cells.values() for o in row})
    lines = ["**Cross-paper claims** (verdict, and the binding cell's 95% interval: a ratio for C1.1 / C3.2, "
             "a difference of test errors otherwise):", "",
             "| claim | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    lines += [f"| {claim} | " + " | ".join(row.get(o, "") for o in cols) + " |" for claim, row in cells.items()]
    return "\n".join(lines)


def _coincide(ok: pd.DataFrame, champions: tuple[str, ...], value: str) -> bool:
    """True when the champions' values are equal (to float rounding) in every (dataset, D, seed) both ran:
    one map under two names there (TEFM-G and TEFM-S at l >= n), so one claim, not two."""
    if len(champions) < 2 or not len(ok) or value not in ok:
        return False
    wide = (ok[ok["arm"].isin(champions)].groupby(["dataset.name", BUDGET, "seed", "arm"])[value].mean()
            .unstack("arm").dropna())
    if wide.empty or wide.shape[1] < len(champions):
        return False
    first = wide.iloc[:, 0].to_numpy(dtype=float)
    return all(np.allclose(wide.iloc[:, i].to_numpy(dtype=float), first, rtol=1e-9, atol=0.0)
               for i in range(1, wide.shape[1]))


def _cell_name(name: str, D, sub: pd.DataFrame) -> str:
    """``<dataset>, D=<D>, n=<training rows>`` (``n`` where the runs record it)."""
    n = pd.to_numeric(sub["dataset.n_train"], errors="coerce").dropna() if "dataset.n_train" in sub else []
    return f"{name}, D={int(D)}" + (f", n={int(n.iloc[0])}" if len(n) else "")


def _cells(ok: pd.DataFrame, champ: str, other: str, value: str, log: bool) -> tuple[dict[str, pd.Series], int]:
    """Per (dataset, D) cell, the per-seed statistic; and how many pairs :data:`FLOOR` left out (ratios only)."""
    cells, floored = {}, 0
    for (name, D), sub in ok.groupby(["dataset.name", BUDGET]):
        a = sub[sub["arm"] == champ].groupby("seed")[value].mean()
        b = sub[sub["arm"] == other].groupby("seed")[value].mean()
        a, b = a.align(b, join="inner")
        if log:  # both at the rounding floor: their ratio is noise
            keep = ~((a < FLOOR) & (b < FLOOR))
            floored += int((~keep).sum())
            a, b = a[keep], b[keep]
        if a.empty:
            continue
        d = (np.log(a / b) if log else a - b).replace([np.inf, -np.inf], np.nan).dropna()
        if len(d):
            cells[_cell_name(name, D, sub)] = d
    return cells, floored
