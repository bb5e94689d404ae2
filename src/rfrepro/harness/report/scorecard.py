"""What a results folder says, per paper and per study: the one model that REPORT.md and the site render.

Read from the folder alone (saved plans, status, claims, tables, figures,
summaries, records): nothing here composes a config, fingerprints or fetches
data. A study with no saved plan is "not run yet".

>>> p = Paper("x2020", "X (2020)", [Study("x2020/fig1", "x2020-fig1", "Fig. 1", planned=True, status={"n": 2},
...     claims=[{"id": "C1", "verdict": "pass"}, {"id": "C2", "verdict": "fail", "fail_kind": "disagreement"}])])
>>> p.counts["pass"], p.counts["fail"], p.counts["not-comparable"]
(1, 1, 0)
>>> p.verdict_line
'1 of 2 claims pass; 1 fail (1 disagreement): C2 (x2020/fig1, disagreement)'
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rfrepro.harness.catalog import options
from rfrepro.harness.paths import reference_root
from rfrepro.harness.planfile import load_plan
from rfrepro.harness.report.claims import (
    FAIL,
    FAIL_KINDS,
    INCONCLUSIVE,
    NOT_COMPARABLE,
    NOT_RUN,
    PASS,
)
from rfrepro.layout import ResultsLayout, project_root, study_slug
from rfrepro.runner.store import FINISHED, UNAVAILABLE, RecordStore

#: verdicts in the order a scorecard counts them (their owner: rfrepro.harness.report.claims)
VERDICT_ORDER = (PASS, FAIL, INCONCLUSIVE, NOT_COMPARABLE, NOT_RUN)
#: a paper's verdict line names each fail up to this many, else counts them per study and kind
MAX_FAILS_LISTED = 12
#: the study of ``python -m rfrepro`` runs outside any experiment (conf/config.yaml ``study:``)
ADHOC_STUDY = "adhoc/run"
#: the kinds of fail (:func:`fail_kind`)
DISAGREEMENT, LIMITATION, EXTENSION = FAIL_KINDS
#: one line per verdict and per kind of fail: the one text REPORT.md's and the site's index both show
DEFINITIONS = (
    (PASS, "the claim's whole 95% interval over seeds lies on its side of a threshold read from the paper."),
    (FAIL, "the whole interval lies on the other side: a result, not a defect; each fail is a disagreement, "
           "a limitation or an extension, with one line of evidence."),
    (INCONCLUSIVE, "the interval straddles the threshold, or there are too few seeds to tell."),
    (NOT_COMPARABLE, "a number printed in the paper, measured here on substitute data: shown, not judged."),
    (NOT_RUN, "the runs the claim needs are missing; each paper's count links to the reasons (e.g. data "
              "unavailable)."),
    (DISAGREEMENT, "a fail where our evidence, on the paper's data and setting or on a substitute shown not to "
                   "be the cause, is against the claim."),
    (LIMITATION, "a fail with a stated way our data or hardware could change the outcome; the claim says what "
                 "would settle it."),
    (EXTENSION, "a fail of a claim re-tested against a map the paper never compared with: a finding beyond the "
                "paper, not evidence against it."),
)


def claim_sentence(claim: dict) -> str:
    """The paper's sentence a claim tests (its ``paper_text``, else its ``statement``)."""
    return str(claim.get("paper_text") or claim.get("statement") or "")


def by_sentence(items: list, key=claim_sentence) -> list[tuple[str, list]]:
    """Consecutive ``items`` with the same sentence (or other ``key``), grouped: ``[(sentence, [item, ...])]``.

    >>> [(t, [c["id"] for c in g]) for t, g in by_sentence([{"id": "C1", "paper_text": "a"},
    ...     {"id": "C2", "paper_text": "a"}, {"id": "C3", "paper_text": "b"}, {"id": "C4", "paper_text": "a"}])]
    [('a', ['C1', 'C2']), ('b', ['C3']), ('a', ['C4'])]
    """
    groups: list[tuple[str, list]] = []
    for item in items:
        text = key(item)
        if groups and groups[-1][0] == text:
            groups[-1][1].append(item)
        else:
            groups.append((text, [item]))
    return groups


