"""Shared pieces of the Wu, Chen, Yen and Yan (2016) studies: names, styles, per-seed statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from rfrepro.harness.report.claims import combine_data
from rfrepro.harness.report.plots import finished

#: Dataset config name -> the paper's name, in the paper's order (Table 1).
DATASETS = {
    "cadata": "cadata", "census": "census", "ijcnn1_tr": "ijcnn1", "ijcnn1_val": "ijcnn1 [validation split]",
    "cod_rna": "cod_rna", "covtype": "covtype", "susy": "SUSY", "mnist": "mnist", "acoustic": "acoustic",
    "letter_tr": "letter",
}
#: Sweep arm -> legend label and style. Fig. 5 runs BlockDiag in two readings of its R:
#: the mean block size (``blockdiag_size``) and the number of blocks (``blockdiag_count``).
LABELS = {"rb": "RandBin", "rf": "Fourier", "nystrom": "Nystrom", "blockdiag": "BlockDiag",
          "blockdiag_size": "BlockDiag (block size R)", "blockdiag_count": "BlockDiag (R blocks)", "exact": "Kernel"}
STYLE = {"rb": ("tab:red", "o"), "rf": ("tab:blue", "s"), "nystrom": ("tab:green", "^"),
         "blockdiag": ("tab:purple", "D"), "blockdiag_size": ("tab:purple", "D"),
         "blockdiag_count": ("tab:brown", "v"), "exact": ("black", "*")}
#: Dataset config name -> (data kind, how it differs from the paper's), for a claim's ``data`` field.
DATA = {
    "cadata": ("same", "LIBSVM's cadata, features scaled to [-1, 1] on the training split (the paper does "
                       "not say how it scaled)"),
    "census": ("same", "the 119-feature census of the paper's Table 1 (18186 / 2273 rows, shapes checked; files "
                       "placed by hand, public source unclear), features scaled to [-1, 1]"),
    "ijcnn1_tr": ("same", "LIBSVM's ijcnn1 (35000 training rows, ijcnn1.t as test)"),
    "ijcnn1_val": ("substitute", "ijcnn1's validation split (14990 rows) for ijcnn1 (35000 training rows)"),
    "cod_rna": ("substitute", "LIBSVM's cod-rna with 59535 training rows (the paper's Table 1: 49437), features "
                              "scaled to [-1, 1]"),
    "covtype": ("same", "LIBSVM's covtype, features scaled to [-1, 1]"),
    "susy": ("same", "LIBSVM's SUSY, features scaled to [-1, 1]"),
    "mnist": ("substitute", "mnist with 784 pixel features / 255 (the paper's has 780)"),
    "acoustic": ("same", "LIBSVM's acoustic"),
    "letter_tr": ("same", "LIBSVM's letter (10500 training rows)"),
}
ERROR = "metrics.error"          # regression: relative error; classification: 1 - accuracy
TRAIN_ERROR = "metrics.train_error"
D = "fitted.n_features_out"


def dataset_names(table: pd.DataFrame) -> list[str]:
    """Datasets in the table, in the paper's order (unknown ones last, sorted)."""
    present = set(table["dataset.name"].dropna()) if "dataset.name" in table else set()
    return [d for d in DATASETS if d in present] + sorted(present - set(DATASETS))


def label(name: str) -> str:
    return DATASETS.get(name, name)


def claim_data(names: list[str]) -> tuple[str, str]:
    """The data kind of a claim judged on ``names``: substitute when any of them is, with the notes."""
    return combine_data((kind, f"{label(n)}: {note}") for n in names
                        for kind, note in [DATA.get(n, ("substitute", f"{n} (not one of the paper's datasets)"))])


def not_run_reason(table: pd.DataFrame, name: str) -> str:
    statuses = set(table.loc[table["dataset.name"] == name, "status"]) if "status" in table else set()
    return "data unavailable" if statuses == {"unavailable"} else "no finished runs"


