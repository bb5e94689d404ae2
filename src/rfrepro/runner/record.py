"""One run -> one record: identity, lock, reuse of the same computation, the record file.

:func:`run_and_record` runs :func:`rfrepro.runner.steps.execute` unless a
finished record of the same computation exists, and leaves exactly one
record whatever happens (``ok``, ``failed`` with its traceback,
``unavailable``, ``refused``).
"""

from __future__ import annotations

import os
import signal
import socket
import traceback
from datetime import datetime, timezone

from omegaconf import DictConfig, OmegaConf

from rfrepro.atomic import atomic_write_text
from rfrepro.data import DatasetUnavailable, fingerprint
from rfrepro.layout import ResultsLayout, study_slug
from rfrepro.models.kernel_ridge import MemoryBudgetExceeded
from rfrepro.runner.code import run_code
from rfrepro.runner.cores import run_round_trip
from rfrepro.runner.env import provenance
from rfrepro.runner.identity import identities
from rfrepro.runner.steps import execute
from rfrepro.runner.store import BUSY, FAILED, FINISHED, REFUSED, UNAVAILABLE, RecordStore


def _public(node: dict) -> dict:
    return {k: v for k, v in node.items() if k != "_target_"}


def _reusable(root, cid: str) -> dict | None:
    pointer = ResultsLayout(root).compute_pointer(cid)
    try:
        slug_, rid = pointer.read_text().strip().split("/", 1)
    except (OSError, ValueError):
        return None
    rec = RecordStore(root, slug_).read(rid)
    return rec if rec is not None and rec.get("status") == FINISHED and rec.get("compute_id") == cid else None


def identify(cfg: DictConfig) -> tuple[str, str, dict, DatasetUnavailable | None]:
    """(run id, compute id, data fingerprint, unavailability) of ``cfg``.

    The data fingerprint needs the data files (fetched if absent); when they
    cannot be had, the identity says so (``{"unavailable": name}``) and the
    error is returned to be recorded. The code in the identity is the code
    the run can execute (:func:`rfrepro.runner.code.run_code`), not the whole package.
    """
    try:
        fp = fingerprint(cfg.dataset, data_dir=cfg.paths.data, mirror=cfg.mirror)
        err = None
    except DatasetUnavailable as exc:
        fp, err = {"unavailable": cfg.dataset.get("name")}, exc
    rid, cid = identities(cfg, fp, code=run_code(cfg).version)
    return rid, cid, fp, err


