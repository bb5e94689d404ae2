"""results/REPORT.md: every figure and table produced so far, each study's claims
with measured values and verdicts, failed runs, and provenance.

    python -m rfrepro.report [--smoke] [--no-rebuild]
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from rfrepro.reproduce import results_root
from rfrepro.results.outputs import build_outputs, failed_runs
from rfrepro.results.store import RecordStore, atomic_write_text
from rfrepro.runner.env import provenance

VERDICT_MARK = {"pass": "PASS", "fail": "FAIL", "not-run": "not run"}


def _studies(root: Path) -> list[str]:
    runs = root / "runs"
    if not runs.is_dir():
        return []
    return sorted(p.name.replace("-", "/", 1) for p in runs.iterdir() if p.is_dir() and any(p.glob("*.json")))


def _fmt_measured(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) < 300 else text[:297] + "..."
    return "-" if value is None else str(value)


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def study_section(study: str, root: Path) -> str:
    slug = study.replace("/", "-")
    table = RecordStore(root, slug).table()
    lines = [f"## {study}", ""]
    if table.empty:
        return "\n".join(lines + ["No runs recorded.", ""])
    title = table.get("study_title")
    counts = table["status"].value_counts().to_dict() if "status" in table else {}
    lines.append(
        f"Runs: {len(table)} ("
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"). Table: `tables/{slug}.parquet`."
    )
    commits = sorted(set(table.get("env.git_commit", pd.Series(dtype=str)).dropna()))
    if commits:
        lines.append(f"Code version(s) of these runs: {', '.join(f'`{c}`' for c in commits)}.")
    if title is not None:
        lines.append("")
    lines.append("")
    for ext in ("png",):
        fig = root / "figures" / f"{slug}.{ext}"
        if fig.is_file():
            lines += [f"![{study}](figures/{slug}.{ext})", ""]
    summary = root / "tables" / f"{slug}.md"
    if summary.is_file():
        lines += [summary.read_text().strip(), ""]
    cpath = root / "claims" / f"{slug}.json"
    if cpath.is_file():
        claims = json.loads(cpath.read_text())
        lines += ["| claim | statement | measured | verdict | note |", "|---|---|---|---|---|"]
        for c in claims:
            lines.append(
                f"| {c['id']} | {_md_escape(c['statement'])} | {_md_escape(_fmt_measured(c.get('measured')))} "
                f"| **{VERDICT_MARK.get(c['verdict'], c['verdict'])}** | {_md_escape(c.get('note', ''))} |"
            )
        lines.append("")
    bad = failed_runs(table)
    if len(bad):
        unavailable = bad[bad["status"] == "unavailable"]
        failed = bad[bad["status"] == "failed"]
        if len(unavailable):
            names = sorted(set(unavailable.get("dataset.name", pd.Series(dtype=str)).dropna()))
            lines += [f"Not run, data unavailable: {', '.join(names)} ({len(unavailable)} runs).", ""]
        if len(failed):
            lines += [f"Failed runs ({len(failed)}; tracebacks in `runs/{slug}/<run_id>.json`):", ""]
            for _, r in failed.head(20).iterrows():
                err = str(r.get("error", "")).splitlines()[0][:200]
                lines.append(f"- `{r['run_id']}` {r.get('arm')} seed={r.get('seed')}: {_md_escape(err)}")
            if len(failed) > 20:
                lines.append(f"- ... and {len(failed) - 20} more")
            lines.append("")
    return "\n".join(lines)


def write_report(root: Path, rebuild: bool = True) -> Path:
    studies = _studies(root)
    if rebuild:
        for study in studies:
            build_outputs(study, root)
    prov = provenance()
    m = prov["machine"]
    parts = [
        "# rfrepro results report",
        "",
        f"Generated {datetime.now(timezone.utc).isoformat(timespec='seconds')} from the run records "
        f"under this folder ({'smoke mode: subsampled, not the papers settings' if root.name == 'smoke' else 'full settings'}).",
        "",
        "## Provenance",
        "",
        f"- code: `{prov['git_commit']}`",
        f"- machine: {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB, {m['os']}, BLAS: {m['blas']}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items()),
        "",
        "Verdicts: PASS / FAIL are measured here, honestly; a FAIL is a result, not a defect. "
        "'not run' means the data or the runs were not available.",
        "",
    ]
    if not studies:
        parts.append("No studies have run yet: try `make demo` or `make reproduce-sun2018-fig1`.")
    summary_rows = []
    for study in studies:
        cpath = root / "claims" / f"{study.replace('/', '-')}.json"
        if cpath.is_file():
            for c in json.loads(cpath.read_text()):
                summary_rows.append(f"| {study} | {c['id']} | **{VERDICT_MARK.get(c['verdict'], c['verdict'])}** |")
    if summary_rows:
        parts += ["## Claims at a glance", "", "| study | claim | verdict |", "|---|---|---|", *summary_rows, ""]
    for study in studies:
        parts.append(study_section(study, root))
    path = root / "REPORT.md"
    atomic_write_text(path, "\n".join(parts) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="report on the smoke-mode results")
    ap.add_argument("--no-rebuild", action="store_true", help="do not rebuild tables/figures first")
    args = ap.parse_args(argv)
    path = write_report(Path(results_root(args.smoke)), rebuild=not args.no_rebuild)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
