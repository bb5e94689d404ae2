"""Sun, Gilbert and Tewari (2018) Appendix F (N = 3, 5, 10): accuracy against log10(lambda)."""

from experiments.sun2018.common import accuracy_claims, accuracy_vs_lambda_figure, summary_table

#: The study's number(s) N of random features (conf/experiment/sun2018/appendix.yaml).
NS = (3, 5, 10)


def figure(table):
    return accuracy_vs_lambda_figure(table, title="Appendix F (N = 3, 5, 10)", Ns=NS)


def summary(table):
    return summary_table(table, NS)


def claims(table):
    return accuracy_claims(table, NS)
