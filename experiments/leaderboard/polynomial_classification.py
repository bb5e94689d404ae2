"""Leaderboard, polynomial kernel, linear SVM: RM, TensorSketch and their CRAFTMaps at equal output columns D."""

from __future__ import annotations

import pandas as pd

from experiments.leaderboard.common import claims_markdown, cross_claims, rank_markdown, ranked
from experiments.leaderboard.common import figure as _figure

RANKED = ranked("test classification error (primal linear SVM)", "polynomial")


def figure(table: pd.DataFrame):
    return _figure(table, "Polynomial-kernel maps ((<x, y> + 1)^7) at equal output columns D, linear SVM")


def summary(table: pd.DataFrame) -> str:
    return rank_markdown(table, RANKED) + "\n\n" + claims_markdown(claims(table))


def claims(table: pd.DataFrame) -> list[dict]:
    return cross_claims(table, ("C3.2", "C3.3"), kernel="polynomial")
