"""Leaderboard, polynomial kernel, ridge regression: RM, TensorSketch and their CRAFTMaps at equal output columns D."""

from __future__ import annotations

import pandas as pd

from experiments.leaderboard.common import claims_markdown, cross_claims, rank_markdown, ranked
from experiments.leaderboard.common import figure as _figure

RANKED = ranked("test relative RMSE (ridge)", "polynomial")


def figure(table: pd.DataFrame):
    return _figure(table, "Polynomial-kernel maps ((<x, y> + 1)^7) at equal output columns D, ridge regression")


def summary(table: pd.DataFrame) -> str:
    return rank_markdown(table, RANKED) + "\n\n" + claims_markdown(claims(table))


def claims(table: pd.DataFrame) -> list[dict]:
    # C3.3 is about classification error: judged in leaderboard/polynomial-classification
    return cross_claims(table, ("C3.2",), kernel="polynomial")
