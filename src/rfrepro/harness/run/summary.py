"""What a sweep did, in a few lines, and the exit status that tells the truth.

Exit statuses of ``python -m rfrepro.reproduce`` (and so of ``make reproduce-*``):

====  =====================================================================
0     every run finished (now or before)
1     at least one run failed (its record has the error and traceback)
2     bad input: unknown study, dataset or method, bad value, unwritable path
3     no run failed, but some were not run: data unavailable, refused by
      the memory budget (``max_memory_gb``), or another process is
      computing them (run the command again when it is done)
====  =====================================================================

A sweep that runs out of disk space (``ENOSPC``, or ``EDQUOT`` for a quota)
stops starting runs and exits 1 with one line (:func:`disk_full_line`) instead
of the summary; the runs finished so far are kept and the same command resumes.

``python -m rfrepro`` (one run, or a Hydra multirun) exits with the same
statuses; a multirun ends with the same summary.
"""

from __future__ import annotations

from collections import Counter

from rfrepro.harness.paths import DISK_FULL_ERRNOS
from rfrepro.layout import ResultsLayout, study_slug
from rfrepro.runner.store import BUSY, FAILED, FINISHED, REFUSED, UNAVAILABLE

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_RUN = 0, 1, 2, 3
MIRROR_HELP = ("ways out: export RFREPRO_MIRROR=<base URL> (http:// or file:// base of a `wget --mirror` "
               "copy of the official URLs), or add mirror=<base URL> to the command "
               '(make reproduce-*: ARGS="mirror=<base URL>")')


def mirror_help(mirror: str | None) -> str:
    """The way out for unavailable data: set a mirror, or (one was tried) what that mirror lacks."""
    if not mirror:
        return MIRROR_HELP
    return (f"the files are not in the mirror that was tried ({mirror}): put them there under the official "
            "URLs' paths (the layout of `wget --mirror`), or set RFREPRO_MIRROR / mirror= to a mirror "
            "that has them")


def failed_on_full_disk(row: dict) -> bool:
    """Whether a run's result row is a failure caused by a full disk (its record says ``[Errno 28] ...``)."""
    if row.get("status") != FAILED:
        return False
    error = str(row.get("error") or "")
    return any(f"[Errno {code}]" in error for code in DISK_FULL_ERRNOS)


def run_row(rec: dict) -> dict:
    """What the console summary needs of a record (a sweep's result row)."""
    out = {k: rec.get(k) for k in ("status", "arm", "run_id", "error", "error_type", "_skipped", "urls_tried",
                                   "reused_from")}
    out["dataset"] = (rec.get("dataset") or {}).get("name")
    out["mirror"] = (rec.get("config") or {}).get("mirror")  # the mirror this run tried, if any
    return out


def first_line(text, limit: int = 300) -> str:
    """The first line of an error message, at most ``limit`` characters ("" for none)."""
    lines = str(text or "").splitlines()
    return lines[0][:limit] if lines else ""


def status_of(res: dict) -> str:
    return "skipped (finished before)" if res.get("_skipped") else str(res.get("status"))


def exit_code(results: list[dict]) -> int:
    statuses = {r.get("status") for r in results}
    if FAILED in statuses:
        return EXIT_FAILED
    if statuses - {FINISHED}:
        return EXIT_NOT_RUN
    return EXIT_OK


def summarize(study: str, results: list[dict], results_root: str) -> list[str]:
    """Lines for the console: counts per status, each failure, each unavailable dataset once."""
    counts = Counter(status_of(r) for r in results)
    lines = [f"{study}: {len(results)} runs: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
    layout = ResultsLayout(results_root)
    for r in results:
        if r.get("status") == FAILED:
            record = layout.record(study_slug(study), str(r["run_id"]))
            where = ("no record (the config did not compose)" if not r.get("run_id")
                     # a killed process leaves no traceback: the record says so
                     else f"record {record}; no traceback, the process was killed (e.g. out of memory)"
                     if str(r.get("error") or "").startswith("worker died") else f"traceback in {record}")
            err = first_line(r.get("error"))
            lines.append(f"  FAILED {r.get('arm')} {r.get('run_id')}: {r.get('error_type') or ''} "
                         f"{err} ({where})")
    unavailable: dict[str, list[str]] = {}
    for r in results:
        if r.get("status") == UNAVAILABLE:
            unavailable.setdefault(str(r.get("dataset")), [])
            for u in r.get("urls_tried") or []:
                if u not in unavailable[r.get("dataset") or "None"]:
                    unavailable[str(r.get("dataset"))].append(u)
    for name, urls in sorted(unavailable.items()):
        n = sum(1 for r in results if r.get("status") == UNAVAILABLE and str(r.get("dataset")) == name)
        lines.append(f"  NOT RUN ({n} runs): dataset {name} unavailable; URLs tried: "
                     + (", ".join(urls) if urls else "none (no public URL: see the dataset config)"))
    if unavailable:
        mirrors = sorted({str(r["mirror"]) for r in results if r.get("status") == UNAVAILABLE and r.get("mirror")})
        lines.append(f"  {mirror_help(', '.join(mirrors))}")
    refused = [r for r in results if r.get("status") == REFUSED]
    if refused:
        lines.append(f"  NOT RUN ({len(refused)} runs): over the memory budget, e.g. {refused[0].get('arm')}: "
                     f"{first_line(refused[0].get('error'))} (raise model.max_memory_gb= where the machine has "
                     "the memory)")
    busy = counts.get(BUSY, 0)
    if busy:
        lines.append(f"  NOT RUN ({busy} runs): another process holds their lock; run again when it is done")
    return lines
