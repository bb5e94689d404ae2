"""Shared pieces of the Hamid, Xiao, Gittens and DeCoste (2014) CRAFTMaps studies."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

# one helper for log-ratio verdicts across studies (a t interval of the mean log ratio over seeds)
from rfrepro.harness.report.claims import combine_data, judge_log_ratio, loglog_slope, paired_values  # noqa: F401
from rfrepro.harness.report.plots import finished, mean_std

#: Sweep arm -> label, in legend order.
LABELS = {
    "rm": "RM", "rm_h01": "RM (H0/1)", "ts": "TS",
    "craft_rm": "CRAFT-RM", "craft_rm_gauss": "CRAFT-RM (Gaussian)", "craft_rm_srht": "CRAFT-RM (SRHT)",
    "craft_rm_h01": "CRAFT-RM (H0/1)",
    "craft_ts": "CRAFT-TS", "craft_ts_gauss": "CRAFT-TS (Gaussian)", "craft_ts_srht": "CRAFT-TS (SRHT)",
}
STYLE = {
    "rm": ("tab:red", "o", "-"), "rm_h01": ("tab:orange", "o", "-"), "ts": ("tab:green", "s", "-"),
    "craft_rm": ("tab:red", "^", "--"), "craft_rm_gauss": ("tab:red", "^", "--"),
    "craft_rm_srht": ("darkred", "v", ":"), "craft_rm_h01": ("tab:orange", "^", "--"),
    "craft_ts": ("tab:green", "^", "--"), "craft_ts_gauss": ("tab:green", "^", "--"),
    "craft_ts_srht": ("darkgreen", "v", ":"),
}
#: CRAFTMap arm -> the map it up-projects with (the arm it is compared with).
BASE_OF = {
    "craft_rm": "rm", "craft_rm_gauss": "rm", "craft_rm_srht": "rm", "craft_rm_h01": "rm_h01",
    "craft_ts": "ts", "craft_ts_gauss": "ts", "craft_ts_srht": "ts",
}
#: Dataset config name -> display name, MNIST (the paper's) first.
DATASETS = {"mnist": "MNIST", "usps": "USPS", "letter": "letter", "spambase": "spambase", "a9a": "a9a",
            "ijcnn1_val": "ijcnn1 (validation split)", "cod_rna": "cod-rna"}
#: Dataset config name -> (data kind, note) for a claim's ``data`` field. The (garbled) text names only
#: MNIST (784-d, Sec. 5.2); the other datasets of Fig. 4 and Table 1 are our choices for its unnamed ones.
#: Rows are scaled to unit L2 norm everywhere: the paper's analysis assumes the unit sphere (Sec. 3.4)
#: and its experiments state no preprocessing.
UNNAMED = "a substitute for one of the datasets the paper does not name"
DATA = {
    "mnist": ("same", "MNIST: 784 pixels / 255, rows scaled to unit L2 norm (the paper's analysis assumes the "
                      "unit sphere; its experiments state no preprocessing)"),
    "usps": ("substitute", f"USPS (ESL's, 256 features, unit L2 rows): {UNNAMED}"),
    "letter": ("substitute", f"letter (LIBSVM, 16 features, unit L2 rows): {UNNAMED}"),
    "spambase": ("substitute", f"spambase (UCI, 57 features, z-scored then unit L2 rows): {UNNAMED}"),
    "a9a": ("substitute", f"a9a (LIBSVM, 123 binary features, unit L2 rows): {UNNAMED}"),
    "ijcnn1_val": ("substitute", f"ijcnn1's 14990-row validation split (22 features, unit L2 rows): {UNNAMED}"),
    "cod_rna": ("substitute", f"cod-rna (LIBSVM, 8 features, z-scored then unit L2 rows): {UNNAMED}"),
}
NRMS = "metrics.nrms"
E_COL = "fitted.n_features_out"


def dataset_names(table: pd.DataFrame) -> list[str]:
    """Dataset names in the table, MNIST first (unknown ones last, sorted)."""
    present = set(table["dataset.name"].dropna()) if "dataset.name" in table else set()
    return [d for d in DATASETS if d in present] + sorted(present - set(DATASETS))


def display_name(name: str) -> str:
    return DATASETS.get(name, name)


def claim_data(names) -> tuple[str, str]:
    """(kind, note) of a claim judged on the datasets ``names``: ``same`` only when all are the paper's."""
    return combine_data(DATA.get(n, ("substitute", f"{display_name(n)}: {UNNAMED}")) for n in names)


def arms_in(table: pd.DataFrame) -> list[str]:
    present = set(table["arm"].dropna()) if "arm" in table else set()
    return [a for a in LABELS if a in present] + sorted(present - set(LABELS))


def not_run_reason(table: pd.DataFrame, name: str | None = None) -> str:
    """'data unavailable' when every run (of dataset ``name``) says so, else 'no finished runs'."""
    t = table if name is None or "dataset.name" not in table else table[table["dataset.name"] == name]
    statuses = set(t["status"]) if "status" in t else set()
    return "data unavailable" if statuses == {"unavailable"} else "no finished runs"


def degree_of(table: pd.DataFrame) -> pd.Series:
    """The polynomial degree of each run (a plain map records it as method.degree, a CRAFTMap as method.up.degree)."""
    d = table["method.degree"] if "method.degree" in table else pd.Series(np.nan, index=table.index)
    if "method.up.degree" in table:
        d = d.fillna(table["method.up.degree"])
    return d


def plot_arms(ax, sub: pd.DataFrame, x: str, y: str, arms: list[str] | None = None) -> None:
    """Mean +- std over seeds of ``y`` against ``x``, one line per arm."""
    g = mean_std(sub, x, y, "arm")
    for arm in arms or arms_in(sub):
        a = g[g["arm"] == arm].sort_values(x)
        if a.empty:
            continue
        color, marker, ls = STYLE.get(arm, (None, "o", "-"))
        line = ax.plot(a[x], a["mean"], marker=marker, ms=4, ls=ls, color=color, label=LABELS.get(arm, arm))[0]
        ax.fill_between(a[x], a["mean"] - a["std"], a["mean"] + a["std"], alpha=0.12, color=line.get_color())


def log_ratios(table: pd.DataFrame, num: str, den: str, y: str, on: list[str]) -> pd.Series:
    """log(y(num) / y(den)) per (seed, *on), the two arms' runs paired on those keys (finished runs only)."""
    t = finished(table)
    if t.empty or not {num, den} <= set(t["arm"]):
        return pd.Series(dtype=float)
    return np.log(paired_values(t, arm_col="arm", a=num, b=den, value=y, on=["seed", *on], op="ratio")).dropna()


def per_cell(values: pd.Series, by: list[str], name: Callable[..., str]) -> dict[str, pd.Series]:
    """Per-seed values of each cell (one per value of the ``by`` index levels), averaged over its other levels.

    The cells of :func:`rfrepro.harness.report.claims.judge_every`; ``name`` turns a
    cell's ``by`` values into its label.
    """
    if values.empty:
        return {}
    per = values.groupby(level=[*by, "seed"]).mean()
    return {name(*(k if isinstance(k, tuple) else (k,))): v.droplevel(by) for k, v in per.groupby(level=by)}


def ratio_table(logs: pd.Series, level: str) -> dict:
    """Geometric mean over seeds (and other levels) of the ratio, per value of ``level`` (for the record)."""
    if logs.empty:
        return {}
    def key(k) -> str:
        return str(int(k)) if isinstance(k, float) and k.is_integer() else str(k)

    return {key(k): round(float(np.exp(v)), 4) for k, v in logs.groupby(level=level).mean().items()}
