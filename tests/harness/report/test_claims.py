"""Claims as statistical tests: intervals cover on synthetic nulls, verdicts follow the rule."""

import math

import numpy as np
import pandas as pd
import pytest

from rfrepro.harness.report.claims import (
    CLAIM_KEYS,
    DATA_KINDS,
    check_claims,
    combine_data,
    judge,
    judge_every,
    judge_log_ratio,
    loglog_slope,
    mean_interval,
    not_run,
    paired_values,
    reading_robust,
    same_values,
    verdict,
    with_data,
)

KW = {"paper_text": '"A beats B" (p. 1)', "statistic": "A - B per seed", "threshold_why": "any gain"}


@pytest.mark.parametrize("method, n, reps, band", [("t", 10, 2000, (0.935, 0.965)),
                                                   ("bootstrap", 20, 300, (0.88, 0.98))])
def test_intervals_cover_the_true_mean(method, n, reps, band):
    rng = np.random.RandomState(0)
    hits = 0
    for _ in range(reps):
        x = rng.normal(1.5, 2.0, n) if method == "t" else rng.exponential(1.5, n)
        _, lo, hi, _ = mean_interval(x, method=method)
        hits += lo <= 1.5 <= hi
    assert band[0] <= hits / reps <= band[1]


def test_a_true_claim_passes_a_false_one_fails_noise_is_inconclusive():
    rng = np.random.RandomState(1)
    assert judge("C", values=rng.normal(0.05, 0.01, 10), threshold=0.0, side="greater", **KW)["verdict"] == "pass"
    assert judge("C", values=rng.normal(-0.05, 0.01, 10), threshold=0.0, side="greater", **KW)["verdict"] == "fail"
    assert judge("C", values=rng.normal(0.0, 0.05, 10), threshold=0.0, side="greater",
                 **KW)["verdict"] == "inconclusive"
    # "less" mirrors "greater"
    assert judge("C", values=rng.normal(-0.05, 0.01, 10), threshold=0.0, side="less", **KW)["verdict"] == "pass"


def test_null_claims_rarely_pass():
    # the statistic sits exactly on the threshold: a 95% two-sided interval passes about 2.5% of the time
    rng = np.random.RandomState(2)
    passes = sum(judge("C", values=rng.normal(0, 1, 10), threshold=0.0, side="greater", **KW)["verdict"] == "pass"
                 for _ in range(2000))
    assert 0.01 <= passes / 2000 <= 0.04


def test_band_claims_and_too_few_seeds():
    assert verdict(-0.55, -0.45, (-0.6, -0.4), "within") == "pass"
    assert verdict(-0.3, -0.2, (-0.6, -0.4), "within") == "fail"
    assert verdict(-0.5, -0.3, (-0.6, -0.4), "within") == "inconclusive"
    c = judge("C", values=[0.1, 0.1], threshold=0.0, side="greater", **KW)
    assert c["verdict"] == "inconclusive" and "2 seed" in c["reason"]  # two equal seeds prove nothing
    assert judge("C", values=[], threshold=0.0, side="greater", **KW)["verdict"] == "not-run"


def test_paired_values_match_seeds_and_drop_the_unmatched():
    t = pd.DataFrame({"arm": ["a", "a", "a", "b", "b"], "seed": [0, 1, 2, 0, 1], "acc": [0.9, 0.8, 0.7, 0.5, 0.6]})
    d = paired_values(t, arm_col="arm", a="a", b="b", value="acc")
    assert d.to_dict() == pytest.approx({0: 0.4, 1: 0.2})
    r = paired_values(t, arm_col="arm", a="a", b="b", value="acc", op="ratio")
    assert r.loc[0] == pytest.approx(1.8)


def test_log_ratio_claims_and_slopes():
    rng = np.random.RandomState(3)
    logs = pd.Series(np.log(0.5) + rng.normal(0, 0.05, 10))
    c = judge_log_ratio("R", logs, threshold=0.707, side="less", **KW)
    assert c["verdict"] == "pass" and c["estimate"] == pytest.approx(0.5, rel=0.05)
    assert c["ci_low"] < c["estimate"] < c["ci_high"]
    x = np.array([10, 100, 1000.0])
    assert loglog_slope(x, 3 * x**-0.5) == pytest.approx(-0.5)
    assert math.isnan(loglog_slope([5, 5], [1, 2]))