@dataclass
class Study:
    """One study as its outputs say (never recomputed)."""

    id: str
    slug: str
    title: str
    planned: bool
    claims: list[dict] = field(default_factory=list)
    status: dict = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    deviations: list[dict] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    figure: Path | None = None
    summary: str | None = None
    provenance: dict = field(default_factory=dict)
    table: pd.DataFrame | None = None
    roofline: list[dict] = field(default_factory=list)

    code_modules: dict | None = None

    @property
    def stale(self) -> list[str] | None:
        """The modules its runs executed whose source has changed since (None: the same code today).

        ``["code not recorded"]`` for outputs whose plan and provenance name no modules.
        """
        return code_changes(self.code_modules)

    @property
    def ran(self) -> bool:
        """Planned and its outputs built (a status file exists)."""
        return self.planned and bool(self.status)


@dataclass
class Paper:
    """A paper's studies and their claims counted by verdict."""

    id: str
    citation: str
    studies: list[Study]

    def claims(self) -> list[tuple[Study, dict]]:
        return [(s, c) for s in self.studies if s.ran for c in s.claims]

    @property
    def is_paper(self) -> bool:
        """A paper (``<author><year>``), not one of the project's own study groups (the leaderboard, the spine)."""
        return bool(re.fullmatch(r"[a-z]+\d{4}", self.id))

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(cl["verdict"] for _, cl in self.claims())
        return {v: c.get(v, 0) for v in VERDICT_ORDER} | {v: n for v, n in c.items() if v not in VERDICT_ORDER}

    @property
    def fail_kinds(self) -> dict[str, int]:
        """How many fails of each kind (:func:`fail_kind`), kinds in alphabetical order."""
        c = Counter(fail_kind(cl)[0] for _, cl in self.claims() if cl["verdict"] == FAIL)
        return dict(sorted(c.items()))

    @property
    def not_run_reasons(self) -> list[tuple[str, list[tuple[Study, dict]]]]:
        """The not-run claims grouped by their ``reason`` (identical reasons once), in the order first met.

        >>> s = Study("x/f", "x-f", "F", planned=True, status={"n": 1}, claims=[
        ...     {"id": "C1", "verdict": "not-run", "reason": "data unavailable"}, {"id": "C2", "verdict": "pass"},
        ...     {"id": "C3", "verdict": "not-run", "reason": "data unavailable"}, {"id": "C4", "verdict": "not-run"}])
        >>> [(r, [c["id"] for _, c in cs]) for r, cs in Paper("x", "X", [s]).not_run_reasons]
        [('data unavailable', ['C1', 'C3']), ('no reason recorded', ['C4'])]
        """
        out: dict[str, list[tuple[Study, dict]]] = {}
        for s, c in self.claims():
            if c["verdict"] == NOT_RUN:
                reason = " ".join(str(c.get("reason") or c.get("note") or "no reason recorded").split())
                out.setdefault(reason, []).append((s, c))
        return list(out.items())

    @property
    def n_run(self) -> int:
        return sum(s.ran for s in self.studies)

    @property
    def verdict_line(self) -> str:
        """One line: how many claims held, and each fail with whether it disagrees with the paper.

        More than :data:`MAX_FAILS_LISTED` fails are counted per study and kind instead
        (the leaderboard judges about 170 claims); the paper's section lists each.
        """
        claims = self.claims()
        if not claims:
            return "no study run yet" if not self.n_run else "no claim judged yet (the studies run state none)"
        n = self.counts
        text = f"{n['pass']} of {len(claims)} claims pass"
        fails = [(s.id, c["id"], fail_kind(c)[0]) for s, c in claims if c["verdict"] == "fail"]
        if fails:
            text += f"; {len(fails)} fail ({kinds_text(self.fail_kinds)})"
        if len(fails) > MAX_FAILS_LISTED:
            # per study, how many fail and of which kind; each fail is listed in the paper's section
            by_study = Counter((sid, kind) for sid, _, kind in fails)
            text += ": " + ", ".join(f"{k} in {sid} ({kind})" for (sid, kind), k in by_study.items())
        elif fails:
            text += ": " + ", ".join(f"{cid} ({sid}, {kind})" for sid, cid, kind in fails)
        for v in ("inconclusive", "not-comparable", "not-run"):
            if n[v]:
                text += f"; {n[v]} {v}"
        return text


#: what :func:`code_changes` says of outputs whose plan and provenance record no modules
CODE_NOT_RECORDED = "code not recorded"


