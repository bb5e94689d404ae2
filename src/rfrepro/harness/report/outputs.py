"""Build a study's outputs (table, figures, claims) from its own run records alone.

The study's own runs are the run ids of its saved plan (``plans/<slug>.json``,
written by the sweep: config, data fingerprint, code version). Other records
in its folder are never drawn into the paper's figure, table or claims: those
made by a code version no planned run has are counted as runs of older code,
the others (an ad-hoc multirun, other data) as extra runs.
Nothing here composes a config, fingerprints or fetches data.

The study's code lives in ``experiments/<paper>/<item>.py`` (or the module
named by the experiment config's ``study.module``) and may define:

- ``figure(table) -> matplotlib.figure.Figure``: saved as figures/<slug>.png and .pdf
- ``summary(table) -> str``: a markdown table, saved as tables/<slug>.md
- ``claims(table) -> list[dict]``: saved as claims/<slug>.json (see rfrepro.harness.report.claims)

``table`` holds one row per own run that has a record (``status`` ok,
failed or unavailable). With no finished run, the harness draws a "not run"
figure itself and figure() is not called; claims() is, and says not-run.
``table.attrs["results_root"]`` is the results root, against which the
artifact paths in the records (``artifacts.*`` columns) resolve.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

import pandas as pd

from rfrepro.atomic import atomic_replace, atomic_write_text, jsonable
from rfrepro.harness.planfile import load_plan, plan_file
from rfrepro.harness.report.claims import by_cause, check_claims
from rfrepro.layout import ResultsLayout, project_root, study_slug
from rfrepro.runner.store import FINISHED, UNAVAILABLE, RecordStore, records_to_table


def study_module(study: str) -> ModuleType:
    """Import ``experiments/<paper>/<item>.py`` (hyphens in the item become underscores)."""
    paper, item = study.split("/", 1)
    root = project_root()
    path = root / "experiments" / paper / f"{item.replace('-', '_')}.py"
    if not path.is_file():
        raise FileNotFoundError(f"study {study!r} has no module experiments/{paper}/{path.name}")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(f"experiments.{paper}.{path.stem}")


def own_runs(study: str, root: Path, plan: dict | None):
    """(records of the study's own runs, the plan's run ids, every record in the folder).

    The own runs are those of the study's saved plan (``plans/<slug>.json``):
    nothing is composed, fingerprinted or fetched here.
    """
    expected = [r["run_id"] for r in (plan or {}).get("runs", []) if r.get("run_id")]
    records = {r.get("run_id"): r for r in RecordStore(root, study_slug(study)).records()}
    own = [records[rid] for rid in dict.fromkeys(expected) if rid in records]
    return own, expected, records


def not_run_figure(study: str, reason: str):
    import matplotlib.pyplot as plt

    from rfrepro.harness.report.plots import not_run_panel

    fig, ax = plt.subplots(figsize=(6, 3))
    not_run_panel(ax, study, reason)
    return fig


def _reason(table: pd.DataFrame, n_expected: int) -> str:
    if table.empty:
        return f"none of its {n_expected} runs has a record yet"
    counts = table["status"].value_counts().to_dict()
    parts = [f"{v} {k}" for k, v in sorted(counts.items())]
    names = sorted(set(table.loc[table["status"] == UNAVAILABLE, "dataset.name"].dropna())) \
        if "dataset.name" in table else []
    why = f"data unavailable ({', '.join(names)})" if names else "no run finished"
    return f"{why}; runs: {', '.join(parts)}"


def smoke_settings(table: pd.DataFrame, plan: dict | None) -> str:
    """What a smoke sweep actually ran: seeds, data sizes and the swept values (for its figure's banner)."""
    parts = []
    if "seed" in table and table["seed"].notna().any():
        seeds = sorted({int(v) for v in table["seed"].dropna()})
        parts.append(f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}")
    if {"dataset.name", "dataset.n_train"} <= set(table.columns):
        cols = [c for c in ("dataset.n_train", "dataset.n_test") if c in table]
        sizes = table.dropna(subset=["dataset.n_train"]).groupby("dataset.name")[cols].max()
        text = {name: ", ".join(f"{c.split('.')[1]} {int(r[c])}" for c in cols if pd.notna(r[c]))
                for name, r in sizes.iterrows()}
        if len(set(text.values())) == 1 and len(text) > 1:
            parts.append(f"{next(iter(text.values()))} (each of {len(text)} datasets)")
        else:
            parts += [f"{name}: {t}" for name, t in text.items()]
    values: dict[str, list[str]] = {}
    for run in (plan or {}).get("runs", []):
        for o in run.get("overrides") or []:
            key, _, value = o.partition("=")
            # the arms and datasets are the paper's; a smoke sweep shrinks the numeric grid
            if key in ("experiment", "smoke", "seed", "paths.results", "dataset", "method", "model", "arm") \
                    or "${" in value or value in values.setdefault(key, []):
                continue
            values[key].append(value)
    parts += [f"{k} in {{{', '.join(v[:8])}{', ...' if len(v) > 8 else ''}}}" for k, v in values.items()
              if len(v) > 1]
    return "; ".join(parts)


def _save_figure(fig, root: Path, slug: str, written: dict, banner: str | None = None) -> None:
    import textwrap

    import matplotlib.pyplot as plt

    if banner:  # above everything the study drew (its titles give the paper's settings)
        fig.text(0.5, 1.0, "\n".join(textwrap.wrap(banner.replace("$", r"\$"), 150)), ha="center", va="bottom", fontsize=8,
                 color="#b00020", transform=fig.transFigure)

    for ext in ("png", "pdf"):
        fpath = ResultsLayout(root).figure(slug, ext)
        atomic_replace(fpath, lambda tmp, ext=ext: fig.savefig(tmp, dpi=130, bbox_inches="tight", format=ext))
        written[f"figure_{ext}"] = fpath
    plt.close(fig)


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """Digest of everything that draws outputs: the package, the study code, the configs, the libraries."""
    import matplotlib

    root = project_root()
    h = hashlib.sha256(f"pandas {pd.__version__} matplotlib {matplotlib.__version__}".encode())
    files = [*Path(__file__).resolve().parents[1].rglob("*.py"), *(root / "experiments").rglob("*.py"),
             *(root / "conf").rglob("*.yaml")]
    for f in sorted(set(files)):
        h.update(str(f.relative_to(f.parents[2])).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def outputs_key(study: str, root: Path) -> str:
    """What a study's outputs are drawn from: its plan's bytes, its record files (name, size, mtime) and
    the code that draws them (:func:`_code_digest`). Equal keys: the outputs on disk are current."""
    layout = ResultsLayout(root)
    slug = study_slug(study)
    h = hashlib.sha256(_code_digest().encode())
    plan = plan_file(root, study)
    h.update(plan.read_bytes() if plan is not None else b"no plan")
    try:
        entries = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns)
                         for e in os.scandir(layout.study_runs(slug)) if e.name.endswith(".json"))
    except FileNotFoundError:
        entries = []
    h.update(json.dumps(entries).encode())
    return h.hexdigest()


