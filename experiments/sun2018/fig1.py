"""Sun, Gilbert and Tewari (2018) Fig. 1 (N = 1): accuracy against log10(lambda)."""

from experiments.sun2018.common import accuracy_claims, accuracy_vs_lambda_figure


def figure(table):
    return accuracy_vs_lambda_figure(table, title="Fig. 1 (N = 1)")


def claims(table):
    return accuracy_claims(table)
