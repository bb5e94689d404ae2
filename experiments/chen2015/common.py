"""Shared pieces of the Chen, Yang, King and Lyu (2015) studies: labels, styles, curves, slopes, claims."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfrepro.harness.report.claims import (  # noqa: F401
    combine_data,
    judge,
    judge_log_ratio,
    loglog_slope,
    mean_interval,
    not_run,
)
from rfrepro.harness.report.plots import finished, mean_std

#: Sweep arm -> the paper's method name, in the paper's legend order.
LABELS = {"rks": "RKS", "tefm_g": "TEFM-G", "tefm_s": "TEFM-S", "comp": "Comp", "quasi": "Quasi", "ffood": "Ffood"}
TEFM = ("tefm_g", "tefm_s")
BASELINES = ("rks", "comp", "quasi", "ffood")
#: Colours/markers of this paper's arms (the shared STYLE has none of them).
STYLE = {
    "rks": ("tab:blue", "o"), "tefm_g": ("tab:red", "^"), "tefm_s": ("tab:orange", "v"),
    "comp": ("tab:green", "s"), "quasi": ("tab:purple", "D"), "ffood": ("tab:brown", "x"),
    "exact": ("black", "*"),
}
#: The two map forms of Algorithm 1, step 1: arm-name suffix -> description. Eq. (2) is the default.
FORMS = {"": "Eq. (2) [cos, sin]", "_eq3": "Eq. (3) cos(z'x + b)"}
#: Claim-id suffix of each form (the default form's claims keep the bare id).
FORM_IDS = {"": "", "_eq3": "-eq3"}
#: Dataset config name -> the paper's name, in the paper's order.
DATASETS = {"cpu": "Cpu", "a9a": "A9a", "blogfeedback": "BlogFeedback", "slice": "Slice Localization",
            "ujiindoorloc": "UJIIndoorLoc", "mnist": "Mnist"}
#: The dataset Figs. 2 and 3 are about; any other regression set in them is a substitute.
PAPER_KRR_DATASET = "slice"
#: Dataset config name -> (data kind, note) for a claim's ``data`` field: the paper's six sets (Table 2,
#: "from LIBSVM website or UCI"), at its subsample sizes in Fig. 1; it states no preprocessing, so ours is named.
DATA = {
    "cpu": ("same", "Cpu: Delve cpuact, 21 features as the paper's, z-scored (the paper states no preprocessing)"),
    "a9a": ("same", "A9a: LIBSVM a9a, 123 binary features as distributed"),
    "blogfeedback": ("same", "BlogFeedback: UCI, 280 features, z-scored (the paper states no preprocessing)"),
    "slice": ("same", "Slice Localization: UCI, 384 features, z-scored, random 0.2 test split (the paper states "
                      "neither)"),
    "ujiindoorloc": ("same", "UJIIndoorLoc: UCI, 520 features, z-scored (the paper states no preprocessing)"),
    "mnist": ("same", "Mnist: 784 pixels / 255"),
}
#: The loaded variant of an alias that is not the paper's data (cpu falls back to cpusmall).
VARIANT_DATA = {
    "cpusmall": ("substitute", "Cpu: LIBSVM cpusmall, 12 of the paper's 21 features (cpuact did not load), "
                               "z-scored"),
}
#: Figs. 2-3 on another regression set than Slice: what the substitute is (its sizes are the sweep's).
KRR_SUBSTITUTE = {
    "blogfeedback": "BlogFeedback (UCI, 280 features, 10000 training rows subsampled, official test split, "
                    "z-scored) for Slice Localization (53500 x 384)",
}


def dataset_names(table: pd.DataFrame) -> list[str]:
    """Dataset names in the table, in the paper's order (unknown ones last, sorted)."""
    present = set(table["dataset.name"].dropna()) if "dataset.name" in table else set()
    return [d for d in DATASETS if d in present] + sorted(present - set(DATASETS))


def display_name(name: str, variant: str | None = None) -> str:
    """The paper's name of a dataset, with the loaded variant when it differs (cpu -> cpuact)."""
    label = DATASETS.get(name, name)
    if variant and isinstance(variant, str) and variant != name:
        label += f" [{variant} loaded]"
    return label


def substitute_label(name: str, variant: str | None = None) -> str:
    """Panel / claim label: the paper's dataset as is, any other one marked as a substitute for Slice."""
    label = display_name(name, variant)
    if name == PAPER_KRR_DATASET:
        return label
    return f"{label} (substitute for {DATASETS[PAPER_KRR_DATASET]})"


def not_run_reason(table: pd.DataFrame, name: str) -> str:
    statuses = set(table.loc[table["dataset.name"] == name, "status"]) if "status" in table else set()
    return "data unavailable" if statuses == {"unavailable"} else "no finished runs"


def variant_of(sub: pd.DataFrame) -> str | None:
    if "dataset.variant" not in sub or sub["dataset.variant"].dropna().empty:
        return None
    return str(sub["dataset.variant"].dropna().iloc[0])


def dataset_data(name: str, variant: str | None = None) -> tuple[str, str]:
    """(kind, note) of dataset ``name`` as one of the paper's six (Fig. 1): the loaded ``variant`` decides
    for an alias (cpu: cpuact is the paper's, cpusmall a substitute)."""
    if variant in VARIANT_DATA:
        return VARIANT_DATA[variant]
    return DATA.get(name, ("substitute", f"{name}: not one of the paper's datasets"))


def fig1_data(table: pd.DataFrame, names: list[str]) -> tuple[str, str]:
    """(kind, note) of a Fig. 1 claim judged on ``names``, each with the variant its runs loaded."""
    ok = finished(table)
    parts = []
    for name in names:
        sub = ok[ok["dataset.name"] == name] if len(ok) else ok
        parts.append(dataset_data(name, variant_of(sub) if len(sub) else None))
    return combine_data(parts)


