"""Where the time of a full reproduction goes: per study, per arm and per phase, from the runs' own timings.

    .venv/bin/python scripts/time_budget.py [--results results/reference] [--studies 'leaderboard-*'] [--arms 3]
                                            [--cores 2] [--write docs/performance.md]

Reads each study's tidy table (``tables/<slug>.parquet``, one row per run with
its ``timings.*``) and, where the results folder is a reference, its
provenance (``provenance/<slug>.json``: the sweep's wall time). Prints one
markdown table per level:

- per study: finished runs, the span of its runs (first start to last finish: a
  study that reused another's runs, or was resumed after a pause, spans both,
  so ``make list`` owns the study's wall time), the summed compute
  time of its runs (``timings.total_s``) and the share of that compute in each
  phase: data loading, map fit, transform (training rows, ``fit_transform_s``
  where a map fits and transforms in one pass, and the kernel-error rows),
  model training, test transform + predict, inner cross-validation, the
  exact-kernel reference (kernel error, kernel images), the repetitions of a
  timing study beyond the fastest (``eval.time_repeats``), and ``other`` (the
  rest of a run: its own config, the map's untimed warm-up, scoring);
- ``all``: the same over every study, each computation counted once;
- per study, its ``--arms`` most expensive arms with their compute time;
- the least wall time the ``all`` row's compute needs on ``--cores`` cores
  (its compute over the cores, as if every core were busy all the time), and
  the same without its largest phase: what making that phase free would leave;
- the same least wall time per paper, as the make targets run its studies: one
  after another, each on at most ``--cores`` cores, and on one core where the
  study's config says its runs are timed against each other (``sweep.max_jobs:
  1``), so that such a study's compute counts whole; then the same for the five
  papers together (what ``make reproduce-all`` runs; ``make leaderboard`` and the
  spine study are apart from it).

``--studies`` keeps the studies whose slug matches a shell pattern (e.g.
``'leaderboard-*'`` for what ``make leaderboard`` runs).

Nothing is timed here: it adds up what the runs recorded, so it is the same on
any machine. ``--write`` also saves the tables into a markdown file between
the markers ``<!-- time-budget:begin -->`` and ``<!-- time-budget:end -->``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

#: phase -> the timings columns it sums (a column absent from a table counts 0); the map's transform of
#: the kernel-error rows is counted as a transform, not as the kernel reference that contains it
PHASES = {
    "load": ("timings.load_s",),
    "fit": ("timings.fit_s",),
    "transform": ("timings.transform_train_s", "timings.fit_transform_s", "timings.transform_kernel_rows_s"),
    "train": ("timings.train_s", "timings.final_fit_s"),
    "test": ("timings.transform_test_s", "timings.predict_test_s"),
    "cv": ("timings.cv_s",),
    "kernel ref": ("timings.kernel_error_s", "timings.kernel_image_s"),
}
#: columns inside another phase's column (subtracted from it)
NESTED = {"kernel ref": ("timings.transform_kernel_rows_s",)}
#: the repeated timings of eval.time_repeats (lists per step): their cost beyond the fastest one
REPEATS = ("timings_repeats.fit_s", "timings_repeats.transform_train_s", "timings_repeats.fit_transform_s",
           "timings_repeats.train_s", "timings_repeats.final_fit_s")
NAMES = [*PHASES, "repeats", "other"]
#: the papers ``make reproduce-all`` leaves out (the Makefile's ``PAPER_STUDIES``)
APART = ("leaderboard", "spine")
BEGIN, END = "<!-- time-budget:begin -->", "<!-- time-budget:end -->"


def _col(table: pd.DataFrame, col: str) -> pd.Series:
    return table[col].fillna(0).astype(float) if col in table else pd.Series(0.0, index=table.index)


def _extra_repeats(v) -> float:
    """Seconds of a step's repetitions beyond the fastest (which the step's own timing keeps)."""
    if isinstance(v, str):  # the tidy table keeps a list as its JSON text
        v = json.loads(v)
    try:
        seen = [float(x) for x in v]
    except TypeError:  # NaN: the run did not repeat this step
        return 0.0
    return sum(seen) - min(seen) if seen else 0.0


def phase_columns(table: pd.DataFrame) -> pd.DataFrame:
    """Per finished run: seconds per phase; ``other`` = total - the phases (>= 0), ``total`` = timings.total_s."""
    ok = table[table["status"] == "ok"] if "status" in table else table
    out = pd.DataFrame(index=ok.index)
    for name, cols in PHASES.items():
        out[name] = sum(_col(ok, c) for c in cols) - sum(_col(ok, c) for c in NESTED.get(name, ()))
    out["repeats"] = sum(ok[c].map(_extra_repeats) if c in ok else 0.0 for c in REPEATS)
    out["total"] = _col(ok, "timings.total_s")
    out["other"] = (out["total"] - out[[*PHASES, "repeats"]].sum(axis=1)).clip(lower=0)
    for c in ("arm", "compute_id"):
        out[c] = ok[c].fillna("-") if c in ok else "-"
    return out


def _tables(results: Path, pattern: str):
    """(slug, its finished runs' phases, its provenance wall time or None) per tidy table matching ``pattern``."""
    for path in sorted((results / "tables").glob("*.parquet")):
        slug = path.stem
        if not fnmatch.fnmatchcase(slug, pattern):
            continue
        table = pd.read_parquet(path)
        if table.empty or "timings.total_s" not in table:
            continue
        prov = results / "provenance" / f"{slug}.json"
        wall = json.loads(prov.read_text()).get("wall_s") if prov.is_file() else None
        yield slug, phase_columns(table), wall


def _once(runs: list[pd.DataFrame]) -> pd.DataFrame:
    """The runs with each computation once (runs that several studies share, by ``compute_id``)."""
    allruns = pd.concat(runs)
    return pd.concat([allruns[allruns["compute_id"] == "-"],
                      allruns[allruns["compute_id"] != "-"].drop_duplicates("compute_id")])


def budget(results: Path, pattern: str = "*") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(seconds per phase per study, compute per study x arm) for the tables under ``results`` whose slug
    matches ``pattern``, and a last study row ``all`` counting each computation once (runs that several
    studies share count once)."""
    studies, arms, every = [], [], []
    for slug, runs, wall in _tables(results, pattern):
        every.append(runs)
        studies.append({"study": slug, "runs": len(runs), "wall_s": wall, **runs[[*NAMES, "total"]].sum()})
        for arm, part in runs.groupby("arm"):
            arms.append({"study": slug, "arm": arm, "runs": len(part), "compute_s": part["total"].sum()})
    studies = pd.DataFrame(studies)
    if len(studies):
        once = _once(every)
        # no span: the studies' spans overlap where one reused another's runs
        studies = pd.concat([studies, pd.DataFrame([{"study": "all", "runs": len(once), "wall_s": None,
                                                     **once[[*NAMES, "total"]].sum()}])], ignore_index=True)
    return studies, pd.DataFrame(arms)


def study_compute(results: Path, pattern: str = "*", papers: Iterable[str] | None = None) -> pd.DataFrame:
    """Compute seconds per study (columns ``study``, ``paper``, ``compute_s``), in slug order.

    A computation that several studies share counts once, in the first of them: within each paper, or,
    with ``papers``, across those papers' studies together (the others are left out).
    """
    rows, seen = [], {}
    keep = None if papers is None else set(papers)
    for slug, runs, _ in _tables(results, pattern):
        paper = slug.split("-", 1)[0]
        if keep is not None and paper not in keep:
            continue
        ids = seen.setdefault("all" if keep is not None else paper, set())
        shared = runs["compute_id"] != "-"
        new = pd.concat([runs[~shared], runs[shared & ~runs["compute_id"].isin(ids)].drop_duplicates("compute_id")])
        ids.update(runs.loc[shared, "compute_id"])
        rows.append({"study": slug, "paper": paper, "compute_s": float(new["total"].sum())})
    return pd.DataFrame(rows, columns=["study", "paper", "compute_s"])


def max_jobs(slug: str) -> int | None:
    """The study's ``sweep.max_jobs`` from its config (None: unlimited, or no config of this checkout names it)."""
    from rfrepro.harness.run.grid import max_jobs as study_max_jobs

    paper, _, item = slug.partition("-")
    try:
        return study_max_jobs(f"{paper}/{item}")
    except ValueError:  # an unknown experiment
        return None


def least_wall_s(studies: pd.DataFrame, cores: int, limits: Mapping[str, int | None]) -> tuple[float, float]:
    """(least wall seconds, the part of it on one core) of ``studies`` (:func:`study_compute`) run one after
    another, each on ``min(cores, limits[study])`` cores (a missing or None limit: ``cores``).

    >>> s = pd.DataFrame({"study": ["p-a", "p-b"], "paper": ["p", "p"], "compute_s": [600.0, 600.0]})
    >>> least_wall_s(s, 2, {"p-b": 1})
    (900.0, 600.0)
    """
    use = [min(cores, limits.get(slug) or cores) for slug in studies["study"]]
    wall = studies["compute_s"] / use
    return float(wall.sum()), float(wall[[u == 1 for u in use]].sum()) if cores > 1 else 0.0


def paper_floor(studies: pd.DataFrame, cores: int, limits: Mapping[str, int | None],
                together: pd.DataFrame | None = None) -> str:
    """One line: the least wall time of each paper's studies (:func:`study_compute`) on ``cores`` cores, as
    the make targets run them (:func:`least_wall_s`), with the part of it on one core, then that of
    ``together`` (the studies ``make reproduce-all`` runs, each computation once), when given.

    >>> s = pd.DataFrame({"study": ["p-a", "p-b", "q-c"], "paper": ["p", "p", "q"],
    ...                   "compute_s": [600.0, 600.0, 7200.0]})
    >>> print(paper_floor(s, 2, {"p-b": 1}, together=s[s["paper"] == "p"]))
    Per paper, at least: p 15 min (10 of them one run at a time), q 60 min; make reproduce-all's studies 15 min (10 one run at a time).
    """
    def fmt(part: pd.DataFrame) -> tuple[str, str]:
        wall, serial = least_wall_s(part, cores, limits)
        return f"{wall / 60:.0f} min", f"{serial / 60:.0f}" if serial else ""

    parts = []
    for paper, part in studies.groupby("paper", sort=True):
        total, serial = fmt(part)
        parts.append(f"{paper} {total}" + (f" ({serial} of them one run at a time)" if serial else ""))
    line = "Per paper, at least: " + ", ".join(parts)
    if together is not None and len(together):
        total, serial = fmt(together)
        line += f"; make reproduce-all's studies {total}" + (f" ({serial} one run at a time)" if serial else "")
    return line + "."


def _s(v) -> str:
    return "-" if v is None or pd.isna(v) else f"{v:,.0f}"


def markdown(studies: pd.DataFrame, arms: pd.DataFrame, top: int = 3) -> str:
    lines = ["| study | runs | span (s) | compute (s) | " + " | ".join(NAMES) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(NAMES)]
    body = studies[studies["study"] != "all"].sort_values("total", ascending=False)
    for _, r in pd.concat([body, studies[studies["study"] == "all"]]).iterrows():
        share = [f"{100 * r[n] / r['total']:.0f}%" if r["total"] else "-" for n in NAMES]
        name = "**all** (a computation shared by studies counted once)" if r["study"] == "all" else r["study"]
        lines.append(f"| {name} | {r['runs']} | {_s(r['wall_s'])} | {_s(r['total'])} | " + " | ".join(share) + " |")
    lines += ["", "| study | most expensive arms (compute s, runs) |", "|---|---|"]
    for slug, part in arms.groupby("study", sort=False):
        best = part.sort_values("compute_s", ascending=False).head(top)
        lines.append(f"| {slug} | " + "; ".join(f"{a['arm']} {_s(a['compute_s'])} s ({a['runs']})"
                                               for _, a in best.iterrows()) + " |")
    return "\n".join(lines) + "\n"


def floor(studies: pd.DataFrame, cores: int) -> str:
    """One line: the least wall time of the ``all`` row's compute on ``cores`` cores, and without its largest phase.

    >>> row = {"study": "all", "total": 7200.0, **{n: 0.0 for n in NAMES}, "train": 4800.0}
    >>> floor(pd.DataFrame([row]), 2)
    'On 2 cores this compute needs at least 60 min of wall time; at least 20 min if its largest phase (train, 67%) cost nothing.'
    """
    every = studies[studies["study"] == "all"].iloc[0]
    top = max(NAMES, key=lambda n: every[n])
    on = f"On {cores} core{'s' if cores != 1 else ''}"
    return (f"{on} this compute needs at least {every['total'] / cores / 60:.0f} min of wall time; "
            f"at least {(every['total'] - every[top]) / cores / 60:.0f} min if its largest phase ({top}, "
            f"{100 * every[top] / every['total']:.0f}%) cost nothing.")


def write_between_markers(path: Path, text: str) -> None:
    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        raise ValueError(f"{path} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    path.write_text(head + BEGIN + "\n" + text + rest[rest.index(END):])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default="results/reference", help="a results root (default: the reference)")
    ap.add_argument("--studies", default="*", help="only the studies whose slug matches this shell pattern")
    ap.add_argument("--arms", type=int, default=3, help="arms listed per study")
    ap.add_argument("--cores", type=int, default=2, help="cores of the least-wall-time line (default 2)")
    ap.add_argument("--write", type=Path, help="also write the tables into this markdown file, between markers")
    args = ap.parse_args(argv)
    results = Path(args.results)
    if not (results / "tables").is_dir():
        print(f"error: {results} has no tables/ (a results root, e.g. results/reference)", file=sys.stderr)
        return 2
    if args.cores < 1:
        print(f"error: --cores must be at least 1, got {args.cores}", file=sys.stderr)
        return 2
    studies, arms = budget(results, args.studies)
    if studies.empty:
        print(f"error: no table under {results / 'tables'} matching {args.studies!r} has run timings",
              file=sys.stderr)
        return 2
    per_study = study_compute(results, args.studies)
    limits = {slug: max_jobs(slug) for slug in per_study["study"]}
    papers = sorted(set(per_study["paper"]) - set(APART))
    text = (markdown(studies, arms, args.arms) + "\n" + floor(studies, args.cores) + "\n"
            + paper_floor(per_study, args.cores, limits,
                          together=study_compute(results, args.studies, papers=papers)) + "\n")
    print(text, end="")
    if args.write:
        write_between_markers(args.write, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