def is_regression(sub: pd.DataFrame) -> bool:
    return "dataset.task" in sub and str(sub["dataset.task"].dropna().iloc[0]) == "regression"


def performance(sub: pd.DataFrame, col: str = ERROR) -> tuple[pd.Series, str]:
    """The paper's y axis: relative error (regression) or accuracy in % (classification)."""
    if is_regression(sub):
        return sub[col], "relative error"
    return 100.0 * (1.0 - sub[col]), "accuracy %"


def per_dataset(table: pd.DataFrame):
    """(name, finished rows) for each dataset of the study, finished rows possibly empty.

    An arm named ``<method>_<dataset>`` (a dataset given its own seeds, as
    Fig. 5's ``rb_mnist``) is the method's arm: its rows come back as ``<method>``.
    """
    ok = finished(table)
    for name in dataset_names(table):
        sub = ok[ok["dataset.name"] == name] if len(ok) else ok
        if len(sub) and "arm" in sub:
            sub = sub.assign(arm=sub["arm"].astype(str).str.removesuffix(f"_{name}"))
        yield name, sub


def spearman_per_seed(sub: pd.DataFrame, x: str, y: str) -> pd.Series:
    """Spearman correlation of ``y`` with ``x`` within each seed (NaN with fewer than 3 points)."""
    def rho(g):
        g = g.groupby(x)[y].mean()
        return stats.spearmanr(g.index, g.to_numpy()).statistic if len(g) >= 3 else np.nan

    return sub.groupby("seed")[[x, y]].apply(rho).astype(float)


def slope_per_seed(sub: pd.DataFrame, x: str, y: str) -> pd.Series:
    """Least-squares slope of ``y`` against log10 ``x`` within each seed (NaN with fewer than 3 points)."""
    def slope(g):
        g = g.groupby(x)[y].mean()
        g = g[g.index > 0]
        return float(np.polyfit(np.log10(g.index.to_numpy(dtype=float)), g.to_numpy(dtype=float), 1)[0]) \
            if len(g) >= 3 else np.nan

    return sub.groupby("seed")[[x, y]].apply(slope).astype(float)


def error_se(sub: pd.DataFrame, errors) -> float | None:
    """Standard error, under resampling of the test rows, of a difference of the classification errors
    ``errors`` (mean error rates on the same test rows): sqrt(sum p (1 - p) / n_test), an upper bound
    (the two errors' positive correlation on shared rows only narrows it). None for regression."""
    if is_regression(sub) or "dataset.n_test" not in sub:
        return None
    n = pd.to_numeric(sub["dataset.n_test"], errors="coerce").dropna()
    if n.empty:
        return None
    return float(np.sqrt(sum(p * (1 - p) for p in errors) / float(n.iloc[0])))


def mean_by(sub: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    g = sub.groupby(x)[y].agg(["mean", "std"]).reset_index()
    g["std"] = g["std"].fillna(0.0)
    return g.sort_values(x)


def seeds_text(ok: pd.DataFrame) -> str:
    n = int(ok["seed"].nunique()) if len(ok) and "seed" in ok else 0
    return f"mean $\\pm$ std over {n} seed(s)"


#: The record of whether a run's solver met its stopping rule before its cap (CG, RCD).
CONVERGED = "fitted.model_converged"


def unconverged(sub: pd.DataFrame) -> pd.Series:
    """True for the runs whose solver stopped at its iteration cap (CG) or epoch cap (RCD); no record: False."""
    if CONVERGED not in sub:
        return pd.Series(False, index=sub.index)
    def stuck(v) -> bool:
        if isinstance(v, str):  # the table keeps mixed-type record columns as text
            return v.strip().lower() == "false"
        return v is not None and not pd.isna(v) and not bool(v)

    return sub[CONVERGED].map(stuck).astype(bool)


def converged(sub: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The runs whose solver converged (within its iteration or epoch cap), and how many did not."""
    bad = unconverged(sub)
    return sub[~bad], int(bad.sum())