def code_changes(modules: dict | None) -> list[str] | None:
    """The modules of ``modules`` (path -> git blob id: the code some runs executed) whose source
    differs today, shortest path first without the package prefix; None when none does."""
    from rfrepro.runner.code import changed

    if not modules:
        return [CODE_NOT_RECORDED]
    out = sorted((m.removeprefix("rfrepro/") for m in changed(modules)), key=lambda m: (len(m), m))
    return out or None


def changes_note(changes: list[str], limit: int = 2) -> str:
    """``features/tefm.py``, or ``a.py, b.py +3 more``: the changed modules in a few words."""
    more = len(changes) - limit
    return ", ".join(changes[:limit]) + (f" +{more} more" if more > 0 else "")


def paper_citation(paper: str) -> str:
    """The first line of ``experiments/<paper>/__init__.py``'s docstring (the paper's one owner)."""
    path = project_root() / "experiments" / paper / "__init__.py"
    try:
        doc = ast.get_docstring(ast.parse(path.read_text()))
    except (OSError, SyntaxError):
        doc = None
    return (doc or paper).strip().splitlines()[0]


def _study_file(study: str):
    """The study's config file as written (parsed once per process and file version)."""
    from rfrepro.layout import conf_dir

    path = conf_dir() / "experiment" / f"{study}.yaml"
    return _load_yaml(str(path), path.stat().st_mtime_ns)


@functools.cache
def _load_yaml(path: str, mtime_ns: int):
    from omegaconf import OmegaConf

    return OmegaConf.load(path)


def study_title(study: str) -> str:
    """``study.title`` as written in the study's config file (read as YAML, not composed)."""
    from omegaconf import OmegaConf

    try:
        return str(OmegaConf.select(_study_file(study), "study.title", default=None) or study)
    except Exception:  # noqa: BLE001 - a title is a nicety; the id always works
        return study


def wall_time(study: str) -> str | None:
    """``sweep.wall_time``: the study's measured full-settings wall time, as its config states it."""
    from omegaconf import OmegaConf

    try:
        value = OmegaConf.select(_study_file(study), "sweep.wall_time", default=None)
    except Exception:  # noqa: BLE001
        return None
    return None if value is None else str(value)


def kinds_text(kinds: dict[str, int]) -> str:
    """``{"disagreement": 4, "limitation": 1}`` -> ``"4 disagreement, 1 limitation"``."""
    return ", ".join(f"{k} {kind}" for kind, k in kinds.items())


def fail_kind(claim: dict) -> tuple[str, str]:
    """A fail's kind and what would settle it, as its study's rule set them (rfrepro.harness.report.claims.by_cause).

    The scorecard never derives a kind: a fail written without one reads "unclassified".

    >>> fail_kind({"verdict": "fail", "fail_kind": "limitation", "settle": "a 16-core host"})
    ('limitation', 'a 16-core host')
    >>> fail_kind({"verdict": "fail"})
    ('unclassified', '')
    """
    return claim.get("fail_kind") or "unclassified", claim.get("settle") or ""


def seeds_text(claim: dict) -> str:
    """How many seeds a claim was judged on: "10", "7 of 10 planned", "10 (deterministic)".

    >>> seeds_text({"n_seeds": 7, "n_planned": 10}), seeds_text({"n_seeds": 10, "deterministic": True})
    ('7 of 10 planned', '10, all equal: n = 1 in effect')
    """
    n = claim.get("n_seeds", "-")
    if claim.get("n_planned") is not None and claim["n_planned"] != n:
        return f"{n} of {claim['n_planned']} planned"
    return f"{n}, all equal: n = 1 in effect" if claim.get("deterministic") else str(n)


def run_status(s: Study) -> str:
    """``done``, ``done (k of n runs: data unavailable)``, ``partial (k of n runs finished)`` or ``not run``.

    A run whose dataset could not be had (``unavailable``: not in the mirror,
    no public URL) is as done as it can be where the study ran; it still
    shows as "not run, data unavailable" in the study's outputs.
    """
    if not s.planned:
        return "not run"
    n = len({r.get("run_id") for r in s.plan.get("runs", []) if r.get("run_id")})
    counts = (s.status.get("counts") or {}) if s.status else {}
    ok, unavailable = int(counts.get("ok", 0)), int(counts.get(UNAVAILABLE, 0))
    if n and ok >= n:
        return "done"
    if n and ok and ok + unavailable >= n:
        return f"done ({unavailable} of {n} runs: data unavailable)"
    return f"partial ({ok} of {n} runs finished)"


