"""The HTML scorecard: ``<results>/site/``, a static site read from disk (no server).

    python -m rfrepro.harness.report.site [--smoke]      (``make report`` builds it too)

``index.html`` answers "what reproduced?" on its first screen: what each verdict
and kind of fail means, then one row per paper with its claims counted by verdict
(a not-run count links to the reasons) and its one-line verdict. One page per
paper then shows, per study, its figure with caption and provenance (commit, code
version, seeds, wall time), its paper-vs-ours (or rank) table, every claim (under
the paper's sentence, once for the claims that share it: the statistic, estimate
and 95% interval drawn against the threshold, verdict, reason, the data it was
judged on) and the study's declared deviations; last, its not-run claims by reason.
No page is wider than a 1280 px window: a wide table scrolls in a box of its own.
``adhoc.html`` lists ad-hoc runs (``python -m rfrepro ...`` outside a study).

Everything comes from the results folder alone (claims, status, plans, tables,
figures, records): building the site composes no config and reads no data.
The pages are Jinja2 templates (``rfrepro/harness/report/templates/``).
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

from rfrepro.atomic import atomic_write_text
from rfrepro.harness.report.scorecard import (
    DEFINITIONS,
    VERDICT_ORDER,
    adhoc_runs,
    by_sentence,
    claim_sentence,
    collect,
    fail_kind,
    seeds_text,
)
from rfrepro.layout import ResultsLayout, default_root


def interval_svg(claim: dict, width: int = 240, height: int = 26) -> dict | None:
    """Coordinates of a claim's estimate, interval and threshold on one small axis.

    Infinite interval ends are drawn to the axis edge (``open_lo`` / ``open_hi``).
    """
    est, lo, hi = claim.get("estimate"), claim.get("ci_low"), claim.get("ci_high")
    thr = claim.get("threshold")
    if not isinstance(est, (int, float)) or not math.isfinite(est):
        return None
    thr_vals = [t for t in (thr if isinstance(thr, list) else [thr]) if isinstance(t, (int, float))]
    finite = [v for v in (est, lo, hi, *thr_vals) if isinstance(v, (int, float)) and math.isfinite(v)]
    a, b = min(finite), max(finite)
    pad = (b - a) * 0.1 or abs(a) * 0.1 or 1.0
    a, b = a - pad, b + pad
    margin = 6

    def x(v: float) -> float:
        v = min(max(v, a), b)
        return round(margin + (v - a) / (b - a) * (width - 2 * margin), 1)

    lo_f = lo if isinstance(lo, (int, float)) and math.isfinite(lo) else a
    hi_f = hi if isinstance(hi, (int, float)) and math.isfinite(hi) else b
    return {"w": width, "h": height, "est": x(est), "lo": x(lo_f), "hi": x(hi_f),
            "open_lo": lo_f == a, "open_hi": hi_f == b,
            "thr": [x(t) for t in thr_vals], "band": claim.get("side") == "within" and len(thr_vals) == 2,
            "axis_lo": f"{a:.3g}", "axis_hi": f"{b:.3g}"}


def _markdown(text: str) -> str:
    """``text`` as HTML, each table in a box of its own that scrolls sideways when too wide."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(text)
    return html.replace("<table>", '<div class="table-wrap"><table>').replace("</table>", "</table></div>")


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("rfrepro.harness.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda v: "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
    env.filters["anchor"] = lambda s: s.replace("/", "-")
    env.filters["fail_kind"] = fail_kind
    env.filters["seeds_text"] = seeds_text
    env.filters["by_study"] = lambda pairs: by_sentence(pairs, lambda sc: sc[0].id)  # (study, claim) pairs
    return env


def build_site(root: str | Path, studies: list[str] | None = None, papers: list | None = None) -> Path:
    """Write ``<root>/site/`` (index, one page per paper, ad-hoc runs); return index.html's path.

    ``papers``: what :func:`rfrepro.harness.report.scorecard.collect` gave for ``root`` (read again when absent)."""
    layout = ResultsLayout(root)
    site_dir = layout.site
    if (site_dir / "figures").is_dir():  # copies an older version made; the pages now link the originals
        shutil.rmtree(site_dir / "figures")
    papers = papers if papers is not None else collect(layout.root, studies)
    views = {}
    for paper in papers:
        for s in paper.studies:
            # consecutive claims of one sentence under it once: [(sentence, [(claim, its interval drawing)])]
            groups = by_sentence([(c, interval_svg(c)) for c in s.claims], lambda cs: claim_sentence(cs[0]))
            view = {"figure": None, "summary_html": None, "groups": groups}
            if s.ran and s.figure is not None:  # the site lives beside figures/ in the results root
                view["figure"] = f"../figures/{s.figure.name}"
            if s.ran and s.summary:
                view["summary_html"] = _markdown(s.summary)
            views[s.id] = view
    env = _environment()
    common = {
        "papers": papers, "views": views, "verdicts": VERDICT_ORDER, "smoke": layout.is_smoke,
        "definitions": DEFINITIONS, "meaning": dict(DEFINITIONS),
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_text(site_dir / "style.css", env.get_template("style.css").render())
    atomic_write_text(site_dir / "index.html", env.get_template("index.html.j2").render(**common))
    for paper in papers:
        atomic_write_text(site_dir / f"{paper.id}.html",
                          env.get_template("paper.html.j2").render(paper=paper, **common))
    runs = adhoc_runs(layout.root)
    atomic_write_text(site_dir / "adhoc.html", env.get_template("adhoc.html.j2").render(
        runs=runs.to_dict("records"), columns=list(runs.columns), **common))
    return site_dir / "index.html"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.harness.report.site", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="the smoke-mode results")
    ap.add_argument("--root", help="results root (default: $RFREPRO_RESULTS or results)")
    args = ap.parse_args(argv)
    root = Path(args.root) if args.root else default_root(args.smoke)
    print(f"wrote {build_site(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
