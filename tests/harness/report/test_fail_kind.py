"""Every fail says whether it is a disagreement with the paper or a limitation of our run."""

from rfrepro.harness.report.report import claim_details
from rfrepro.harness.report.scorecard import MAX_FAILS_LISTED, Paper, Study, fail_kind

SUBSTITUTE = {"kind": "substitute", "note": "MNIST 784 pixels vs the paper's 256"}


def _claim(cid, verdict, data, **extra):
    return {"id": cid, "verdict": verdict, "paper_text": "ours is better", "n_seeds": 10, "data": data, **extra}


def test_a_fail_on_substitute_data_is_a_limitation_and_names_the_data_that_would_settle_it():
    c = _claim("C2.1-mnist", "fail", SUBSTITUTE)
    assert fail_kind(c) == ("limitation", "the paper's data (MNIST 784 pixels vs the paper's 256)")
    lines = claim_details([c])
    assert lines[-1] == ("  This fail is a [limitation](#definitions); what would "
                         "settle it: the paper's data (MNIST 784 pixels vs the paper's 256).")


def test_a_fail_on_the_papers_data_is_a_disagreement_unless_the_study_says_otherwise():
    same = _claim("C4.2", "fail", {"kind": "generated", "note": "the paper's disk data"})
    assert fail_kind(same) == ("disagreement", "")
    assert claim_details([same])[-1] == "  This fail is a [disagreement](#definitions)."
    said = _claim("C2.4", "fail", {"kind": "same"}, fail_kind="limitation", settle="the paper's sigma")
    assert fail_kind(said) == ("limitation", "the paper's sigma")
    # no fail clause for other verdicts
    assert not any("This fail" in x for x in claim_details([_claim("C1", "pass", {"kind": "same"})]))


def test_the_papers_verdict_line_names_each_fail_with_its_kind():
    s = Study(id="schleif2016/table1", slug="schleif2016-table1", title="t", planned=True,
              claims=[_claim("C2.1-mnist", "fail", SUBSTITUTE), _claim("C2.3", "fail", {"kind": "same"}),
                      _claim("C2.2", "pass", {"kind": "same"}), _claim("C2.5", "inconclusive", {"kind": "same"})],
              status={"counts": {"ok": 1}})
    line = Paper("schleif2016", "Schleif et al. 2016", [s]).verdict_line
    assert line == ("1 of 4 claims pass; fail: C2.1-mnist (schleif2016/table1, limitation), "
                    "C2.3 (schleif2016/table1, disagreement); 1 inconclusive")


def test_a_long_list_of_fails_is_counted_per_study_and_kind():
    fails = [_claim(f"X-C5.1-vs-m{i}", "fail", SUBSTITUTE) for i in range(MAX_FAILS_LISTED)]
    a = Study(id="lb/a", slug="lb-a", title="t", planned=True, status={"counts": {"ok": 1}},
              claims=[*fails, _claim("X-C1", "pass", {"kind": "same"})])
    b = Study(id="lb/b", slug="lb-b", title="t", planned=True, status={"counts": {"ok": 1}},
              claims=[_claim("C9", "fail", {"kind": "same"}), _claim("C8", "inconclusive", {"kind": "same"})])
    assert Paper("lb", "L", [a]).verdict_line.startswith(
        f"1 of {MAX_FAILS_LISTED + 1} claims pass; fail: X-C5.1-vs-m0 (lb/a, limitation), ")
    line = Paper("lb", "L", [a, b]).verdict_line
    assert line == (f"1 of {MAX_FAILS_LISTED + 3} claims pass; {MAX_FAILS_LISTED + 1} fail: {MAX_FAILS_LISTED} in "
                    "lb/a (limitation), 1 in lb/b (disagreement); 1 inconclusive")
