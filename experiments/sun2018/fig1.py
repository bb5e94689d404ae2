"""Sun, Gilbert and Tewari (2018) Fig. 1 (N = 1): accuracy against log10(lambda).

Shared with fig2 and the appendix (other N) through ``experiments/sun2018/common.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sun2018_common", Path(__file__).with_name("common.py"))
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)


def figure(table):
    return common.accuracy_vs_lambda_figure(table, title="Fig. 1 (N = 1)")


def claims(table):
    return common.accuracy_claims(table)
