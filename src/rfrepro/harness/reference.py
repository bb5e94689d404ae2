"""Reference results in the repository: a study's outputs from a full-settings run, without raw records.

    python -m rfrepro.harness.reference <study> [<study> ...]     (make reference STUDY=<study>)

``results/reference/`` is a results root of its own (rfrepro.layout): per
study its saved plan (gzip-compressed, ``plans/<slug>.json.gz``), tidy table, paper-vs-ours table, status, claims and
figure, plus ``provenance/<slug>.json`` (commit, code versions, the modules
its runs executed with their git blob ids, wall time, host, when it was saved),
and ``REPORT.md`` and ``site/`` built from them alone.
No run records, no data: it stays small (the test checks under 20 MB).

Only a full-settings study whose planned runs all finished is saved, save
runs whose data was unavailable (not in the mirror, no public URL), which
its outputs show as not run (a partial or smoke run is refused with one
line, exit 2). A reference is current while every module its runs executed
is byte-identical today; ``make list``, the report and the site name the
modules changed since when one is not. ``--record-code`` records those modules
for a reference saved before they were kept, from its provenance's commits.

``--rejudge`` judges a reference's claims (and writes its summary) anew from
its saved table with today's study code, where only the rule that judges
changed: no run is recomputed, the figure and table stay as saved, the plan
takes the study's deviations as declared today, and the provenance records
the commit that judged (``judged_commit``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from rfrepro.atomic import atomic_replace, atomic_write_text
from rfrepro.harness.paths import reference_root
from rfrepro.harness.planfile import load_plan, write_plan
from rfrepro.harness.report.outputs import rejudge, write_claims
from rfrepro.harness.report.scorecard import load_study, run_status
from rfrepro.harness.run.plan import study_deviations
from rfrepro.harness.run.summary import EXIT_USAGE
from rfrepro.layout import ResultsLayout, default_root, study_slug

#: columns of the tidy table that describe the machine the runs were made on (the mirror and
#: the data folder in an unavailable run's error and URLs tried): the runs' own records keep them
LOCAL_COLUMNS = ("error", "urls_tried")
#: the most the reference folder may weigh (issue: keep it small)
MAX_BYTES = 20 * 2**20


def save_reference(study: str, results: str | Path, dest: str | Path) -> Path:
    """Copy ``study``'s outputs from the results root ``results`` into the reference root ``dest``."""
    src, out = ResultsLayout(results), ResultsLayout(dest)
    s = load_study(study, results)
    if not s.planned:
        raise ValueError(f"{study} has no saved plan under {results}: run `make reproduce-{s.slug}` first")
    if s.plan.get("smoke"):
        raise ValueError(f"{study} under {results} is a smoke run; a reference is a full-settings run")
    if not run_status(s).startswith("done"):
        raise ValueError(f"{study} is {run_status(s)} under {results}; a reference needs every planned run "
                         "(finished, or not run because its data is unavailable)")
    slug = study_slug(study)
    for path_of in ("plan", "table", "summary", "status", "claims", "figure"):
        a, b = getattr(src, path_of)(slug), getattr(out, path_of)(slug)
        if a.is_file():
            b.parent.mkdir(parents=True, exist_ok=True)
            if path_of == "plan":
                compress_plan(a, b)
            elif path_of == "table":
                table = pd.read_parquet(a).drop(columns=list(LOCAL_COLUMNS), errors="ignore")
                atomic_replace(b, lambda tmp, t=table: t.to_parquet(tmp, index=False))
            else:
                shutil.copy2(a, b)
    p = s.provenance
    # the runs' commits made the numbers; the commit at saving drew the table, claims and figure
    doc = {"study": study, "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "outputs_commit": outputs_commit(), "commits": p.get("commits"), "code_versions": p.get("code_versions"),
           "code_modules": s.plan.get("code_modules"), "runs": p.get("runs"),
           "wall_s": p.get("span_s"), "compute_s": p.get("compute_s"), "hosts": p.get("hosts")}
    target = out.root / "provenance" / f"{slug}.json"
    atomic_write_text(target, json.dumps(doc, indent=1))
    return target


