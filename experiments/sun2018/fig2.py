"""Sun, Gilbert and Tewari (2018) Fig. 2 (N = 20): accuracy against log10(lambda)."""

from experiments.sun2018.common import accuracy_claims, accuracy_vs_lambda_figure, summary_table

#: The study's number(s) N of random features (conf/experiment/sun2018/fig2.yaml).
NS = (20,)


def figure(table):
    return accuracy_vs_lambda_figure(table, title="Fig. 2 (N = 20)", Ns=NS)


def summary(table):
    return summary_table(table, NS)


def claims(table):
    return accuracy_claims(table, NS)
