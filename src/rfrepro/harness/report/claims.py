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
  or ``generated`` data; a not-run claim says what it would be judged on;
- on a fail, ``fail_kind`` and ``evidence`` (one line): a ``limitation`` when
  the study states a mechanism by which our data or hardware could change the
  outcome (:func:`limitation`: ``mechanism`` and ``settle``, what would settle
  it), else a ``disagreement`` (:func:`by_cause`, the rule applied to every
  study's claims when they are written); the scorecard only reads them;
- optionally ``n_planned`` (seeds planned, when some were left out),
  ``deterministic`` (every seed gave the same value: the interval comes from
  the test rows, :func:`judge` ``test_rows_se``) and ``readings`` (a verdict
  that depends on our reading of a setting the paper leaves open:
  :func:`reading_robust`).

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
#: what a fail says: our evidence against the paper, a limit of our run (with its mechanism and what would
#: settle it), or a finding beyond the paper (a claim re-tested against a map the paper never compared with)
FAIL_KINDS = ("disagreement", "limitation", "extension")
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


def same_values(values: Iterable[float], rel: float = 1e-9) -> bool:
    """True when the finite ``values`` are equal up to float rounding (their spread at most ``rel`` of
    their largest magnitude): seeds that vary nothing the statistic depends on.

    >>> same_values([-0.23876358182002927, -0.2387635818200292]), same_values([0.1, 0.2])
    (True, False)
    """
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    return x.size >= 2 and float(np.ptp(x)) <= rel * max(float(np.abs(x).max()), 1e-300)


def _same_values_reason(reason: str, n: int) -> str:
    """``reason`` with the note that the statistic did not vary over the ``n`` seeds (:func:`same_values`)."""
    return (reason + "; " if reason else "") + (
        f"every one of the {n} seeds gave the same value: the seeds vary nothing the statistic depends on")


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
               reason: str = "", measured=None, min_seeds: int = 3,
               test_rows_se: float | None = None, planned: int | None = None) -> dict:
    """Judge one claim from per-seed ``values`` (or a precomputed ``estimate``/``ci``); a fail is a
    :func:`disagreement` until the study states a :func:`limitation`.

    ``interval`` names how the interval was made (``"t"``, ``"bootstrap"``,
    or a free text when ``ci`` is given, e.g. "slope t interval"). Fewer
    than ``min_seeds`` seeds (3 by default: a t interval on two is nearly
    unbounded, and two equal values would give a zero-width one) give
    ``inconclusive``. ``measured`` may carry
    extra detail (per-setting numbers) shown beside the verdict.

    Seeds that vary nothing the statistic depends on give identical values:
    an interval over them is not a test. The claim is then ``deterministic``
    (n = 1 in effect): with ``test_rows_se`` (the statistic's standard error
    under resampling of the test rows, e.g. a binomial one for an error rate)
    its interval is the normal one from it; without, it is inconclusive.
    ``planned``: the seeds planned, when fewer were judged (shown "n of planned").

    >>> c = judge("C", paper_text="p", statistic="s", values=[0.05] * 5, threshold=0.0, side="greater",
    ...           threshold_why="w", test_rows_se=0.01)
    >>> c["verdict"], c["deterministic"], round(c["ci_low"], 4)
    ('pass', True, 0.0304)
    >>> judge("C", paper_text="p", statistic="s", values=[0.05] * 5, threshold=0.0, side="greater",
    ...       threshold_why="w")["verdict"]
    'inconclusive'
    """
    deterministic = False
    if values is not None:
        values = [v for v in values if v is not None]
        estimate, lo, hi, n = mean_interval(values, method=interval)
        if n >= 2 and same_values(values):
            deterministic = True
            if test_rows_se is not None and np.isfinite(test_rows_se) and test_rows_se > 0:
                z = stats.norm.ppf(0.5 + LEVEL / 2)
                lo, hi = float(estimate - z * test_rows_se), float(estimate + z * test_rows_se)
                interval = (f"normal interval from resampling the test rows (standard error "
                            f"{test_rows_se:.3g}): every seed gave the same value, n = 1 in effect")
            else:
                lo, hi = -math.inf, math.inf
                interval = "none: every seed gave the same value (n = 1 in effect) and no test-row error is known"
            reason = _same_values_reason(reason, n)
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
    if deterministic:
        out["deterministic"] = True
    if planned is not None and planned != n:
        out["n_planned"] = int(planned)
    if measured is not None:
        out["measured"] = measured
    return disagreement(out)


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
    logs = per_seed_log.to_numpy(dtype=float)
    est, lo, hi, n = mean_interval(logs)
    if n == 0:
        return not_run(cid, paper_text=paper_text, statistic=statistic, threshold=threshold, side=side,
                       threshold_why=threshold_why, reason=reason or "no finished runs for this claim")
    how = "95% t interval of the mean log ratio over seeds, exponentiated"
    same = n >= 2 and same_values(logs)
    if same:  # as judge: seeds that gave one value are n = 1 in effect, no interval
        lo, hi, how = -math.inf, math.inf, "none: every seed gave the same value (n = 1 in effect)"
        reason = _same_values_reason(reason, n)
    out = judge(cid, paper_text=paper_text, statistic=statistic, threshold=threshold, side=side,
                threshold_why=threshold_why, estimate=math.exp(est), ci=(math.exp(lo), math.exp(hi)),
                n_seeds=n, interval=how, reason=reason, measured=measured)
    if same:
        out["deterministic"] = True
    return out


