"""Leaderboard, Gaussian kernel, linear SVM: every Gaussian map at equal output columns D."""

from __future__ import annotations

import pandas as pd

from experiments.leaderboard.common import claims_markdown, cross_claims, rank_markdown, ranked
from experiments.leaderboard.common import figure as _figure

RANKED = ranked("test classification error (primal linear SVM)")


def figure(table: pd.DataFrame):
    return _figure(table, "Gaussian-kernel maps at equal output columns D, linear SVM")


def summary(table: pd.DataFrame) -> str:
    return rank_markdown(table, RANKED) + "\n\n" + claims_markdown(claims(table))


def claims(table: pd.DataFrame) -> list[dict]:
    # C1.4 is about regression (Chen's KRR on Slice): judged in leaderboard/gaussian-regression
    return cross_claims(table, ("C1.1", "C2.2", "C3.2", "C3.3", "C4.2"))
