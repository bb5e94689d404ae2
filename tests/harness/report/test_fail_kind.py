"""Every fail says, as its study's rule set it, whether it disagrees with the paper or is a limitation of
our run, with one line of evidence; the scorecard reads the kind and never derives one."""

import pytest

from rfrepro.harness.report.claims import by_cause, check_claims, judge, limitation, with_data
from rfrepro.harness.report.report import claim_details
from rfrepro.harness.report.scorecard import MAX_FAILS_LISTED, Paper, Study, fail_kind

SUBSTITUTE = {"kind": "substitute", "note": "MNIST 784 pixels vs the paper's 256"}


def _judged(cid, verdict, data):
    """A judged claim with ``verdict`` (pass: above 0; fail: below it)."""
    values = [1.0, 1.1, 0.9] if verdict == "pass" else [-1.0, -1.1, -0.9]
    c = judge(cid, paper_text="ours is better", statistic="gain", values=values, threshold=0.0, side="greater",
              threshold_why="any gain")
    assert c["verdict"] == verdict
    return with_data(c, data["kind"], data.get("note", ""))


def test_a_fail_on_substitute_data_is_a_disagreement_unless_the_study_states_a_mechanism():
    # the data kind alone decides nothing: a substitute with no stated mechanism is still our evidence
    c = by_cause([_judged("C2.1-mnist", "fail", SUBSTITUTE)])[0]
    assert fail_kind(c) == ("disagreement", "")
    assert c["evidence"] == "-1 [-1.25, -0.752] over 3 seeds (95% t), where the claim needs > 0"
    check_claims([c])
    stated = limitation(_judged("C5.3", "fail", {"kind": "same"}), "2 threads here against the paper's 16",
                        "a 16-core host")
    c = by_cause([stated])[0]
    assert fail_kind(c) == ("limitation", "a 16-core host")
    lines = claim_details([c])
    assert lines[-2:] == ["  This fail is a [limitation](#definitions): 2 threads here against the paper's 16; "
                          "what would settle it: a 16-core host.",
                          "  Evidence: -1 [-1.25, -0.752] over 3 seeds (95% t), where the claim needs > 0."]


def test_a_fail_without_kind_or_evidence_and_a_limitation_without_mechanism_are_refused():
    judged = _judged("C1", "fail", {"kind": "same"})
    # judge itself calls every fail a disagreement with an evidence line; check_claims accepts it
    assert judged["fail_kind"] == "disagreement"
    assert judged["evidence"] == "-1 [-1.25, -0.752] over 3 seeds (95% t), where the claim needs > 0"
    check_claims([judged])
    for lost in ("fail_kind", "evidence"):
        bare = dict(judged)
        bare.pop(lost)
        with pytest.raises(ValueError, match="lacks its kind or evidence"):
            check_claims([bare])
    half = {**_judged("C2", "fail", {"kind": "same"}), "fail_kind": "limitation", "evidence": "e"}
    with pytest.raises(ValueError, match="must state its mechanism"):
        check_claims([half])
    # a pass carries no kind, even one a study set before the verdict moved
    ok = by_cause([{**_judged("C3", "pass", {"kind": "same"}), "fail_kind": "limitation"}])[0]
    assert "fail_kind" not in ok and not any("This fail" in x for x in claim_details([ok]))
    assert fail_kind({"verdict": "fail"}) == ("unclassified", "")


def test_the_papers_verdict_line_counts_fails_by_kind_and_names_each():
    s = Study(id="schleif2016/table1", slug="schleif2016-table1", title="t", planned=True,
              claims=by_cause([_judged("C2.1-mnist", "fail", SUBSTITUTE),
                               limitation(_judged("C2.3", "fail", {"kind": "same"}), "m", "s"),
                               _judged("C2.2", "pass", {"kind": "same"}),
                               {**_judged("C2.5", "pass", {"kind": "same"}), "verdict": "inconclusive"}]),
              status={"counts": {"ok": 1}})
    line = Paper("schleif2016", "Schleif et al. 2016", [s]).verdict_line
    assert line == ("1 of 4 claims pass; 2 fail (1 disagreement, 1 limitation): C2.1-mnist (schleif2016/table1, "
                    "disagreement), C2.3 (schleif2016/table1, limitation); 1 inconclusive")


def test_a_long_list_of_fails_is_counted_per_study_and_kind():
    fails = by_cause([_judged(f"X-C5.1-vs-m{i}", "fail", SUBSTITUTE) for i in range(MAX_FAILS_LISTED)])
    a = Study(id="lb/a", slug="lb-a", title="t", planned=True, status={"counts": {"ok": 1}},
              claims=[*fails, _judged("X-C1", "pass", {"kind": "same"})])
    b = Study(id="lb/b", slug="lb-b", title="t", planned=True, status={"counts": {"ok": 1}},
              claims=[limitation(_judged("C9", "fail", {"kind": "same"}), "m", "s"),
                      {**_judged("C8", "pass", {"kind": "same"}), "verdict": "inconclusive"}])
    assert Paper("lb", "L", [a]).verdict_line.startswith(
        f"1 of {MAX_FAILS_LISTED + 1} claims pass; {MAX_FAILS_LISTED} fail ({MAX_FAILS_LISTED} disagreement): "
        "X-C5.1-vs-m0 (lb/a, disagreement), ")
    line = Paper("lb", "L", [a, b]).verdict_line
    assert line == (f"1 of {MAX_FAILS_LISTED + 3} claims pass; {MAX_FAILS_LISTED + 1} fail ({MAX_FAILS_LISTED} "
                    f"disagreement, 1 limitation): {MAX_FAILS_LISTED} in lb/a (disagreement), 1 in lb/b "
                    "(limitation); 1 inconclusive")
