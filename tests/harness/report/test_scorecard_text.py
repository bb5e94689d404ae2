"""The scorecard explains itself: definitions once, not-run counts linked to their reasons,
a shared sentence printed once, and each study's figure and table before its claims.

Checked on a two-study paper made here (no run needed) and on the reference scorecard
(``results/reference/``, rebuilt by ``python -m rfrepro.harness.reference --dest results/reference``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markupsafe import escape

from rfrepro.harness.report.report import render
from rfrepro.harness.report.scorecard import DEFINITIONS, VERDICT_ORDER, Paper, Study, by_sentence
from rfrepro.harness.report.site import build_site

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "results" / "reference"
#: longer than the paper table's short sentence (90 characters), so the whole sentence is the details' own
SHARED = ('"Our maps beat every baseline at every budget, on every dataset we tried, by a wide margin" '
          "(Sec. 5, Fig. 3)")
OTHER = '"And they are fast as well, at least on the two largest datasets of the study" (Sec. 5, Fig. 4)'


def _claim(cid, verdict, text, **extra):
    return {"id": cid, "verdict": verdict, "paper_text": text, "statistic": "error(ours) - error(theirs)",
            "estimate": -0.1, "ci_low": -0.2, "ci_high": -0.05, "threshold": 0.0, "side": "less", "n_seeds": 5,
            "data": {"kind": "same"}, **extra}


@pytest.fixture(scope="module")
def paper(tmp_path_factory) -> tuple[Path, Paper]:
    """A paper of two run studies: the first with two claims of one sentence, then one of another and two
    not run for one reason; the second with one not run for another reason. Each has a figure and a table."""
    root = tmp_path_factory.mktemp("scorecard") / "results"
    (root / "figures").mkdir(parents=True)
    summary = "| method | mean rank |\n|---|---|\n| ours | 1.0 |\n| theirs | 2.0 |"
    nan = {"estimate": None, "ci_low": None, "ci_high": None, "n_seeds": 0}
    a = Study("x2020/fig3", "x2020-fig3", "X 2020 Fig. 3", planned=True, status={"counts": {"ok": 2}},
              figure=root / "figures" / "x2020-fig3.png", summary=summary,
              claims=[_claim("C1", "pass", SHARED), _claim("C2", "fail", SHARED, fail_kind="disagreement",
                                                                  evidence="-0.1 [-0.2, -0.05] over 5 seeds"), _claim("C3", "pass", OTHER),
                      _claim("C4", "not-run", OTHER, reason="data unavailable", **nan),
                      _claim("C5", "not-run", OTHER, reason="data unavailable", **nan)])
    b = Study("x2020/fig4", "x2020-fig4", "X 2020 Fig. 4", planned=True, status={"counts": {"ok": 1}},
              figure=root / "figures" / "x2020-fig4.png", summary=summary,
              claims=[_claim("C6", "not-run", OTHER, reason="over the memory budget", **nan)])
    return root, Paper("x2020", "X and Y (2020). A paper.", [a, b])


@pytest.fixture(scope="module")
def report(paper) -> str:
    root, p = paper
    return render(root, [p], {})


@pytest.fixture(scope="module")
def site(paper) -> Path:
    root, p = paper
    return build_site(root, papers=[p]).parent


def test_by_sentence_groups_consecutive_claims_only():
    claims = [{"paper_text": t} for t in "aaba"]
    assert [(t, len(g)) for t, g in by_sentence(claims)] == [("a", 2), ("b", 1), ("a", 1)]


def test_each_verdict_and_fail_kind_is_defined_once_on_the_first_screen(report, site):
    assert [t for t, _ in DEFINITIONS] == [*VERDICT_ORDER, "disagreement", "limitation", "extension"]
    index = (site / "index.html").read_text()
    for term, text in DEFINITIONS:
        assert report.count(f"- **{term}**: {text}") == 1
        assert index.count(f"<b>{term}</b>: {escape(text)}") == 1
    # before the table of papers, in both
    assert report.index("**limitation**:") < report.index("| paper | studies run |")
    assert index.index('id="definitions"') < index.index('id="scorecard"')
    # a fail's kind links to its definition
    assert "This fail is a [disagreement](#definitions)" in report
    assert "  Evidence: -0.1 [-0.2, -0.05] over 5 seeds." in report
    assert 'this fail is a <a href="index.html#definitions"' in (site / "x2020.html").read_text()


def test_a_not_run_count_links_to_each_claim_and_its_reason(report, site):
    # REPORT.md: the count links to the paper's list, identical reasons once with their count
    assert "| [3](#x2020-not-run) |" in report
    assert report.count('<a id="x2020-not-run"></a>') == 1
    assert "- data unavailable (2): [x2020/fig3](#x2020-fig3) C4, C5" in report
    assert "- over the memory budget (1): [x2020/fig4](#x2020-fig4) C6" in report
    # the site: the index's count links to the paper page's list
    index = (site / "index.html").read_text()
    assert '<a href="x2020.html#not-run" title="why not run">3</a>' in index
    page = (site / "x2020.html").read_text()
    listing = page[page.index('<section id="not-run"'):]
    assert listing.count("<b>data unavailable</b> (2)") == 1 and "<b>over the memory budget</b> (1)" in listing
    assert all(cid in listing for cid in ("C4", "C5", "C6")) and "C3" not in listing


def test_claims_that_share_a_sentence_show_it_once(report, site):
    # REPORT.md: the claims' details quote it once; the paper's table shows it on the first row only
    assert report.count(SHARED) == 1
    assert report.index(f"> {SHARED}") < report.index("- **C1** (PASS") < report.index("- **C2** (FAIL")
    assert "| x2020/fig3 | C2 |  |" in report
    assert report.count(OTHER[:60]) == 3  # the details of fig3 and of fig4, and the table's first row of it
    # the site: one sentence row over its claims' rows
    page = (site / "x2020.html").read_text()
    assert page.count(str(escape(SHARED))) == 1
    assert page.count('<tr class="sentence">') == 3
    shared = page.index(str(escape(SHARED)))
    assert shared < page.index("<td>C1</td>") < page.index("<td>C2</td>") < page.index(str(escape(OTHER)))


def _order(section: str) -> list[int]:
    return [section.index(m) for m in ("<figure", 'class="summary"', 'class="claims"')]


def test_a_studys_figure_and_table_come_before_its_claims(site):
    page = (site / "x2020.html").read_text()
    for sid in ("x2020-fig3", "x2020-fig4"):
        section = page[page.index(f'<section id="{sid}"'):]
        section = section[:section.index("</section>")]
        figure, summary, claims = _order(section)
        assert figure < summary < claims
        assert '<div class="table-wrap"><table>' in section  # the summary's table scrolls in its own box


def test_the_reference_leaderboard_shows_each_studys_figure_and_ranks_before_its_claims():
    page = (REFERENCE / "site" / "leaderboard.html").read_text()
    sections = re.findall(r'<section id="[^"]+" class="study">.*?</section>', page, flags=re.S)
    assert len(sections) >= 6
    for section in sections:
        figure, summary, claims = _order(section)
        assert figure < summary < claims
        assert "mean rank" in section[summary:claims]


def test_the_reference_scorecard_has_the_definitions_and_not_run_reasons():
    report = (REFERENCE / "REPORT.md").read_text()
    index = (REFERENCE / "site" / "index.html").read_text()
    for term, text in DEFINITIONS:
        assert report.count(f"- **{term}**: {text}") == 1
        assert index.count(f"<b>{term}</b>: {escape(text)}") == 1
    for pid, n in re.findall(r'<tr data-paper="([^"]+)">.*?data-verdict="not-run">(.*?)</td>', index, flags=re.S):
        if n != "0":  # a not-run count links to the paper page's reasons, which are there
            assert f'href="{pid}.html#not-run"' in n
            assert 'id="not-run"' in (REFERENCE / "site" / f"{pid}.html").read_text()
            assert f"](#{pid}-not-run) |" in report and f'<a id="{pid}-not-run"></a>' in report