def judge_every(cid: str, cells: Mapping[str, Iterable[float]], *, paper_text: str, statistic: str,
                threshold, side: str, threshold_why: str, log: bool = False, reason: str = "",
                measured: dict | None = None, min_seeds: int = 3, at_bound: bool = False) -> dict:
    """Judge "the claim holds in every cell" from per-seed values of each cell (dataset, E, degree...).

    Intersection-union test (Berger 1982): ``pass`` when every cell's 95% t
    interval lies on the claim's side (no multiplicity correction is needed:
    the claim is wrongly passed only if some cell is wrongly passed).
    ``fail`` when at least one cell's interval at level 1 - 0.05 / k (Bonferroni
    over the k cells) lies wholly on the other side, so a claim true in every
    cell is failed with probability at most 5% however many cells there are.
    ``inconclusive`` otherwise, and when a cell has fewer than ``min_seeds`` seeds.
    A cell whose seeds all gave the same value (:func:`same_values`) has an
    unbounded interval: it can neither pass nor fail the claim. ``at_bound``:
    the statistic saturates at a stated bound (a target never reached, scored
    at a cap), so equal values there are every seed at that bound, a result
    and not a degenerate test: such a cell keeps its value and is marked.

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
    fixed = []
    for name, x in cells.items():
        est, lo, hi, n = mean_interval(x)
        _, wlo, whi, _ = mean_interval(x, level=wide)
        same = same_values(x)
        if same and not at_bound:  # every seed the same: the cell cannot decide (n = 1 in effect)
            lo = wlo = -math.inf
            hi = whi = math.inf
            fixed.append(name)
        table[name] = {"mean": show(est), "ci_low": show(lo), "ci_high": show(hi), "n": n}
        if same:
            table[name]["deterministic"] = True
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
    if fixed:
        reason = (reason + "; " if reason else "") + (
            f"{len(fixed)} cell(s) gave the same value in every seed and cannot decide: " + ", ".join(fixed))
    out = {
        "id": cid, "paper_text": paper_text, "statistic": statistic,
        "estimate": show(est), "ci_low": show(lo), "ci_high": show(hi), "n_seeds": n_min,
        "interval": how + ("; log ratios, exponentiated" if log else "") + f"; binding cell: {name}",
        "threshold": float(threshold), "side": side, "threshold_why": threshold_why,
        "verdict": v, "reason": reason,
        "measured": {**(measured or {}), "cells": table},
    }
    return disagreement(out)


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


def _num3(x) -> str:
    return "-" if x is None else f"{float(x):.3g}"


def evidence_line(claim: dict) -> str:
    """One line of what decided a claim: its estimate and interval against the threshold.

    >>> evidence_line({"estimate": 0.9, "ci_low": 0.85, "ci_high": 0.95, "n_seeds": 10, "threshold": 0.0,
    ...                "side": "less", "interval": "95% t"})
    '0.9 [0.85, 0.95] over 10 seeds (95% t), where the claim needs < 0'
    """
    side = claim.get("side")
    thr = claim.get("threshold")
    need = (f"inside [{_num3(thr[0])}, {_num3(thr[1])}]" if side == "within" and thr is not None
            else f"{'>' if side == 'greater' else '<'} {_num3(thr)}")
    n = claim.get("n_seeds")
    how = str(claim.get("interval") or "").split(";")[0]
    return (f"{_num3(claim.get('estimate'))} [{_num3(claim.get('ci_low'))}, {_num3(claim.get('ci_high'))}]"
            f" over {n} seed{'s' if n != 1 else ''}" + (f" ({how})" if how else "") + f", where the claim needs {need}")


def limitation(claim: dict, mechanism: str, settle: str, evidence: str | None = None) -> dict:
    """Call ``claim``'s fail a limitation of our run: ``mechanism``, how our data or hardware could change
    the outcome, and ``settle``, what would settle it. A claim that does not fail is returned as it is.

    >>> limitation({"verdict": "fail"}, "2 threads against 16", "a 16-core host")["fail_kind"]
    'limitation'
    >>> "fail_kind" in limitation({"verdict": "pass"}, "m", "s")
    False
    """
    if claim.get("verdict") == FAIL:
        claim.update(fail_kind="limitation", mechanism=mechanism, settle=settle)
        if evidence:
            claim["evidence"] = evidence
    return claim


def disagreement(claim: dict, evidence: str | None = None) -> dict:
    """Call ``claim``'s fail a disagreement with the paper, with one line of ``evidence`` (default:
    :func:`evidence_line`). A claim that does not fail is returned as it is."""
    if claim.get("verdict") == FAIL:
        claim["fail_kind"] = "disagreement"
        claim["evidence"] = evidence or claim.get("evidence") or evidence_line(claim)
    return claim


def by_cause(claims: list[dict]) -> list[dict]:
    """The rule for a fail's kind, applied to a study's claims when they are written.

    A fail the study called a :func:`limitation` (a stated mechanism and what
    would settle it) stays one; a fail of a claim marked ``extension`` (re-tested
    against a map the paper never compared with) is an ``extension`` finding,
    evidence of nothing against the paper; every other fail is a ``disagreement``: our
    evidence is against the claim, whatever data it was judged on, unless a
    mechanism says how the data could be the cause. Every fail gets an
    ``evidence`` line (the study's, else :func:`evidence_line`); a claim that
    does not fail carries no kind.

    >>> [c.get("fail_kind") for c in by_cause([{"verdict": "fail", "estimate": 1.0, "ci_low": 0.9,
    ...     "ci_high": 1.1, "n_seeds": 5, "threshold": 0.0, "side": "less"}, {"verdict": "pass",
    ...     "fail_kind": "limitation"}])]
    ['disagreement', None]
    """
    for c in claims:
        if c.get("verdict") != FAIL:
            c.pop("fail_kind", None)
            continue
        if c.get("fail_kind") != "limitation":
            c["fail_kind"] = "extension" if c.get("extension") else "disagreement"
        if not c.get("evidence"):
            c["evidence"] = evidence_line(c)
    return claims


def reading_robust(cid: str, readings: Mapping[str, dict], *, setting: str, paper_text: str | None = None,
                   statistic: str | None = None) -> dict:
    """One headline claim over the ``readings`` (name -> claim) of a setting the paper leaves open.

    ``pass`` only when every reading passes, ``fail`` only when every reading
    fails, otherwise ``inconclusive``: "depends on the reading of <setting>".
    The readings' own results are kept beneath (``readings``); the headline's
    estimate and interval are those of the reading closest to the other
    verdict (the binding one). A not-run reading leaves the headline on the
    others.

    >>> a = {"id": "a", "verdict": "pass", "estimate": 1.0, "ci_low": 0.5, "ci_high": 1.5, "n_seeds": 5,
    ...      "paper_text": "p", "statistic": "s", "threshold": 0.0, "side": "greater", "threshold_why": "w",
    ...      "interval": "95% t", "reason": "", "data": {"kind": "same", "note": ""}}
    >>> b = {**a, "id": "b", "verdict": "fail", "estimate": -1.0, "ci_low": -1.5, "ci_high": -0.5}
    >>> h = reading_robust("C", {"size": a, "count": b}, setting="BlockDiag's R")
    >>> h["verdict"], h["reason"], sorted(h["readings"])
    ('inconclusive', "depends on the reading of BlockDiag's R: size pass, count fail", ['count', 'size'])
    """
    run = {k: c for k, c in readings.items() if c["verdict"] != NOT_RUN}
    verdicts = {c["verdict"] for c in run.values()}
    each = ", ".join(f"{k} {c['verdict']}" for k, c in readings.items())

    def margin(c: dict) -> float:  # how far a reading's estimate is from its threshold
        return 0.0 if c.get("side") == "within" else abs(float(c["estimate"]) - float(c["threshold"]))

    if not run:
        head = dict(next(iter(readings.values())))
    elif len(verdicts) == 1:   # every reading agrees: the one nearest its threshold binds
        head = dict(min(run.values(), key=margin))
        head["reason"] = f"every reading of {setting} gives {head['verdict']}: {each}"
    else:                      # they differ: a failing reading (else a non-passing one) binds
        head = dict(next((c for c in run.values() if c["verdict"] == FAIL),
                         next(c for c in run.values() if c["verdict"] != PASS)))
        head["measured_verdict"], head["verdict"] = head["verdict"], INCONCLUSIVE
        head["reason"] = f"depends on the reading of {setting}: {each}"
    for k in ("fail_kind", "evidence", "mechanism", "settle"):
        head.pop(k, None)
    head["id"] = cid
    if paper_text:
        head["paper_text"] = paper_text
    if statistic:
        head["statistic"] = statistic
    head["readings"] = {k: {f: c.get(f) for f in ("id", "verdict", "estimate", "ci_low", "ci_high", "n_seeds",
                                                   "statistic", "reason")} for k, c in readings.items()}
    if head["verdict"] == FAIL:
        evid = [c.get("evidence") or evidence_line(c) for c in run.values()]
        disagreement(head, "every reading fails: " + " | ".join(f"{k}: {e}" for k, e in zip(run, evid)))
    return head


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
        if c["verdict"] == FAIL:
            if c.get("fail_kind") is None or not c.get("evidence"):
                raise ValueError(f"{where}: fail {c['id']!r} lacks its kind or evidence: apply by_cause(claims)")
            if c["fail_kind"] == "limitation" and not (c.get("mechanism") and c.get("settle")):
                raise ValueError(f"{where}: limitation {c['id']!r} must state its mechanism and what would "
                                 "settle it (claims.limitation)")
    return claims

