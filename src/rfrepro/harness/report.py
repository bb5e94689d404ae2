"""results/REPORT.md: every study's figure and table, its claims judged with intervals over
seeds, its declared deviations from the paper, its failed and extra runs, and provenance.

    python -m rfrepro.report [--smoke] [--no-rebuild]

Every study is listed, including those with no runs yet; one study whose outputs
cannot be built does not stop the report. Exit status 0, or 2 (one line) when
the results folder cannot be written.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from rfrepro.atomic import atomic_write_text
from rfrepro.harness.config import compose, options
from rfrepro.harness.outputs import build_outputs, failed_runs
from rfrepro.harness.reproduce import check_writable, results_root
from rfrepro.harness.summary import EXIT_USAGE, first_line
from rfrepro.layout import ResultsLayout, study_slug
from rfrepro.runner.env import provenance
from rfrepro.runner.store import FAILED, REFUSED, UNAVAILABLE

VERDICT_MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "inconclusive", "not-run": "not run"}


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _fmt_measured(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) < 300 else text[:297] + "..."
    return "-" if value is None else str(value)


def deviations(study: str) -> list[dict]:
    """The study config's declared ``deviations:`` (what differs from the paper, why, effect)."""
    from omegaconf import OmegaConf

    try:
        cfg = compose([f"experiment={study}"])
    except Exception:  # noqa: BLE001 - a broken config is reported elsewhere
        return []
    devs = cfg.get("deviations")
    if devs is None:
        return []
    devs = OmegaConf.to_container(devs, resolve=False)
    return [d if isinstance(d, dict) else {"what": str(d)} for d in devs]


def claim_rows(claims: list[dict]) -> list[str]:
    lines = ["| claim | paper | statistic | estimate [95% CI] | n | threshold | verdict | reason |",
             "|---|---|---|---|---|---|---|---|"]
    for c in claims:
        if "estimate" in c:
            est = (f"{_num(c.get('estimate'))} [{_num(c.get('ci_low'))}, {_num(c.get('ci_high'))}]"
                   if c.get("estimate") is not None else "-")
            t, side = c.get("threshold"), c.get("side")
            if t is None:
                thr = "-"
            elif side == "within":
                thr = f"in [{_num(t[0])}, {_num(t[1])}]"
            else:
                thr = f"{'>' if side == 'greater' else '<'} {_num(t)}"
            if c.get("threshold_why"):
                thr += f" ({_md(c['threshold_why'])})"
            n = c.get("n_seeds", "-")
        else:  # a study still using the old pass/fail form
            est, thr, n = _fmt_measured(c.get("measured")), "-", "-"
        lines.append(
            f"| {c['id']} | {_md(c.get('paper_text') or c.get('statement', ''))} | {_md(c.get('statistic', '-'))} "
            f"| {_md(est)} | {n} | {thr} | **{VERDICT_MARK.get(c['verdict'], c['verdict'])}** "
            f"| {_md(c.get('reason') or c.get('note') or '')} |")
    return lines