def _conf_targets(group: str) -> dict[str, str | None]:
    """``name`` -> ``_target_`` of every option of a config group, read as written (not composed)."""
    from omegaconf import OmegaConf

    from rfrepro.layout import conf_dir

    out = {}
    for path in sorted((conf_dir() / group).glob("*.yaml")):
        node = OmegaConf.load(path)
        out[str(node.get("name", path.stem))] = node.get("_target_")
    return out


def _tree_blobs(commit: str) -> dict[str, str]:
    """``rfrepro/<module>.py`` -> git blob id of every source file at ``commit``."""
    from rfrepro.layout import project_root

    out = subprocess.run(["git", "ls-tree", "-r", commit, "--", "src/rfrepro"], cwd=project_root(),
                         capture_output=True, text=True, timeout=60, check=True).stdout
    blobs = {}
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        blobs[path.removeprefix("src/")] = meta.split()[2]
    return blobs


def code_from_commits(study: str, dest: str | Path) -> dict[str, str]:
    """The code a reference's runs executed, from the commits its provenance names (git needed).

    For a reference saved before plans recorded each run's modules: the
    modules its runs execute are found from its table (each run's method,
    model and whether it cross-validated, today's import closure of those),
    and each module's blob id is read at the provenance's commits (``mixed``
    where two commits differ; a third-party target's version from the runs'
    ``env``). A module whose bytes differ today was changed
    since and makes the reference older, as for any other.
    """
    from omegaconf import OmegaConf

    from rfrepro.runner.code import run_code

    layout = ResultsLayout(dest)
    slug = study_slug(study)
    saved = json.loads((layout.root / "provenance" / f"{slug}.json").read_text())
    commits = saved.get("commits") or []
    if not commits or any("+" in c for c in commits):
        raise ValueError(f"{study}: its provenance names no clean commit ({commits}); re-run it instead")
    table = pd.read_parquet(layout.table(slug))
    ok = table[table["status"] == "ok"]
    methods, models = _conf_targets("method"), _conf_targets("model")
    used_cv = ok["cv.sigma"].notna() if "cv.sigma" in ok else pd.Series(False, index=ok.index)
    modules: dict[str, str] = {}
    for (method, model, cv), _ in ok.assign(_cv=used_cv).groupby(["method.name", "model.name", "_cv"]):
        cfg = OmegaConf.create({"method": {"_target_": methods.get(method)}, "model": {"_target_": models.get(model)},
                                "cv": {"enabled": bool(cv)}})
        modules.update(run_code(cfg).modules)
    trees = [_tree_blobs(c) for c in commits]
    out = {}
    for rel in sorted(modules):
        if rel.endswith(" (installed)"):  # a third-party target: its version, as the runs' env recorded it
            dist = modules[rel].split("==", 1)[0]
            at = {f"{dist}=={v}" for v in ok.get(f"env.versions.{dist}", pd.Series(["unknown"])).dropna()}
        else:
            at = {t.get(rel, "absent") for t in trees}
        out[rel] = at.pop() if len(at) == 1 else "mixed"
    return out


def record_code(study: str, dest: str | Path) -> Path:
    """Write :func:`code_from_commits` into the reference's provenance as ``code_modules``."""
    path = ResultsLayout(dest).root / "provenance" / f"{study_slug(study)}.json"
    doc = json.loads(path.read_text())
    doc["code_modules"] = code_from_commits(study, dest)
    doc["code_modules_from"] = "the provenance's commits (git), recorded after the runs"
    doc.pop("planned_code_version", None)
    atomic_write_text(path, json.dumps(doc, indent=1))
    return path