def test_every_claim_has_the_contract_keys():
    claims = [with_data(judge("C1", values=[1, 2, 3], threshold=0, side="greater", **KW), "same", "the paper's"),
              with_data(not_run("C2", paper_text="x", statistic="y", reason="data unavailable"), "substitute",
                        "usps for an unnamed dataset")]
    assert check_claims(claims) == claims
    assert all(set(CLAIM_KEYS) <= set(c) for c in claims)
    with pytest.raises(ValueError, match="duplicate claim ids"):
        check_claims(claims + claims[:1])


def test_check_claims_refuses_a_claim_that_does_not_say_its_data():
    marked = with_data(judge("C1", values=[1, 2, 3], threshold=0, side="greater", **KW), "generated", "disk")
    bare = judge("C7", values=[1, 2, 3], threshold=0, side="greater", **KW)
    with pytest.raises(ValueError, match=r"claims: claim 'C7' does not say what data it was judged on") as err:
        check_claims([marked, bare])
    assert "with_data" in str(err.value) and "C1" not in str(err.value)
    # a not-run claim too: what it would be judged on is known from the config
    with pytest.raises(ValueError, match="'C2' does not say what data"):
        check_claims([not_run("C2", paper_text="x", statistic="y", reason="data unavailable")], "x/fig1 claims")
    with pytest.raises(ValueError, match="'C7' has data"):
        check_claims([{**bare, "data": {"kind": "similar", "note": ""}}])
    with pytest.raises(ValueError, match="data kind 'similar'"):
        with_data(bare, "similar")


def test_a_claim_over_several_datasets_takes_the_weakest_kind():
    assert combine_data([("same", "a"), ("same", "b")]) == ("same", "a; b")
    assert combine_data([("same", "a"), ("substitute", "b for the paper's c")]) == ("substitute",
                                                                                    "a; b for the paper's c")
    assert combine_data([("generated", "g"), ("same", "a")])[0] == "substitute"
    assert combine_data([("generated", "g"), ("generated", "g")]) == ("generated", "g")
    assert {combine_data([(k, "")])[0] for k in DATA_KINDS} == set(DATA_KINDS)
    with pytest.raises(ValueError, match="data kind 'other'"):
        combine_data([("same", "a"), ("other", "b")])
    with pytest.raises(ValueError, match="no datasets"):
        combine_data([])


def _every(rng, means, n=10, **kw):
    cells = {f"cell{i}": rng.normal(m, 1.0, n) for i, m in enumerate(means)}
    return judge_every("C", cells, threshold=0.0, side="less", **{**KW, **kw})


def test_every_cell_claims_control_both_errors():
    rng = np.random.RandomState(3)
    reps = 600
    # true in every one of 8 cells, by 0.4 sd each: the per-seed worst cell has a positive mean
    # (E max of 8 normals ~ +1.4 sd), so an interval of it "fails" this true claim; judge_every must not
    true_claim = [_every(rng, [-0.4] * 8)["verdict"] for _ in range(reps)]
    assert true_claim.count("fail") / reps <= 0.05
    worst = [np.max(rng.normal(-0.4, 1.0, (10, 8)), axis=1) for _ in range(200)]
    assert np.mean([judge("C", values=w, threshold=0.0, side="less", **KW)["verdict"] == "fail"
                    for w in worst]) > 0.9  # what the worst-cell statistic does to the same claim
    # on the boundary in every cell: passed (wrongly) at most 2.5% of the time, failed at most 5%
    boundary = [_every(rng, [0.0] * 8)["verdict"] for _ in range(reps)]
    assert boundary.count("pass") / reps <= 0.03 and boundary.count("fail") / reps <= 0.05
    # clearly true everywhere passes; clearly false in one cell fails
    assert [_every(rng, [-2.0] * 8)["verdict"] for _ in range(50)].count("pass") >= 48
    assert [_every(rng, [-2.0] * 7 + [2.0])["verdict"] for _ in range(50)].count("fail") >= 48


