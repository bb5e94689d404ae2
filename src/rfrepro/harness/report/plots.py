"""Plotting helpers shared by every study's figure code (figures come from the table alone)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from rfrepro.runner.store import FINISHED  # noqa: E402

#: One colour/marker per method name, stable across figures.
STYLE = {
    "ksvm": ("black", "s"),
    "rfsvm_unif": ("tab:blue", "o"),
    "rfsvm_opt": ("tab:red", "^"),
    "rks_cos": ("tab:blue", "o"),
    "rks_cossin": ("tab:cyan", "v"),
    "nystrom": ("tab:green", "s"),
}


def finished(table: pd.DataFrame) -> pd.DataFrame:
    """Only the runs that finished (failed / unavailable runs never enter a curve)."""
    if table.empty or "status" not in table:
        return table
    return table[table["status"] == FINISHED]


def mean_std(table: pd.DataFrame, x: str, y: str, by: list[str] | str) -> pd.DataFrame:
    """Mean, std and count of ``y`` per (``by``..., ``x``) over seeds."""
    by = [by] if isinstance(by, str) else list(by)
    g = table.groupby(by + [x])[y].agg(["mean", "std", "count"]).reset_index()
    g["std"] = g["std"].fillna(0.0)
    return g


def band(ax, x, mean, std, label: str, key: str | None = None, **kw) -> None:
    """A mean curve with a +-1 std band."""
    color, marker = STYLE.get(key or label, (None, "o"))
    line = ax.plot(x, mean, marker=marker, ms=4, label=label, color=color, **kw)[0]
    ax.fill_between(x, np.asarray(mean) - std, np.asarray(mean) + std, alpha=0.2, color=line.get_color())


def not_run_panel(ax, title: str, reason: str) -> None:
    """An explicit panel for a dataset whose runs could not be made."""
    ax.set_title(title)
    ax.text(0.5, 0.5, f"not run:\n{reason}", ha="center", va="center", transform=ax.transAxes,
            fontsize=11, color="tab:red")
    ax.set_xticks([])
    ax.set_yticks([])


def grid_axes(n: int, ncols: int = 3, size: tuple[float, float] = (4.2, 3.3)):
    """A figure with ``n`` panels laid out in rows of ``ncols``; unused panels hidden."""
    ncols = min(ncols, max(n, 1))
    nrows = int(np.ceil(max(n, 1) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    flat = axes.ravel()
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def caption(fig, text: str) -> None:
    fig.text(0.5, -0.02, text, ha="center", va="top", fontsize=8, wrap=True)