def study_section(study: str, root: Path) -> str:
    slug = study_slug(study)
    lines = [f"## {study}", ""]
    devs = deviations(study)
    status_path = ResultsLayout(root).status(slug)
    status = json.loads(status_path.read_text()) if status_path.is_file() else None
    table = pd.read_parquet(ResultsLayout(root).table(slug)) \
        if ResultsLayout(root).table(slug).is_file() and status else pd.DataFrame()
    if status is None:
        lines += ["Not run yet: no records for this study.", ""]
    else:
        counts = status.get("counts") or {}
        lines.append(f"Runs in the paper's grid: {status['expected_runs']} ("
                     + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                     + (f", {status['missing']} not run yet" if status.get("missing") else "")
                     + f"). Table: `tables/{slug}.parquet`.")
        if status.get("overrides"):
            lines.append("**Not the paper's settings:** this study's grid was run with the overrides "
                         + " ".join(f"`{o}`" for o in status["overrides"])
                         + f" (kept in `tables/{slug}.sweep.json`; rerun `python -m rfrepro.reproduce "
                         f"{study}` without them for the paper's grid).")
        versions = sorted(set(table.get("code_version", pd.Series(dtype=str)).dropna())) if len(table) else []
        if versions:
            lines.append(f"Code version(s): {', '.join(f'`{v}`' for v in versions)}.")
        lines.append("")
        fig = ResultsLayout(root).figure(slug)
        if fig.is_file():
            lines += [f"![{study}](figures/{slug}.png)", ""]
        summary = ResultsLayout(root).summary(slug)
        if summary.is_file():
            lines += [summary.read_text().strip(), ""]
    cpath = ResultsLayout(root).claims(slug)
    if status is not None and cpath.is_file():
        lines += claim_rows(json.loads(cpath.read_text())) + [""]
    if devs:
        lines += ["Deviations from the paper (declared in the study's config):", ""]
        for d in devs:
            lines.append(f"- **{_md(d.get('what', ''))}**"
                         + (f" Why: {_md(d['why'])}" if d.get("why") else "")
                         + (f" Expected effect: {_md(d['effect'])}" if d.get("effect") else ""))
        lines.append("")
    if status is None:
        return "\n".join(lines)
    for kind, err in (status.get("output_errors") or {}).items():
        lines += [f"Output `{kind}` failed: `{_md(err.splitlines()[0])}`", ""]
    bad = failed_runs(table)
    if len(bad):
        unavailable = bad[bad["status"] == UNAVAILABLE]
        failed = bad[bad["status"] == FAILED]
        refused = bad[bad["status"] == REFUSED]
        if len(refused):
            err = first_line(refused.iloc[0].get("error"), 200)
            lines += [f"Not run, over the memory budget: {len(refused)} runs (e.g. `{_md(err)}`).", ""]
        if len(unavailable):
            names = sorted(set(unavailable.get("dataset.name", pd.Series(dtype=str)).dropna()))
            lines += [f"Not run, data unavailable: {', '.join(names)} ({len(unavailable)} runs). "
                      "Set RFREPRO_MIRROR or mirror= to a mirror of the official URLs.", ""]
        if len(failed):
            lines += [f"Failed runs ({len(failed)}; tracebacks in `runs/{slug}/<run_id>.json`):", ""]
            for _, r in failed.head(20).iterrows():
                err = first_line(r.get("error"), 200)
                lines.append(f"- `{r['run_id']}` {r.get('arm')} seed={r.get('seed')}: {_md(err)}")
            if len(failed) > 20:
                lines.append(f"- ... and {len(failed) - 20} more")
            lines.append("")
    if status.get("extra_runs"):
        lines += [f"Extra runs, not in the paper's grid: {len(status['extra_runs'])} records in `runs/{slug}/` "
                  f"({status.get('extra_finished', 0)} finished: ad-hoc sweeps, or runs of other code or data); "
                  "not drawn into this study's figure, table or claims.", ""]
    return "\n".join(lines)


def write_report(root: Path, rebuild: bool = True) -> Path:
    studies = options("experiment")
    errors = {}
    if rebuild:
        for study in studies:
            if ResultsLayout(root).study_runs(study_slug(study)).is_dir():
                try:
                    build_outputs(study, root)
                except Exception as exc:  # noqa: BLE001 - one broken study must not stop the report
                    errors[study] = f"{type(exc).__name__}: {exc}"
    prov = provenance()
    m = prov["machine"]
    mode = "smoke mode: subsampled, not the papers' settings" if root.name == "smoke" else "full settings"
    parts = [
        "# rfrepro results report", "",
        f"Generated {datetime.now(timezone.utc).isoformat(timespec='seconds')} from the run records "
        f"under this folder ({mode}).", "",
        "## Provenance", "",
        f"- code: `{prov['git_commit']}`",
        f"- machine: {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB, {m['os']}, BLAS: {m['blas']}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items()), "",
        "Each claim is a pre-stated test: the paper's sentence, a statistic measured per seed (fold), its "
        "mean and 95% interval over seeds, and a threshold chosen from the paper's text. PASS: the whole "
        "interval lies on the claim's side; FAIL: wholly on the other side; inconclusive: it straddles "
        "the threshold (or too few seeds); not run: the data or runs are missing. A FAIL is a result, "
        "not a defect.", "",
    ]
    rows = []
    for study in studies:
        cpath = ResultsLayout(root).claims(study_slug(study))
        if cpath.is_file() and ResultsLayout(root).status(study_slug(study)).is_file():
            for c in json.loads(cpath.read_text()):
                rows.append(f"| {study} | {c['id']} | **{VERDICT_MARK.get(c['verdict'], c['verdict'])}** |")
    if rows:
        parts += ["## Claims at a glance", "", "| study | claim | verdict |", "|---|---|---|", *rows, ""]
    for study in studies:
        try:
            parts.append(study_section(study, root))
        except Exception as exc:  # noqa: BLE001
            errors[study] = f"{type(exc).__name__}: {exc}"
        if study in errors:
            parts += [f"Building this study's outputs failed: `{_md(errors[study])}`", ""]
    path = ResultsLayout(root).report
    atomic_write_text(path, "\n".join(parts) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="report on the smoke-mode results")
    ap.add_argument("--no-rebuild", action="store_true", help="do not rebuild tables/figures first")
    args = ap.parse_args(argv)
    root = results_root(args.smoke)
    try:
        check_writable(root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    path = write_report(Path(root), rebuild=not args.no_rebuild)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
