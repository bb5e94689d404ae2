"""results/REPORT.md and the HTML scorecard (results/site/): what reproduced, on the first screen.

    python -m rfrepro.report [--smoke] [--no-rebuild | --rebuild-all]    (the command: rfrepro/report.py)

The first screen answers "what reproduced?": what each verdict and kind of fail
means (scorecard.DEFINITIONS, one line each), one row per paper with its claims
counted by verdict (a not-run count links to the reasons) and its one-line
verdict, then a table of contents. Then each paper's claims one line each (id,
short sentence, estimate [95% CI] vs threshold, verdict) and its not-run claims
by reason; then per study its figure, paper-vs-ours table, each claim's
statistic, reason and data (under the paper's sentence, once for consecutive
claims that share it), its declared deviations (written once per family of
studies that share them) and its failed, refused or extra runs.
Studies not run yet take one line each. A study whose plan, records and drawing code
are unchanged since its outputs were built keeps them (`--rebuild-all` redraws all).

Everything is drawn from the saved plans and the records (rfrepro.harness.planfile,
rfrepro.harness.report.scorecard): no config is composed and no data is read, so the
report is the same on a machine without the data. One study whose outputs
cannot be built does not stop the report. Exit status 0, or 2 (one line) when
the results folder cannot be written.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from tqdm.auto import tqdm

from rfrepro.atomic import atomic_write_text
from rfrepro.harness.catalog import options
from rfrepro.harness.planfile import plan_file
from rfrepro.harness.report.outputs import build_outputs, failed_runs
from rfrepro.harness.report.scorecard import (
    DEFINITIONS,
    NOT_RUN,
    VERDICT_ORDER,
    Paper,
    Study,
    adhoc_runs,
    by_sentence,
    claim_sentence,
    collect,
    fail_kind,
    load_study,
    seeds_text,
)
from rfrepro.layout import ResultsLayout, study_slug
from rfrepro.runner.env import provenance
from rfrepro.runner.store import FAILED, REFUSED, UNAVAILABLE

VERDICT_MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "inconclusive", "not-run": "not run",
                "not-comparable": "not comparable"}


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _short(text: str, limit: int = 90) -> str:
    """The first ``limit`` characters of a sentence, cut at a word."""
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def estimate_vs_threshold(c: dict) -> str:
    """``est [lo, hi] vs > thr`` of one claim (``-`` where it has no interval)."""
    if c.get("estimate") is None:
        return "-"
    est = f"{_num(c.get('estimate'))} [{_num(c.get('ci_low'))}, {_num(c.get('ci_high'))}]"
    t, side = c.get("threshold"), c.get("side")
    if t is None:
        return est
    if side == "within":
        return f"{est} in [{_num(t[0])}, {_num(t[1])}]?"
    return f"{est} vs {'>' if side == 'greater' else '<'} {_num(t)}"


def _data(c: dict) -> str:
    d = c.get("data")
    if isinstance(d, dict):
        return d.get("kind", "-") + (f" ({d['note']})" if d.get("note") else "")
    return str(d) if d else "-"


def claim_rows(claims: list[dict], study: str | None = None) -> list[str]:
    """One line per claim: id, short sentence, estimate [95% CI] vs threshold, verdict.

    Consecutive claims of one sentence show it once, on the first of their rows.
    """
    return paper_claim_rows([(study, c) for c in claims], with_study=bool(study))


def paper_claim_rows(claims: list[tuple], with_study: bool = True) -> list[str]:
    """:func:`claim_rows` of ``(study id, claim)`` pairs, a study column first (``with_study``)."""
    head = ("| study " if with_study else "") + "| claim | paper (short) | estimate [95% CI] vs threshold | verdict |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for text, group in by_sentence(claims, lambda sc: claim_sentence(sc[1])):
        for i, (study, c) in enumerate(group):
            lines.append((f"| {study} " if with_study else "")
                         + f"| {c['id']} | {_md(_short(text)) if i == 0 else ''} "
                         f"| {_md(estimate_vs_threshold(c))} | **{VERDICT_MARK.get(c['verdict'], c['verdict'])}** |")
    return lines


def claim_list(claims: list[dict]) -> list[str]:
    """A study's claims under the paper's sentences: each sentence once (quoted), then its claims'
    :func:`claim_details`."""
    out = []
    for text, group in by_sentence(claims):
        out += [f"> {_md(text)}", "", *claim_details(group), ""]
    return out[:-1]


def claim_details(claims: list[dict]) -> list[str]:
    """Per claim, below the one-line table: its verdict, statistic, threshold's why, reason, data
    (the sentence it tests is above it: :func:`claim_list`)."""
    out = []
    for c in claims:
        out.append(f"- **{c['id']}** ({VERDICT_MARK.get(c['verdict'], c['verdict'])}, n = {seeds_text(c)})")
        if c.get("statistic"):
            out.append(f"  Statistic: {_md(c['statistic'])}.")
        if c.get("threshold_why"):
            out.append(f"  Threshold: {_md(c['threshold_why'])}.")
        if c.get("reason") or c.get("note"):
            out.append(f"  Reason: {_md(c.get('reason') or c.get('note'))}.")
        out.append(f"  Data: {_md(_data(c))}.")
        for name, r in (c.get("readings") or {}).items():
            out.append(f"  Reading {_md(name)}: {r.get('verdict')}, {_md(estimate_vs_threshold({**c, **r}))}"
                       + (f" ({_md(r['reason'])})" if r.get("reason") else "") + ".")
        if c["verdict"] == "fail":
            kind, settle = fail_kind(c)
            out.append(f"  This fail is a [{kind}](#definitions)"
                       + (f": {_md(c['mechanism'])}" if c.get("mechanism") else "")
                       + (f"; what would settle it: {_md(settle)}" if settle else "") + ".")
            if c.get("evidence"):
                out.append(f"  Evidence: {_md(c['evidence'])}.")
    return out



def deviation_lines(devs: list[dict]) -> list[str]:
    return [f"- **{_md(d.get('what', ''))}**"
            + (f" Why: {_md(d['why'])}" if d.get("why") else "")
            + (f" Expected effect: {_md(d['effect'])}" if d.get("effect") else "") for d in devs]


def _runs_line(s: Study, root: Path) -> str:
    status = s.status
    plan = plan_file(root, s.id)
    counts = status.get("counts") or {}
    return (f"Runs in the paper's grid: {status.get('expected_runs', '-')} ("
            + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            + (f", {status['missing']} not run yet" if status.get("missing") else "")
            + f"). Table: `tables/{s.slug}.parquet`; plan: `plans/{plan.name if plan else s.slug + '.json'}`.")


def study_section(study: str | Study, root: Path, deviations_of: dict | None = None) -> str:
    """The section of one run study (``deviations_of``: deviation lists already printed, by their text)."""
    s = study if isinstance(study, Study) else load_study(study, root)
    lines = [f'<a id="{s.slug}"></a>', "", f"### {s.id}: {s.title}", ""]
    if not s.ran:
        return "\n".join(lines + ["Not run yet: no saved plan for this study "
                                  f"(`make reproduce-{s.slug}`).", ""])
    lines.append(_runs_line(s, Path(root)))
    if s.stale:
        lines.append(f"**Made by older code** (changed since its runs: {', '.join(f'`{m}`' for m in s.stale)}): "
                     f"rerun the study (`make reproduce-{s.slug}`) to check it still holds; only the runs "
                     "that execute changed code are recomputed.")
    if s.overrides:
        lines.append("**Not the paper's settings:** this study's grid was run with the overrides "
                     + " ".join(f"`{o}`" for o in s.overrides)
                     + f" (kept in its plan; rerun `python -m rfrepro.reproduce {s.id}` without them for the "
                     "paper's grid).")
    p = s.provenance
    if p:
        lines.append(f"Provenance: {p['runs']} finished runs, seeds {', '.join(map(str, p['seeds'])) or '-'}; "
                     f"commit {', '.join(p['commits']) or '-'}; code version "
                     f"{', '.join(f'`{v}`' for v in p['code_versions']) or '-'}; compute {_num(p['compute_s'])} s"
                     + (f"; tables, claims and figure drawn at commit {p['outputs_commit']}"
                        if p.get("outputs_commit") else "") + ".")
    lines.append("")
    if s.figure is not None:
        lines += [f"![{s.id}](figures/{s.figure.name})", ""]
    if s.summary:  # its headings go below the study's own
        lines += [re.sub(r"^(#{1,5}) ", r"\1# ", s.summary, flags=re.M), ""]
    if s.claims:
        lines += ["Claims:", "", *claim_list(s.claims), ""]
    if s.deviations:
        key = json.dumps(s.deviations, sort_keys=True)
        first = (deviations_of or {}).get(key)
        if first and first != s.id:
            lines += [f"Deviations from the paper: the same as [{first}](#{study_slug(first)}).", ""]
        else:
            if deviations_of is not None:
                deviations_of[key] = s.id
            lines += ["Deviations from the paper (declared in the study's config):", "",
                      *deviation_lines(s.deviations), ""]
    for kind, err in (s.status.get("output_errors") or {}).items():
        lines += [f"Output `{kind}` failed: `{_md(err.splitlines()[0])}`", ""]
    lines += roofline_lines(s.roofline)
    lines += _bad_runs(s)
    if s.status.get("other_code_runs"):
        lines += [f"Older code version ({s.status['other_code_runs']} runs): records in `runs/{s.slug}/` made "
                  "by code that has changed since; not drawn into this study's outputs (re-running the study "
                  "recomputes only the runs whose code changed).", ""]
    if s.status.get("extra_runs"):
        lines += [f"Extra runs, not in the study's plan: {len(s.status['extra_runs'])} records in "
                  f"`runs/{s.slug}/` ({s.status.get('extra_finished', 0)} finished: ad-hoc sweeps, or runs of "
                  f"other settings or data); not drawn into this study's outputs (`python -m rfrepro.reproduce {s.id} "
                  "--prune` removes them).", ""]
    return "\n".join(lines)


def roofline_lines(rows: list[dict]) -> list[str]:
    """The study's transforms against the host's roofline, one row per method (none: no lines)."""
    if not rows:
        return []
    lines = ["Transform time against the host's roofline (medians over each method's runs; predicted = "
             "max(flops / peak GEMM rate, bytes / copy bandwidth)):", "",
             "| method | transform | runs | predicted s | measured s | fraction of peak |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["fraction"] is None:
            lines.append(f"| {_md(r['method'])} | {r['split']} | 0 | | | n/a: all {r['above_peak']} runs faster "
                         "than the peak allows (a cached transform) |")
        else:
            note = f" ({r['above_peak']} cached runs left out)" if r.get("above_peak") else ""
            lines.append(f"| {_md(r['method'])} | {r['split']} | {r['runs']} | {_num(r['predicted_s'])} | "
                         f"{_num(r['measured_s'])} | {r['fraction']:.1%}{note} |")
    return lines + [""]


def _bad_runs(s: Study) -> list[str]:
    if s.table is None:
        return []
    bad = failed_runs(s.table)
    lines = []
    refused = bad[bad["status"] == REFUSED]
    unavailable = bad[bad["status"] == UNAVAILABLE]
    failed = bad[bad["status"] == FAILED]
    if len(refused):
        err = _first_line(refused.iloc[0].get("error"))
        lines += [f"Not run, over the memory budget: {len(refused)} runs (e.g. `{_md(err)}`).", ""]
    if len(unavailable):
        names = sorted(set(unavailable["dataset.name"].dropna())) if "dataset.name" in unavailable else []
        lines += [f"Not run, data unavailable: {', '.join(names)} ({len(unavailable)} runs). "
                  "Set RFREPRO_MIRROR or mirror= to a mirror of the official URLs.", ""]
    if len(failed):
        lines += [f"Failed runs ({len(failed)}; tracebacks in `runs/{s.slug}/<run_id>.json`):", ""]
        for _, r in failed.head(20).iterrows():
            lines.append(f"- `{r['run_id']}` {r.get('arm')} seed={r.get('seed')}: {_md(_first_line(r.get('error')))}")
        if len(failed) > 20:
            lines.append(f"- ... and {len(failed) - 20} more")
        lines.append("")
    return lines


def scorecard_table(papers: list[Paper], anchors: bool = True) -> list[str]:
    """The first screen: one row per paper, its claims counted by verdict, its one-line verdict.

    With ``anchors``, a paper links to its section and a not-run count to the reasons (:func:`not_run_lines`).
    """
    lines = ["| paper | studies run | " + " | ".join(VERDICT_ORDER) + " | verdict |",
             "|---|---|" + "---|" * len(VERDICT_ORDER) + "---|"]
    for p in papers:
        name = f"[{_md(p.citation)}](#{p.id})" if anchors else _md(p.citation)
        counts = [f"[{p.counts[v]}](#{p.id}-not-run)" if anchors and v == NOT_RUN and p.counts[v] else str(p.counts[v])
                  for v in VERDICT_ORDER]
        lines.append(f"| {name} | {p.n_run} / {len(p.studies)} | " + " | ".join(counts) + f" | {_md(p.verdict_line)} |")
    return lines


def definition_lines() -> list[str]:
    """The verdicts and kinds of fail, one line each (:data:`rfrepro.harness.report.scorecard.DEFINITIONS`)."""
    return ['<a id="definitions"></a>', "", *(f"- **{term}**: {_md(text)}" for term, text in DEFINITIONS)]


def not_run_lines(p: Paper) -> list[str]:
    """Each not-run claim of a paper under its reason (identical reasons once, with their count); none: []."""
    groups = p.not_run_reasons
    if not groups:
        return []
    lines = [f'<a id="{p.id}-not-run"></a>', "", f"Not run ({p.counts[NOT_RUN]} claims), by reason:", ""]
    for reason, claims in groups:
        per_study: dict[str, list[str]] = {}
        for s, c in claims:
            per_study.setdefault(s.id, []).append(str(c["id"]))
        lines.append(f"- {_md(reason)} ({len(claims)}): "
                     + "; ".join(f"[{sid}](#{study_slug(sid)}) {', '.join(ids)}" for sid, ids in per_study.items()))
    return lines + [""]


def render(root: Path, papers: list[Paper], errors: dict[str, str]) -> str:
    layout = ResultsLayout(root)
    smoke = layout.is_smoke
    mode = "smoke runs: subsampled data and grids, not the papers' settings" if smoke else "full settings"
    parts = [f"# rfrepro results report{' (SMOKE)' if smoke else ''}", "",
             f"Generated {datetime.now(timezone.utc).isoformat(timespec='seconds')} from the run records and "
             f"saved plans under this folder ({mode}). HTML scorecard: [site/index.html](site/index.html).", ""]
    if not smoke and not any(s.planned for p in papers for s in p.studies) \
            and any(plan_file(layout.smoke().root, s.id) for p in papers for s in p.studies):
        parts += ["No study has run at full settings here yet; the smoke report is "
                  "[smoke/REPORT.md](smoke/REPORT.md) (`make report SMOKE=1`).", ""]
    parts += ["## What reproduced", "", *definition_lines(), "", *scorecard_table(papers), "",
              "## Contents", ""]
    for p in papers:
        parts.append(f"- [{_md(p.citation)}](#{p.id})")
        for s in p.studies:
            parts.append(f"  - [{s.id}: {_md(s.title)}](#{s.slug})" if s.ran else
                         f"  - {s.id}: {_md(s.title)} (not run yet)")
    parts.append("")
    deviations_of: dict[str, str] = {}
    for p in papers:
        parts += [f'<a id="{p.id}"></a>', "", f"## {p.citation}", "", f"Verdict: {p.verdict_line}.", ""]
        ran = [s for s in p.studies if s.ran]
        claims = [(s, c) for s in ran for c in s.claims]
        if claims:
            parts += paper_claim_rows([(s.id, c) for s, c in claims]) + [""]
        parts += not_run_lines(p)
        for s in ran:
            parts.append(study_section(s, root, deviations_of))
            if s.id in errors:
                parts += [f"Building this study's outputs failed: `{_md(errors[s.id])}`", ""]
        unrun = [s for s in p.studies if not s.ran]
        if unrun:
            parts += ["Not run yet: " + "; ".join(f"{s.id} (`make reproduce-{s.slug}`)" for s in unrun) + ".", ""]
    adhoc = adhoc_runs(root)
    if len(adhoc):
        cols = [c for c in adhoc.columns if c != "started"]
        parts += ["## Ad-hoc runs", "",
                  f"{len(adhoc)} runs of `python -m rfrepro ...` outside a study (newest first; they belong to no "
                  "paper's figure or claim):", "",
                  "| started | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        for _, r in adhoc.head(50).iterrows():
            parts.append(f"| {r['started']} | " + " | ".join(_md(_num(r[c]) if r[c] is not None else "-")
                                                            for c in cols) + " |")
        if len(adhoc) > 50:
            parts.append(f"| ... and {len(adhoc) - 50} more (all in site/adhoc.html) |" + " |" * len(cols))
        parts.append("")
    prov = provenance()
    m = prov["machine"]
    parts += ["## Provenance of this report", "",
              f"- code: `{prov['git_commit']}`",
              f"- machine: {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB, {m['os']}, BLAS: {m['blas']}",
              "- packages: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items()), ""]
    return "\n".join(parts) + "\n"


def write_report(root: Path, rebuild: bool = True, site: bool = True, progress: bool = False,
                 reuse: bool = True) -> Path:
    """Rebuild every planned study's outputs (``rebuild``; ``reuse``: only those whose plan, records or
    drawing code changed since they were built), write REPORT.md and the site; return REPORT.md."""
    root = Path(root)
    layout = ResultsLayout(root)
    studies = options("experiment")
    errors = {}
    if rebuild:
        planned = [s for s in studies if plan_file(layout.root, s)]
        for study in tqdm(planned, desc="report", unit="study", disable=not progress):
            try:
                build_outputs(study, root, reuse=reuse)
            except Exception as exc:  # noqa: BLE001 - one broken study must not stop the report
                errors[study] = f"{type(exc).__name__}: {exc}"
    papers = collect(root, studies)
    path = layout.report
    atomic_write_text(path, render(root, papers, errors))
    if site:
        from rfrepro.harness.report.site import build_site

        build_site(root, studies, papers=papers)
    return path


def _first_line(text, limit: int = 200) -> str:
    """The first line of an error message, at most ``limit`` characters."""
    lines = str(text or "").splitlines()
    return lines[0][:limit] if lines else ""