def reference_state(study: str, root: str | Path, limit: int = 2) -> str:
    """Whether ``<root>/reference`` holds ``study``'s reference and which code made it.

    ``current`` (every module its runs executed is byte-identical today),
    ``older (<changed modules>)`` (those runs would be recomputed; the first
    ``limit`` named) or ``none``.
    """
    saved = _read_json(reference_root(root) / "provenance" / f"{study_slug(study)}.json")
    if not isinstance(saved, dict):
        return "none"
    changes = code_changes(saved.get("code_modules"))
    return f"older ({changes_note(changes, limit)})" if changes else "current"


#: ``make list`` lines fit this many columns (the title is shortened to fit)
LIST_WIDTH = 100


def _short_status(status: str) -> str:
    """``partial (3 of 36 runs finished)`` -> ``partial 3/36``; ``done (2 of 36 runs: ...)`` -> ``done 34/36``."""
    m = re.match(r"(partial|done) \((\d+) of (\d+) runs", status)
    if not m:
        return status
    kind, k, n = m.group(1), int(m.group(2)), int(m.group(3))
    return f"{kind} {k if kind == 'partial' else n - k}/{n}"


def listing(root: str | Path) -> list[str]:
    """``make list``: every study's make target, measured wall time, status under ``root``, reference and title.

    One line per study (its make target is ``make reproduce-<study>``), at
    most :data:`LIST_WIDTH` columns: the wall time's
    leading figure (the study's config states the rest), the status in short
    (``partial 3/36``: runs finished of those planned; ``done 34/36``: the
    others' data unavailable), the reference (``current``, ``older (<first
    changed module> +N)``, ``none``), then the title as far as it fits.
    """
    rows = [("study", "time", "status", "reference", "title")]
    for study in options("experiment"):
        s = load_study(study, root)
        ref = reference_state(study, root, limit=1)
        time = (wall_time(study) or "-").split(" (", 1)[0]
        rows.append((s.slug, time, _short_status(run_status(s)), ref, s.title))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"make reproduce-<study> runs a study; time: measured at full settings on 2 cores; status in {root}"
             [:LIST_WIDTH]]
    for r in rows:
        head = "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  "
        room = LIST_WIDTH - len(head)
        title = r[4] if len(r[4]) <= room else r[4][: max(room - 3, 0)].rstrip() + "..."
        lines.append((head + title).rstrip() if room > 3 else head.rstrip())
    return lines


def provenance(table: pd.DataFrame) -> dict:
    """Commits, code versions, seeds, runs, compute and wall seconds, hosts of a study's finished runs."""
    if table is None or table.empty or "status" not in table:
        return {}
    ok = table[table["status"] == FINISHED]

    def values(col: str) -> list:
        return sorted({str(v) for v in ok[col].dropna()}) if col in ok else []

    span = None
    if len(ok) and "started" in ok and "finished" in ok:
        started = pd.to_datetime(ok["started"], utc=True, errors="coerce")
        finished = pd.to_datetime(ok["finished"], utc=True, errors="coerce")
        span = float((finished.max() - started.min()).total_seconds())
    return {
        "commits": [c[:10] for c in values("env.git_commit")],
        "code_versions": values("code_version"),
        "seeds": sorted({int(s) for s in ok["seed"].dropna()}) if "seed" in ok else [],
        "runs": len(ok),
        "compute_s": float(ok["timings.total_s"].sum()) if "timings.total_s" in ok else None,
        "span_s": span,
        "hosts": values("host"),
    }