def rejudge_reference(study: str, dest: str | Path) -> Path:
    """Judge the reference ``study``'s claims anew from its saved table (:func:`rfrepro.harness.report.outputs.rejudge`)."""
    out = ResultsLayout(dest)
    slug = study_slug(study)
    if not out.table(slug).is_file():
        raise ValueError(f"{study} has no reference table under {dest}: save it first (make reference STUDY={study})")
    table = pd.read_parquet(out.table(slug))
    claims, summary = rejudge(study, table)
    plan = load_plan(study, dest)
    if plan is not None:  # the deviations the claims are judged under, as the config declares them today
        plan["deviations"] = study_deviations(study)
        compress_plan(write_plan(dest, study, plan), out.plan(slug))
    if claims:
        write_claims(out.claims(slug), claims)
    if summary is not None:
        atomic_write_text(out.summary(slug), summary)
    path = out.root / "provenance" / f"{slug}.json"
    doc = json.loads(path.read_text())
    doc["judged_commit"] = outputs_commit()
    doc["judged_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    atomic_write_text(path, json.dumps(doc, indent=1))
    return path


def compress_plan(src: Path, plain: Path) -> Path:
    """Write the plan ``src`` as ``<plain>.gz`` (gzip, no timestamp: the same plan gives the same bytes) and
    remove ``plain`` if there. A plan lists every run's overrides and data fingerprint: most of a
    reference's weight, about 10x smaller compressed (rfrepro.harness.planfile.load_plan reads both)."""
    target = plain.with_name(plain.name + ".gz")
    data = gzip.compress(src.read_bytes(), compresslevel=9, mtime=0)
    atomic_replace(target, lambda tmp: Path(tmp).write_bytes(data))
    plain.unlink(missing_ok=True)
    return target


def compress_plans(dest: str | Path) -> int:
    """Compress every plain ``plans/*.json`` of the reference ``dest`` (see :func:`compress_plan`)."""
    plains = sorted((Path(dest) / "plans").glob("*.json"))
    for plain in plains:
        compress_plan(plain, plain)
    return len(plains)


def outputs_commit() -> str:
    """HEAD's first 10 characters, ``+dirty`` when tracked files other than the results folder changed.

    Saving references rewrites tracked files under ``results/reference``: those
    never make the code that drew the outputs dirty.
    """
    from rfrepro.layout import project_root

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=project_root(), capture_output=True, text=True,
                              timeout=10).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return _short((sha or "unknown") + ("+dirty" if dirty else ""))


def _short(commit: str) -> str:
    """``<sha>[+dirty]`` -> the sha's first 10 characters, keeping ``+dirty``."""
    sha, _, dirty = commit.partition("+")
    return sha[:10] + (f"+{dirty}" if dirty else "")


def folder_bytes(root: str | Path) -> int:
    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfrepro.harness.reference", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("studies", nargs="*", help="paper/item (or paper-item); none: rebuild the report and site")
    ap.add_argument("--results", default=None, help="results root the runs are in (default results/)")
    ap.add_argument("--dest", default=None, help="reference root to save into (default <results>/reference)")
    ap.add_argument("--record-code", action="store_true",
                    help="for references saved without the modules their runs executed: read them at the "
                         "provenance's commits (git) instead of saving new outputs")
    ap.add_argument("--rejudge", action="store_true",
                    help="judge the claims and write the summary anew from each reference's saved table with "
                         "today's study code (no run recomputed); no studies: every reference")
    args = ap.parse_args(argv)
    from rfrepro.harness.report.report import write_report
    from rfrepro.harness.run.grid import resolve_study

    results = Path(args.results) if args.results else default_root()
    dest = Path(args.dest) if args.dest else reference_root(results)
    names = args.studies
    if args.rejudge and not names:
        names = sorted(json.loads(p.read_text())["study"] for p in (dest / "provenance").glob("*.json"))
    try:
        for name in names:
            if args.rejudge:
                rejudge_reference(resolve_study(name), dest)
                print(f"judged {name} anew from its saved table")
                continue
            if args.record_code:
                path = record_code(resolve_study(name), dest)
                print(f"recorded the code of {path}")
                continue
            path = save_reference(resolve_study(name), results, dest)
            print(f"saved {path.parent.parent}/*/{path.stem}.*")
    except (ValueError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    compress_plans(dest)  # references saved before plans were kept compressed
    report = write_report(dest, rebuild=False)
    size = folder_bytes(dest)
    print(f"wrote {report} and {ResultsLayout(dest).site / 'index.html'} ({size / 2**20:.1f} MB in {dest})")
    if size > MAX_BYTES:
        print(f"error: {dest} weighs {size / 2**20:.1f} MB, over {MAX_BYTES / 2**20:.0f} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
