"""Leaderboard, Gaussian kernel, ridge regression: every Gaussian map at equal output columns D."""

from __future__ import annotations

import pandas as pd

from experiments.leaderboard.common import claims_markdown, cross_claims, rank_markdown, ranked
from experiments.leaderboard.common import figure as _figure

RANKED = ranked("test relative RMSE (ridge)")


def figure(table: pd.DataFrame):
    return _figure(table, "Gaussian-kernel maps at equal output columns D, ridge regression")


def summary(table: pd.DataFrame) -> str:
    return rank_markdown(table, RANKED) + "\n\n" + claims_markdown(claims(table))


def claims(table: pd.DataFrame) -> list[dict]:
    # C3.3 is about classification error: judged in leaderboard/gaussian-classification
    return cross_claims(table, ("C1.1", "C1.4", "C2.2", "C3.2", "C4.2"))