def krr_data(name: str) -> tuple[str, str]:
    """(kind, note) of a Fig. 2 / Fig. 3 claim judged on ``name``: Slice is the paper's, any other a substitute."""
    if name == PAPER_KRR_DATASET:
        return DATA[name]
    return "substitute", KRR_SUBSTITUTE.get(name, f"{name} for Slice Localization (53500 x 384)")


#: Record timings that together are the feature-map time of the training rows: fit and transform
#: timed apart, or together for a map with its own fit_transform (TEFM). Test-row transforms are excluded.
MAP_TIMES = ("timings.fit_s", "timings.fit_transform_s", "timings.transform_train_s")


def map_seconds(t: pd.DataFrame) -> pd.Series:
    """Feature-map time of the training rows per run (the sum of ``MAP_TIMES`` present)."""
    cols = [c for c in MAP_TIMES if c in t]
    return t[cols].fillna(0.0).sum(axis=1) if cols else pd.Series(0.0, index=t.index)


def split_arm(arm: str) -> tuple[str, str]:
    """``"tefm_g_eq3"`` -> ``("tefm_g", "_eq3")``; ``"rks"`` -> ``("rks", "")``."""
    for suffix in (f for f in FORMS if f):
        if isinstance(arm, str) and arm.endswith(suffix):
            return arm[: -len(suffix)], suffix
    return arm, ""


def of_form(table: pd.DataFrame, form: str) -> pd.DataFrame:
    """The rows of one map form, with ``arm`` renamed to the method's bare arm (``rks``, ``tefm_g`` ...)."""
    if table.empty or "arm" not in table:
        return table
    parts = table["arm"].map(split_arm)
    out = table[parts.map(lambda p: p[1] == form)].copy()
    out["arm"] = parts[out.index].map(lambda p: p[0])
    return out


def plot_curves(ax, sub: pd.DataFrame, x: str, y: str) -> None:
    """Mean +- std over seeds of ``y`` against ``x``, one line per arm."""
    g = mean_std(sub, x, y, "arm")
    for arm in [a for a in LABELS if a in set(g["arm"])]:
        a = g[g["arm"] == arm].sort_values(x)
        color, marker = STYLE[arm]
        ax.plot(a[x], a["mean"], marker=marker, ms=4, color=color, label=LABELS[arm])
        ax.fill_between(a[x], a["mean"] - a["std"], a["mean"] + a["std"], alpha=0.15, color=color)


def means(table: pd.DataFrame, y: str, x: str = "fitted.n_features_out") -> pd.DataFrame:
    """Mean of ``y`` over seeds: rows (dataset, l), one column per arm."""
    t = finished(table)
    if t.empty:
        return pd.DataFrame()
    return t.groupby(["dataset.name", x, "arm"])[y].mean().unstack("arm")


def per_seed(table: pd.DataFrame, y: str, x: str = "fitted.n_features_out") -> pd.DataFrame:
    """``y`` per run: rows (seed, dataset, l), one column per arm (finished runs only)."""
    t = finished(table)
    if t.empty:
        return pd.DataFrame()
    return t.groupby(["seed", "dataset.name", x, "arm"])[y].mean().unstack("arm")


#: A never-reached target is also scored at this many times the largest value run, to test the cap's effect.
NEVER_HIGH = 100.0


def cap_robust(judged: dict, judged_high: dict, never: float) -> dict:
    """``judged`` (never-reached targets capped at ``never`` x) unless its pass rests on that cap.

    Capping a target the TEFM map never reaches at ``never`` x the largest l
    (or time) run understates what it would need, which can only help a claim
    that TEFM needs less. So a pass counts only when it survives a far
    larger cap (``judged_high``, at ``NEVER_HIGH`` x); else the verdict is
    inconclusive, and the reason says why.
    """
    if judged["verdict"] != "pass" or judged_high["verdict"] == "pass":
        return judged
    why = (f"passes only if the targets a TEFM map never reached are reached by {never:g} x the largest value "
           f"run; at {NEVER_HIGH:g} x it is {judged_high['verdict']}")
    return {**judged, "verdict": "inconclusive",
            "reason": (judged["reason"] + "; " if judged.get("reason") else "") + why}


def capped(values, cap: float) -> np.ndarray:
    """``values`` with +inf (a target never reached) replaced by ``cap``."""
    v = np.asarray(list(values), dtype=float)
    return np.where(np.isposinf(v), cap, v)


def geo_mean(values) -> float:
    v = np.asarray(list(values), dtype=float)
    if np.isposinf(v).any():   # a target never reached
        return float("inf")
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else float("nan")


def log_reach(x, y, target: float) -> float:
    """Where a curve of ``y`` against ``x`` (points in curve order) first gets down to ``target``: linear in
    log x between the last point above the target and the first at or below it; the first x when that one
    already is; inf when none is."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    hit = np.flatnonzero(ys <= target)
    if not hit.size:
        return float("inf")
    i = int(hit[0])
    if i == 0 or xs[i - 1] <= 0 or xs[i] <= 0:
        return float(xs[i])
    w = (ys[i - 1] - target) / (ys[i - 1] - ys[i])
    return float(np.exp(np.log(xs[i - 1]) + w * (np.log(xs[i]) - np.log(xs[i - 1]))))


def features_to_reach(curve: pd.Series, target: float) -> float:
    """Features a method needs to reach ``target`` (its mean error vs l, interpolated in log l).

    ``curve`` is indexed by l. Returns inf when the curve never gets down to the
    target, and the smallest l when it starts below it.
    """
    c = curve.dropna().sort_index()
    if c.empty:
        return float("nan")
    return log_reach(c.index, c.to_numpy(), target)
