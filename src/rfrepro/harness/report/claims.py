"""Claims: a paper's sentence judged by a pre-stated statistical test over seeds.

Each claim of a study is one dict with the same keys (``CLAIM_KEYS``):

- ``paper_text``: the sentence of the paper it tests, quoted, with where it is
  (page / figure / table);
- ``statistic``: what is measured per seed (or fold), in words;
- ``estimate``, ``ci_low``, ``ci_high``: its mean over seeds and a 95%
  interval (a t interval, or a bootstrap interval over seeds);
- ``n_seeds``: how many seeds (folds) the interval is over;
- ``threshold``, ``side`` and ``threshold_why``: the claim holds when the
  statistic lies above (``side="greater"``) or below (``side="less"``) the
  threshold, or inside a band (``side="within"``, ``threshold=[lo, hi]``),
  chosen from the paper's text before looking at our result, and why;
- ``verdict``: ``pass`` when the whole interval lies on the claim's side,
  ``fail`` when it lies wholly on the other side, ``inconclusive`` otherwise,
  ``not-run`` when the runs it needs are missing (``reason`` says why);
- ``data``: what it was judged on (:func:`with_data`): the paper's own data and
  preprocessing (``same``), a named ``substitute`` (the note says what differs),
  or ``generated`` data; a not-run claim says what it would be judged on.

When two arms share seeds, the statistic is the per-seed difference (or
ratio) of the paired runs: pass the paired values to :func:`paired_values`.

A claim about every setting at once ("better on every dataset", "at every
degree") is judged by :func:`judge_every`, one interval per setting, not by
an interval of the per-seed worst setting: the mean of a per-seed maximum is
biased above the largest mean, so that statistic fails true claims whenever
seed noise is comparable to the effect.

Example
-------
>>> c = judge("C0", paper_text='"A beats B" (p. 3, Fig. 1)',
...                statistic="accuracy(A) - accuracy(B), paired by seed",
...                values=[0.02, 0.03, 0.025, 0.031, 0.018], threshold=0.0,
...                side="greater", threshold_why="'beats': any positive gain")
>>> c["verdict"], c["n_seeds"]
('pass', 5)
>>> check_claims([with_data(c, "same", "the paper's dataset, as distributed")])[0]["data"]["kind"]
'same'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

PASS, FAIL, INCONCLUSIVE, NOT_RUN = "pass", "fail", "inconclusive", "not-run"
#: a claim about the paper's printed numbers measured on other data than the paper's: never a fail
NOT_COMPARABLE = "not-comparable"
VERDICTS = (PASS, FAIL, INCONCLUSIVE, NOT_COMPARABLE, NOT_RUN)
#: what a claim was judged on: the paper's own data and preprocessing, a named substitute, or generated data
DATA_KINDS = ("same", "substitute", "generated")
#: what a fail says: our evidence against the paper, or a limit of our run (with what would settle it)
FAIL_KINDS = ("disagreement", "limitation")
SIDES = ("greater", "less", "within")
CLAIM_KEYS = (
    "id", "paper_text", "statistic", "estimate", "ci_low", "ci_high", "n_seeds", "interval",
    "threshold", "side", "threshold_why", "verdict", "reason",
)
LEVEL = 0.95


def mean_interval(values: Iterable[float], *, method: str = "t", level: float = LEVEL,
                  seed: int = 0) -> tuple[float, float, float, int]:
    """Mean of ``values`` and a ``level`` interval for it: (estimate, low, high, n).

    ``method="t"`` is the Student t interval (exact for normal per-seed
    values, the default for paired differences); ``"bootstrap"`` is a BCa
    bootstrap over seeds (scipy.stats.bootstrap, 9999 resamples, fixed
    ``seed``) for skewed statistics such as ratios. Fewer than two finite
    values give an infinite interval (so the verdict is inconclusive).
    """
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, -math.inf, math.inf, 0
    est = float(x.mean())
    if n < 2:
        return est, -math.inf, math.inf, n
    if np.ptp(x) == 0:
        return est, est, est, n
    if method == "t":
        lo, hi = stats.t.interval(level, n - 1, loc=est, scale=stats.sem(x))
    elif method == "bootstrap":
        res = stats.bootstrap((x,), np.mean, confidence_level=level, n_resamples=9999,
                              method="BCa" if n >= 5 else "percentile",
                              random_state=np.random.default_rng(seed))
        lo, hi = res.confidence_interval
        if not (np.isfinite(lo) and np.isfinite(hi)):  # degenerate BCa: fall back to percentile
            lo, hi = np.percentile(x, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    else:
        raise ValueError(f"method must be 't' or 'bootstrap', got {method!r}")
    return est, float(lo), float(hi), n


def paired_values(table: pd.DataFrame, *, arm_col: str, a, b, value: str, on: Sequence[str] = ("seed",),
                  op: str = "diff") -> pd.Series:
    """Per-seed ``value(a) - value(b)`` (``op="diff"``) or ``value(a) / value(b)`` (``"ratio"``).

    Rows of ``table`` whose ``arm_col`` is ``a`` or ``b`` are matched on the
    ``on`` columns (the seed, and whatever else must agree); unmatched rows
    are dropped, so the result holds only the seeds both arms finished.
    """
    cols = list(on)
    left = table[table[arm_col] == a].groupby(cols)[value].mean()
    right = table[table[arm_col] == b].groupby(cols)[value].mean()
    left, right = left.align(right, join="inner")
    if op == "diff":
        return left - right
    if op == "ratio":
        return left / right
    raise ValueError(f"op must be 'diff' or 'ratio', got {op!r}")


def verdict(low: float, high: float, threshold, side: str) -> str:
    """``pass`` when [low, high] lies wholly on the claim's side, ``fail`` wholly on the other.

    ``side="within"`` takes ``threshold=(lo, hi)``: pass when the interval lies
    inside it, fail when it lies wholly outside (an equivalence test).
    """
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    if math.isnan(low) or math.isnan(high):
        return INCONCLUSIVE
    if side == "within":
        lo_t, hi_t = (float(t) for t in threshold)
        if lo_t < low and high < hi_t:
            return PASS
        return FAIL if high < lo_t or low > hi_t else INCONCLUSIVE
    threshold = float(threshold)
    above, below = low > threshold, high < threshold
    if side == "greater":
        return PASS if above else FAIL if below else INCONCLUSIVE
    return PASS if below else FAIL if above else INCONCLUSIVE


def judge(cid: str, *, paper_text: str, statistic: str, threshold, side: str,
               threshold_why: str, values: Iterable[float] | None = None,
               interval: str = "t", estimate: float | None = None,
               ci: tuple[float, float] | None = None, n_seeds: int | None = None,
               reason: str = "", measured=None, min_seeds: int = 3) -> dict:
    """Judge one claim from per-seed ``values`` (or a precomputed ``estimate``/``ci``).

    ``interval`` names how the interval was made (``"t"``, ``"bootstrap"``,
    or a free text when ``ci`` is given, e.g. "slope t interval"). Fewer
    than ``min_seeds`` seeds (3 by default: a t interval on two is nearly
    unbounded, and two equal values would give a zero-width one) give
    ``inconclusive``. ``measured`` may carry
    extra detail (per-setting numbers) shown beside the verdict.
    """
    if values is not None:
        estimate, lo, hi, n = mean_interval(values, method=interval)
    else:
        if estimate is None or ci is None:
            raise ValueError("give either values or estimate and ci")
        lo, hi = (float(v) for v in ci)
        n = int(n_seeds or 0)
    if n == 0:
        return not_run(cid, paper_text=paper_text, statistic=statistic, threshold=threshold,
                       side=side, threshold_why=threshold_why,
                       reason=reason or "no finished runs for this claim")
    v = verdict(lo, hi, threshold, side) if n >= min_seeds else INCONCLUSIVE
    if n < min_seeds:
        reason = (reason + "; " if reason else "") + f"only {n} seed(s)"
    out = {
        "id": cid, "paper_text": paper_text, "statistic": statistic,
        "estimate": float(estimate), "ci_low": lo, "ci_high": hi, "n_seeds": n,
        "interval": f"{int(LEVEL * 100)}% {interval}" if values is not None else interval,
        "threshold": [float(t) for t in threshold] if side == "within" else float(threshold),
        "side": side, "threshold_why": threshold_why,
        "verdict": v, "reason": reason,
    }
    if measured is not None:
        out["measured"] = measured
    return out


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (NaN with fewer than 2 distinct x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[keep], y[keep]
    if np.unique(x).size < 2:
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def judge_log_ratio(cid: str, per_seed_log: pd.Series, *, paper_text: str, statistic: str, threshold: float,
                    threshold_why: str, reason: str = "", measured=None, side: str = "less") -> dict:
    """Judge a ratio claim on the log scale: t interval of the mean log ratio over seeds, exponentiated.

    Ratios of errors or times are skewed; their logs are closer to normal and
    a ratio and its inverse get symmetric intervals. ``estimate`` is the
    geometric mean of the per-seed ratios.
    """
    est, lo, hi, n = mean_interval(per_seed_log.to_numpy(dtype=float))
    if n == 0:
        return not_run(cid, paper_text=paper_text, statistic=statistic, threshold=threshold, side=side,
                       threshold_why=threshold_why, reason=reason or "no finished runs for this claim")
    return judge(cid, paper_text=paper_text, statistic=statistic, threshold=threshold, side=side,
                 threshold_why=threshold_why, estimate=math.exp(est), ci=(math.exp(lo), math.exp(hi)),
                 n_seeds=n, interval="95% t interval of the mean log ratio over seeds, exponentiated",
                 reason=reason, measured=measured)


def judge_every(cid: str, cells: Mapping[str, Iterable[float]], *, paper_text: str, statistic: str,
                threshold, side: str, threshold_why: str, log: bool = False, reason: str = "",
                measured: dict | None = None, min_seeds: int = 3) -> dict:
    """Judge "the claim holds in every cell" from per-seed values of each cell (dataset, E, degree...).

    Intersection-union test (Berger 1982): ``pass`` when every cell's 95% t
    interval lies on the claim's side (no multiplicity correction is needed:
    the claim is wrongly passed only if some cell is wrongly passed).
    ``fail`` when at least one cell's interval at level 1 - 0.05 / k (Bonferroni
    over the k cells) lies wholly on the other side, so a claim true in every
    cell is failed with probability at most 5% however many cells there are.
    ``inconclusive`` otherwise, and when a cell has fewer than ``min_seeds`` seeds.

    ``log=True``: the values are log ratios, judged on the log scale and
    reported exponentiated (``threshold`` is then a ratio, as in
    :func:`judge_log_ratio`). ``estimate``/``ci_low``/``ci_high`` are those of
    the binding cell: the failing one, or else the one closest to failing;
    ``measured["cells"]`` has every cell's mean and interval.
    """
    if side not in ("greater", "less"):
        raise ValueError(f"judge_every: side must be 'greater' or 'less', got {side!r}")
    cut = math.log(float(threshold)) if log else float(threshold)
    cells = {str(k): np.asarray(list(v), dtype=float) for k, v in cells.items()}
    cells = {k: v[np.isfinite(v)] for k, v in cells.items() if np.isfinite(v).any()}
    if not cells:
        return not_run(cid, paper_text=paper_text, statistic=statistic, threshold=threshold, side=side,
                       threshold_why=threshold_why, reason=reason or "no finished runs for this claim")
    k = len(cells)
    wide = 1 - (1 - LEVEL) / k
    show = math.exp if log else float
    table, worst_pass, worst_fail = {}, None, None
    for name, x in cells.items():
        est, lo, hi, n = mean_interval(x)
        _, wlo, whi, _ = mean_interval(x, level=wide)
        table[name] = {"mean": show(est), "ci_low": show(lo), "ci_high": show(hi), "n": n}
        # how far the cell's interval is from passing / failing (positive: it does not)
        to_pass = (hi - cut) if side == "less" else (cut - lo)
        to_fail = (cut - wlo) if side == "less" else (whi - cut)
        if worst_pass is None or to_pass > worst_pass[0]:
            worst_pass = (to_pass, name, est, lo, hi, n)
        if worst_fail is None or to_fail < worst_fail[0]:
            worst_fail = (to_fail, name, est, wlo, whi, n)
    n_min = min(c["n"] for c in table.values())
    if worst_fail[0] < 0 and worst_fail[5] >= min_seeds:
        v, (_, name, est, lo, hi, _) = FAIL, worst_fail
        how = f"{int(LEVEL * 100)}% t interval with Bonferroni over {k} cells ({wide:.4f})"
    else:
        _, name, est, lo, hi, _ = worst_pass
        v = PASS if worst_pass[0] < 0 else INCONCLUSIVE
        how = f"{int(LEVEL * 100)}% t interval per cell, every cell must pass (intersection-union)"
        if n_min < min_seeds:
            v = INCONCLUSIVE
            reason = (reason + "; " if reason else "") + f"a cell has only {n_min} seed(s)"
    if v != PASS:  # say which cell decided, in the column a reader sees
        reason = (reason + "; " if reason else "") + f"decided by the cell {name} ({k} cells)"
    out = {
        "id": cid, "paper_text": paper_text, "statistic": statistic,
        "estimate": show(est), "ci_low": show(lo), "ci_high": show(hi), "n_seeds": n_min,
        "interval": how + ("; log ratios, exponentiated" if log else "") + f"; binding cell: {name}",
        "threshold": float(threshold), "side": side, "threshold_why": threshold_why,
        "verdict": v, "reason": reason,
        "measured": {**(measured or {}), "cells": table},
    }
    return out


def not_run(cid: str, *, paper_text: str, statistic: str, reason: str, threshold: float | None = None,
            side: str | None = None, threshold_why: str = "") -> dict:
    """A claim that could not be judged (data unavailable, runs missing): say why."""
    return {
        "id": cid, "paper_text": paper_text, "statistic": statistic,
        "estimate": None, "ci_low": None, "ci_high": None, "n_seeds": 0, "interval": None,
        "threshold": threshold, "side": side, "threshold_why": threshold_why,
        "verdict": NOT_RUN, "reason": reason,
    }


def with_data(claim: dict, kind: str, note: str = "") -> dict:
    """Mark ``claim`` with the data it was judged on (``kind`` one of :data:`DATA_KINDS`)."""
    if kind not in DATA_KINDS:
        raise ValueError(f"data kind {kind!r}; valid: {DATA_KINDS}")
    claim["data"] = {"kind": kind, "note": note}
    return claim


def combine_data(parts: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """The ``(kind, note)`` of a claim judged on several datasets, from each one's ``(kind, note)``.

    The kind they share, else the weakest: ``substitute`` (a claim is on the
    paper's data only when every dataset it spans is); the note joins theirs.

    >>> combine_data([("same", "MNIST"), ("substitute", "usps for an unnamed set")])
    ('substitute', 'MNIST; usps for an unnamed set')
    >>> combine_data([("generated", "disk"), ("generated", "annulus")])[0]
    'generated'
    """
    parts = list(parts)
    if not parts:
        raise ValueError("combine_data: no datasets")
    kinds = {k for k, _ in parts}
    bad = sorted(kinds - set(DATA_KINDS))
    if bad:
        raise ValueError(f"data kind {bad[0]!r}; valid: {DATA_KINDS}")
    kind = kinds.pop() if len(kinds) == 1 else "substitute"
    return kind, "; ".join(dict.fromkeys(n for _, n in parts if n))


def withhold(claim: dict, why: str, *, after: bool = False) -> dict:
    """``claim`` with its pass or fail withheld as ``inconclusive`` because of ``why``.

    The verdict the statistic gave stays as ``measured_verdict``; ``why`` joins
    the reason, before it (the cause a reader needs first) or ``after`` it (a
    note on what was judged). A verdict that is neither pass nor fail is kept;
    ``why`` is still added to its reason.

    >>> c = withhold({"verdict": "fail", "reason": "ratio 0.8"}, "host busy")
    >>> c["verdict"], c["measured_verdict"], c["reason"]
    ('inconclusive', 'fail', 'host busy; ratio 0.8')
    >>> withhold({"verdict": "not-run", "reason": ""}, "capped", after=True)["verdict"]
    'not-run'
    """
    if claim["verdict"] in (PASS, FAIL):
        claim["measured_verdict"], claim["verdict"] = claim["verdict"], INCONCLUSIVE
    return add_reason(claim, why, after=after)


def add_reason(claim: dict, text: str, *, after: bool = True) -> dict:
    """``claim`` with ``text`` joined to its reason by "; " (``after`` it, or before it).

    >>> add_reason({"reason": "r"}, "2 of 10 seeds left out")["reason"]
    'r; 2 of 10 seeds left out'
    >>> add_reason({"reason": ""}, "t", after=False)["reason"]
    't'
    """
    old = claim.get("reason")
    claim["reason"] = (f"{old}; {text}" if after else f"{text}; {old}") if old else text
    return claim


def not_comparable(claim: dict, reason: str) -> dict:
    """A claim about the paper's printed numbers judged on substitute data: ``not-comparable``, never fail.

    The measured interval stays in the claim (a reader can still compare); only
    the verdict says that the comparison would not be a test of the paper.

    >>> c = with_data({"id": "C1", "verdict": "fail", "reason": "D* 500 vs 105"}, "substitute", "d = 104 vs 44")
    >>> not_comparable(c, "the paper's adult has d = 44")["verdict"]
    'not-comparable'
    """
    claim["measured_verdict"] = claim.get("verdict")
    claim["verdict"] = NOT_COMPARABLE
    claim["reason"] = f"{reason}; measured: {claim.get('reason') or claim['measured_verdict']}"
    return claim


def check_claims(claims: list[dict], where: str = "claims") -> list[dict]:
    """Raise ValueError when a claim lacks a key of ``CLAIM_KEYS``, has an unknown verdict, or does not
    say what data it was judged on (``data``, set by :func:`with_data`)."""
    ids = [c.get("id") for c in claims]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"{where}: duplicate claim ids {dup}")
    for c in claims:
        missing = [k for k in CLAIM_KEYS if k not in c]
        if missing:
            raise ValueError(f"{where}: claim {c.get('id')!r} lacks {missing}")
        if c["verdict"] not in VERDICTS:
            raise ValueError(f"{where}: claim {c['id']!r} has verdict {c['verdict']!r}; valid: {VERDICTS}")
        if c.get("data") is None:
            raise ValueError(f"{where}: claim {c['id']!r} does not say what data it was judged on: mark it with "
                             f"with_data(claim, kind, note), kind one of {DATA_KINDS}")
        data = c["data"]
        if not isinstance(data, dict) or data.get("kind") not in DATA_KINDS:
            raise ValueError(f"{where}: claim {c['id']!r} has data {data!r}; kind must be one of {DATA_KINDS}")
        if c.get("fail_kind") is not None and c["fail_kind"] not in FAIL_KINDS:
            raise ValueError(f"{where}: claim {c['id']!r} has fail_kind {c['fail_kind']!r}; valid: {FAIL_KINDS}")
    return claims