def outputs_current(study: str, root: str | Path, key: str | None = None) -> bool:
    """True when the study's outputs were built from what is on disk now (same key: ``key``, or
    :func:`outputs_key` computed here) and are all still there."""
    root = Path(root)
    try:
        status = json.loads(ResultsLayout(root).status(study_slug(study)).read_text())
    except (OSError, ValueError):
        return False
    if status.get("outputs_key") != (key or outputs_key(study, root)):
        return False
    return all((root / rel).is_file() for rel in status.get("outputs", []))


def build_outputs(study: str, results_root: str | Path, reuse: bool = False) -> dict[str, Path]:
    """Write the table, figure, summary, claims and status of ``study``; return their paths.

    Drawn from the study's saved plan and its records alone (a study never
    planned under ``results_root`` gets not-run outputs). An output function
    that raises does not stop the others: its error is kept in
    ``tables/<slug>.status.json`` (and shown in REPORT.md). ``reuse``: leave
    outputs that are current (:func:`outputs_current`) as they are and return {}.
    """
    root = Path(results_root)
    key = outputs_key(study, root)  # before reading: a record written meanwhile makes the next build redo it
    if reuse and outputs_current(study, root, key):
        return {}
    import matplotlib

    matplotlib.use("Agg")

    slug = study_slug(study)
    layout = ResultsLayout(root)
    plan = load_plan(study, root)
    own, expected, records = own_runs(study, root, plan)
    table = records_to_table(own)
    if table.empty:
        table = pd.DataFrame({"run_id": pd.Series(dtype=str), "status": pd.Series(dtype=str)})
    written: dict[str, Path] = {}
    errors: dict[str, str] = {}

    tpath = layout.table(slug)
    atomic_replace(tpath, lambda tmp: table.to_parquet(tmp, index=False))
    written["table"] = tpath
    table.attrs["results_root"] = str(root)  # for the study's code, not saved with the table

    module = study_module(study)
    n_ok = int((table["status"] == FINISHED).sum())

    def attempt(kind: str, fn):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - one broken output must not hide the others
            errors[kind] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            return None

    if hasattr(module, "figure") or n_ok == 0:
        fig = (attempt("figure", lambda: module.figure(table)) if n_ok and hasattr(module, "figure") else None)
        if fig is None:
            reason = ("not run yet: the study was never planned here (run its sweep)" if plan is None
                      else _reason(table, len(expected))) if n_ok == 0 else \
                "figure failed: " + errors.get("figure", "").splitlines()[0]
            fig = not_run_figure(study, reason)
        banner = None
        if layout.is_smoke:
            banner = ("SMOKE RUN: subsampled, not the paper's settings (titles and labels state the paper's); "
                      "ran: " + (smoke_settings(table, plan) or "-"))
        _save_figure(fig, root, slug, written, banner)
    if hasattr(module, "summary") and n_ok:
        text = attempt("summary", lambda: module.summary(table))
        if text is not None:
            spath = layout.summary(slug)
            atomic_write_text(spath, text)
            written["summary"] = spath
    if hasattr(module, "claims"):
        claims = attempt("claims", lambda: by_cause(module.claims(table)))
        if claims is not None:
            attempt("claims_check", lambda: check_claims(claims, f"{study} claims"))
            written["claims"] = write_claims(layout.claims(slug), claims)
    extra_ids = sorted(set(records) - set(expected))
    # records of code no planned run has (made before an edit of the code they executed): the
    # study's runs of an older (or newer) code version, not runs of other settings
    planned_code = {r.get("code_version") for r in (plan or {}).get("runs") or []}
    other_code = [i for i in extra_ids if records[i].get("code_version") not in planned_code]
    extra_ids = [i for i in extra_ids if i not in set(other_code)]
    status = {
        "study": study, "expected_runs": len(set(expected)), "recorded": len(own),
        "planned": plan is not None,
        "overrides": list((plan or {}).get("overrides") or []),  # a grid changed by `reproduce ... key=value`
        "missing": len(set(expected) - set(records)),
        "counts": table["status"].value_counts().to_dict() if len(table) else {},
        "extra_runs": extra_ids,
        "extra_finished": sum(1 for i in extra_ids if records[i].get("status") == FINISHED),
        "other_code_runs": len(other_code),
        "output_errors": errors,
        "outputs_key": key,
        "outputs": sorted(str(Path(p).relative_to(root)) for p in written.values()),
    }
    spath = layout.status(slug)
    atomic_write_text(spath, json.dumps(jsonable(status), indent=1))
    written["status"] = spath
    return written


def write_claims(path: Path, claims: list[dict]) -> Path:
    """Write a study's judged claims as JSON (atomically)."""
    atomic_write_text(path, json.dumps(jsonable(claims), indent=1, default=_num))
    return path


def rejudge(study: str, table: pd.DataFrame) -> tuple[list[dict], str | None]:
    """``study``'s claims and summary judged anew from its tidy ``table`` by today's study code
    (:func:`by_cause` applied, :func:`check_claims` passed): the outputs that depend on the rule, not
    on the runs."""
    module = study_module(study)
    claims = check_claims(by_cause(module.claims(table)), f"{study} claims") if hasattr(module, "claims") else []
    ok = "status" in table and (table["status"] == FINISHED).any()
    summary = module.summary(table) if hasattr(module, "summary") and ok else None
    return claims, summary


def _num(obj):
    try:
        return float(obj)
    except (TypeError, ValueError):
        return str(obj)


def failed_runs(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty or "status" not in table:
        return table.iloc[0:0]
    return table[table["status"] != FINISHED]