def roofline_rows(table: pd.DataFrame | None) -> list[dict]:
    """Per method, its finished runs' transform against the host's roofline (the records' ``roofline``).

    One row per ``method.name``: the split (the training transform, else the test
    transform, else the kernel-error rows', the first its runs timed on its own), the
    runs that recorded it, and the medians over those runs of the predicted
    time, the measured time and their ratio (the fraction of peak). Records
    without a roofline (older records, references, measurement switched off)
    give no row; a table without any gives ``[]``.

    A run above 1 did not do its declared work in the time measured: nothing
    beats the machine's peak, so the transform was served from a cache (the
    exact map keeps its kernel blocks). Such runs are left out of the medians
    and counted in ``above_peak``; a method with no other run gets
    ``fraction`` None.

    >>> t = pd.DataFrame({"status": ["ok"] * 5, "method.name": ["rks", "rks", "rks", "exact", "nystrom"],
    ...     "roofline.predicted_s": [0.1, 0.3, 0.5, 0.4, None], "roofline.measured_s": [1.0, 1.0, 0.1, 0.1, None],
    ...     "roofline.fraction": [0.1, 0.3, 5.0, 4.0, None]})
    >>> [(r["method"], r["runs"], r["above_peak"], r["fraction"] and round(r["fraction"], 2)) for r in roofline_rows(t)]
    [('exact', 0, 1, None), ('rks', 2, 1, 0.2)]
    """
    if table is None or table.empty or "method.name" not in table:
        return []
    ok = table[table["status"] == FINISHED] if "status" in table else table
    rows = []
    for method, runs in ok.groupby("method.name", sort=True):
        for split, prefix in (("train", "roofline."), ("test", "roofline.test."),
                              ("kernel_rows", "roofline.kernel_rows.")):
            cols = [f"{prefix}{k}" for k in ("fraction", "predicted_s", "measured_s")]
            if not all(c in runs for c in cols):
                continue
            got = runs[cols].apply(pd.to_numeric, errors="coerce").dropna()
            if len(got):
                above = got[cols[0]] > 1.0
                med = got[~above].median() if (~above).any() else None
                rows.append({"method": str(method), "split": split, "runs": int((~above).sum()),
                             "above_peak": int(above.sum()),
                             "fraction": None if med is None else float(med[cols[0]]),
                             "predicted_s": None if med is None else float(med[cols[1]]),
                             "measured_s": None if med is None else float(med[cols[2]])})
                break
    return rows


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def load_study(study: str, root: str | Path) -> Study:
    """One study's outputs under ``root``."""
    layout = ResultsLayout(root)
    slug = study_slug(study)
    plan = load_plan(study, root)
    s = Study(id=study, slug=slug, title=(plan or {}).get("title") or study_title(study), planned=plan is not None)
    if plan is None:
        return s
    s.plan = plan
    s.deviations = [d if isinstance(d, dict) else {"what": str(d)} for d in plan.get("deviations") or []]
    s.overrides = list(plan.get("overrides") or [])
    s.status = _read_json(layout.status(slug)) or {}
    s.claims = _read_json(layout.claims(slug)) or []
    if layout.figure(slug).is_file():
        s.figure = layout.figure(slug)
    if layout.summary(slug).is_file():
        s.summary = layout.summary(slug).read_text().strip()
    if layout.table(slug).is_file():
        s.table = pd.read_parquet(layout.table(slug))
        s.provenance = provenance(s.table)
        s.roofline = roofline_rows(s.table)
    saved = _read_json(layout.root / "provenance" / f"{slug}.json")  # a reference's (rfrepro.harness.reference)
    if s.provenance and isinstance(saved, dict) and saved.get("outputs_commit"):
        s.provenance["outputs_commit"] = saved["outputs_commit"]
    s.code_modules = plan.get("code_modules") or (saved or {}).get("code_modules")
    return s


def collect(root: str | Path, studies: list[str] | None = None) -> list[Paper]:
    """Every paper with its studies (all of the project's studies, run or not): the papers
    (``<author><year>``) first, then the project's own studies (the leaderboard, the spine)."""
    by_paper: dict[str, list[Study]] = {}
    for study in studies if studies is not None else options("experiment"):
        by_paper.setdefault(study.split("/", 1)[0], []).append(load_study(study, root))
    papers = [Paper(p, paper_citation(p), studies) for p, studies in by_paper.items()]
    return sorted(papers, key=lambda p: (not p.is_paper, p.id))


def adhoc_runs(root: str | Path) -> pd.DataFrame:
    """One row per ad-hoc run record (``python -m rfrepro`` outside a study), newest first."""
    layout = ResultsLayout(root)
    slug = study_slug(ADHOC_STUDY)
    rows = []
    for r in RecordStore(layout.root, slug).records():
        metrics = r.get("metrics") or {}
        rows.append({
            "started": r.get("started"), "status": r.get("status"),
            "dataset": (r.get("dataset") or {}).get("name"),
            "method": (r.get("method") or {}).get("name"), "model": (r.get("model") or {}).get("name"),
            "n_components": r.get("n_components"), "seed": r.get("seed"),
            "metrics": ", ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, (int, float))),
            "record": layout.record(slug, str(r.get("run_id"))).relative_to(layout.root).as_posix(),
        })
    table = pd.DataFrame(rows)
    return table.sort_values("started", ascending=False, ignore_index=True) if len(table) else table