def test_every_cell_claim_reports_the_binding_cell_and_log_ratios():
    cells = {"a": [-1.0, -1.1, -0.9, -1.05], "b": [-0.2, -0.1, -0.15, -0.12], "c": [0.5, 0.6, 0.55, 0.52]}
    c = judge_every("C", cells, threshold=0.0, side="less", **KW)
    assert c["verdict"] == "fail" and "binding cell: c" in c["interval"]
    assert c["estimate"] == pytest.approx(0.5425) and set(c["measured"]["cells"]) == {"a", "b", "c"}
    c = judge_every("C", {k: v for k, v in cells.items() if k != "c"}, threshold=0.0, side="less", **KW)
    assert c["verdict"] == "pass" and "binding cell: b" in c["interval"]
    logs = {"x": np.log([0.5, 0.55, 0.45, 0.5]), "y": np.log([0.8, 0.85, 0.75, 0.8])}
    c = judge_every("C", logs, threshold=1.0, side="less", log=True, **KW)
    assert c["verdict"] == "pass" and c["estimate"] == pytest.approx(np.exp(np.log([0.8, 0.85, 0.75, 0.8]).mean()))
    assert judge_every("C", {"x": [0.1, 0.2]}, threshold=0.0, side="greater", **KW)["verdict"] == "inconclusive"
    assert judge_every("C", {}, threshold=0.0, side="greater", **KW)["verdict"] == "not-run"
    check_claims([with_data(c, "generated", "hand-made cells")])


def test_seeds_that_give_one_value_are_not_a_test():
    # identical per-seed values: n = 1 in effect; no interval unless the test rows give one
    c = judge("C", paper_text="p", statistic="s", values=[0.9] * 10, threshold=0.0, side="less",
              threshold_why="w")
    assert c["verdict"] == "inconclusive" and c["deterministic"] is True
    assert (c["ci_low"], c["ci_high"]) == (-np.inf, np.inf) and "the same value" in c["reason"]
    # equal up to float rounding counts too
    assert same_values([-0.23876358182002927, -0.2387635818200292]) and not same_values([1.0, 1.0 + 1e-6])
    c = judge("C", paper_text="p", statistic="s", values=[0.9] * 10, threshold=0.0, side="less",
              threshold_why="w", test_rows_se=0.1)
    assert c["verdict"] == "fail" and c["ci_low"] == pytest.approx(0.9 - 1.959964 * 0.1)
    # a log ratio too
    r = judge_log_ratio("C", pd.Series([np.log(2.0)] * 5), paper_text="p", statistic="s", threshold=1.0,
                        threshold_why="w")
    assert r["verdict"] == "inconclusive" and r["deterministic"] is True and r["estimate"] == pytest.approx(2.0)
    # a cell of judge_every whose seeds agree cannot decide, unless the values sit at a stated bound
    cells = {"a": [0.5, 0.6, 0.55, 0.52], "b": [-1.0] * 4}
    e = judge_every("C", cells, paper_text="p", statistic="s", threshold=0.0, side="greater", threshold_why="w")
    assert e["verdict"] == "inconclusive" and e["measured"]["cells"]["b"]["deterministic"] is True
    assert "cannot decide: b" in e["reason"]
    b = judge_every("C", cells, paper_text="p", statistic="s", threshold=0.0, side="greater", threshold_why="w",
                    at_bound=True)
    assert b["verdict"] == "fail" and b["interval"].endswith("binding cell: b")


def test_a_verdict_that_depends_on_the_reading_is_inconclusive():
    def claim(cid, vals):
        return with_data(judge(cid, paper_text="p", statistic="s", values=vals, threshold=0.0, side="greater",
                               threshold_why="w"), "same")
    up, down = claim("a", [1.0, 1.1, 0.9]), claim("b", [-1.0, -1.1, -0.9])
    h = reading_robust("H", {"one": up, "two": down}, setting="the block count")
    assert h["verdict"] == "inconclusive" and h["measured_verdict"] == "fail"
    assert h["reason"] == "depends on the reading of the block count: one pass, two fail"
    assert h["readings"]["one"]["verdict"] == "pass" and "fail_kind" not in h
    both = reading_robust("H", {"one": down, "two": claim("c", [-2.0, -2.1, -1.9])}, setting="x")
    assert both["verdict"] == "fail" and both["fail_kind"] == "disagreement"
    assert both["estimate"] == pytest.approx(-1.0)   # the reading nearest its threshold binds
    assert reading_robust("H", {"one": up, "two": claim("d", [2.0, 2.1, 1.9])}, setting="x")["verdict"] == "pass"
