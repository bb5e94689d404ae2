"""Leaderboard, Laplacian kernel, ridge regression: random binning and every Laplacian map at equal output columns D."""

from __future__ import annotations

import pandas as pd

from experiments.leaderboard.common import claims_markdown, cross_claims, rank_markdown, ranked
from experiments.leaderboard.common import figure as _figure

RANKED = ranked("test relative RMSE (ridge)", "Laplacian")


def figure(table: pd.DataFrame):
    return _figure(table, "Laplacian-kernel maps at equal output columns D, ridge regression")


def summary(table: pd.DataFrame) -> str:
    return rank_markdown(table, RANKED) + "\n\n" + claims_markdown(claims(table))


def claims(table: pd.DataFrame) -> list[dict]:
    return cross_claims(table, ("C5.1",), kernel="laplacian")