def _base_record(cfg: DictConfig, rid: str, cid: str, fp: dict) -> dict:
    resolved = OmegaConf.to_container(cfg, resolve=True)
    base = {
        "run_id": rid,
        "compute_id": cid,
        "paper": cfg.study.paper,
        "figure": cfg.study.item,
        "study": f"{cfg.study.paper}/{cfg.study.item}",
        "arm": cfg.arm or f"{cfg.method.name}+{cfg.model.name}",
        "seed": int(cfg.seed),
        "smoke": bool(cfg.smoke),
        "method": _public(resolved["method"]),
        "model": _public(resolved["model"]),
        "eval": resolved["eval"],
        "dtype": str(cfg.dtype),
        "data_fingerprint": fp,
        "code_version": run_code(cfg).version,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "env": provenance(),
        "executor": os.environ.get("RFREPRO_EXECUTOR", "local"),
        "host": socket.gethostname(),
        "host_load": {"start_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count()},
        "config": resolved,
    }
    base["n_components"] = base["method"].get("n_components")
    return base


def record_failure(cfg: DictConfig, ident: tuple, cause: str) -> dict:
    """Write a ``failed`` record for a run that could not report itself (e.g. its worker died)."""
    rid, cid, fp, _ = ident
    store = RecordStore(cfg.paths.results, study_slug(cfg))
    rec = {**_base_record(cfg, rid, cid, fp), "status": FAILED, "error": cause,
           "error_type": cause.split(" (", 1)[0].split(":", 1)[0],
           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    store.write(rec)
    return rec


def _parent_alive(parent: int | None) -> bool:
    return parent is None or os.getppid() == parent


def run_and_record(cfg: DictConfig, store: RecordStore | None = None, *, ident=None,
                   parent: int | None = None, host_peaks: dict | None = None) -> dict:
    """Run ``cfg`` unless a finished record of the same computation exists; leave one record.

    A run that raises leaves a ``failed`` record with its traceback (or
    ``unavailable`` when its data cannot be had, ``refused`` when it needs more
    memory than its ``max_memory_gb`` budget); none counts as finished,
    so the next sweep tries it again. A run another process is computing
    (its lock is held) is not started: the result says ``busy``. ``parent``:
    the pid of the sweep that started this worker; if it has died the
    record is not written (no orphan keeps writing). ``host_peaks``: the
    host's peak rates, measured by the caller, for the record's ``roofline``.
    """
    store = store or RecordStore(cfg.paths.results, study_slug(cfg))
    rid, cid, fp, unavailable = ident or identify(cfg)
    if not cfg.force and store.is_finished(rid):
        rec = store.read(rid)
        rec["_skipped"] = True
        return rec
    lock = store.lock(rid)
    if not lock.acquire():
        return {"run_id": rid, "status": BUSY, "arm": cfg.arm, "study": f"{cfg.study.paper}/{cfg.study.item}"}
    with lock:
        if not cfg.force and store.is_finished(rid):  # finished by another process meanwhile
            rec = store.read(rid)
            rec["_skipped"] = True
            return rec
        base = _base_record(cfg, rid, cid, fp)
        previous = store.read(rid)
        if previous is not None and previous.get("status") == FAILED:  # keep the trace of a retry
            base["previous_attempt"] = {k: previous.get(k) for k in ("error", "finished", "executor")}
        source = None if cfg.force else _reusable(cfg.paths.results, cid)
        if source is not None:
            keep = {k: source[k] for k in ("metrics", "fitted", "timings", "memory", "dataset", "kernel", "cv",
                                           "threads", "started", "finished", "env", "warnings", "host_load",
                                           "timings_repeats", "roofline")
                    if k in source}
            rec = {**base, **keep, "status": FINISHED,
                   "reused_from": f"{source['paper']}-{source['figure']}/{source['run_id']}"}
            store.write(rec)
            return rec
        near_start = None
        if unavailable is not None:
            body, status = {"dataset": {"name": cfg.dataset.get("name")}}, UNAVAILABLE
            extra = {"error": f"{type(unavailable).__name__}: {unavailable}",
                     "error_type": type(unavailable).__name__, "urls_tried": list(unavailable.urls)}
        else:
            near_start = run_round_trip(cfg.get("threads"))
            try:
                body, status, extra = execute(cfg, fp, rid, host_peaks), FINISHED, {}
            except Exception as exc:  # noqa: BLE001 - every failure must leave a record
                status = (UNAVAILABLE if isinstance(exc, DatasetUnavailable)
                          else REFUSED if isinstance(exc, MemoryBudgetExceeded) else FAILED)
                body = {"dataset": {"name": cfg.dataset.get("name")}}
                extra = {"error": f"{type(exc).__name__}: {exc}", "error_type": type(exc).__name__,
                         "traceback": traceback.format_exc()}
                if isinstance(exc, DatasetUnavailable):
                    extra["urls_tried"] = list(exc.urls)
        rec = {**base, **body, **extra, "status": status,
               "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if status == FINISHED:  # how busy the host was: the context of every time in the record
            rec["host_load"] = {"start_1min": base["host_load"]["start_1min"],
                                "end_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count()}
            if near_start is not None:  # how far apart the threads' cores were (rfrepro.runner.cores)
                rec["host_load"]["core_round_trip_ns"] = {"start": near_start,
                                                          "end": run_round_trip(cfg.get("threads"))}
            if "sigma" in rec["method"] and "kernel" in body:  # the number used, not the rule
                rec["method"]["sigma"] = body["kernel"]["sigma"]
        if not _parent_alive(parent):  # the sweep is gone: write nothing, stop
            os.kill(os.getpid(), signal.SIGTERM)
        if status != FINISHED and previous is not None and previous.get("status") == FINISHED:
            # a forced rerun that did not finish leaves the finished record in place, with a note
            previous["forced_rerun"] = {k: rec.get(k) for k in ("status", "error", "error_type", "finished")}
            store.write(previous)
            return rec
        store.write(rec)
        if status == FINISHED:
            atomic_write_text(ResultsLayout(cfg.paths.results).compute_pointer(cid), f"{store.slug}/{rid}")
    return rec
