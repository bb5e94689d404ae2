"""Where a study's planned runs go: a local process pool (loky) or a Dask cluster.

A worker that dies costs its run one ``failed`` record and one retry, alone,
after the others; the sweep that started the workers can be killed without
leaving orphans that keep writing. A full disk (or quota) stops the sweep:
no run is started after it, and :class:`~rfrepro.harness.paths.DiskFull` says
how many runs finished and are kept.
"""

from __future__ import annotations

from tqdm.auto import tqdm

from rfrepro.harness.paths import DiskFull, is_disk_full
from rfrepro.harness.run.grid import max_jobs
from rfrepro.harness.run.plan import Planned, plan, save_plan
from rfrepro.harness.run.summary import failed_on_full_disk, run_row
from rfrepro.layout import study_slug

_WATCHDOG: list[int] = []


def _watch_parent(parent: int) -> None:
    """In a pool worker: exit as soon as the sweep that started it is gone."""
    if _WATCHDOG:
        return
    _WATCHDOG.append(parent)
    import os
    import threading
    import time

    def loop():
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(0.2)

    threading.Thread(target=loop, daemon=True, name="rfrepro-parent-watchdog").start()


def run_planned(p: Planned, parent: int | None = None, executor: str = "local") -> dict:
    """Run one planned run in this process and return its summary (the record is written)."""
    import os

    from rfrepro.harness.run.roofline import host_peaks
    from rfrepro.runner.record import run_and_record

    if parent is not None:
        _watch_parent(parent)
    os.environ["RFREPRO_EXECUTOR"] = executor
    return run_row(run_and_record(p.cfg, ident=p.ident, parent=parent, host_peaks=host_peaks()))


def _worker_died(p: Planned, exc: BaseException, attempt: int) -> dict:
    from rfrepro.runner.record import record_failure

    cause = f"worker died ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    rec = record_failure(p.cfg, p.ident, cause + (", retrying" if attempt < 2 else ", after one retry"))
    return run_row(rec)


def _disk_row(p: Planned, exc: BaseException) -> dict:
    """The result row of a run stopped by a full disk (its record could not be written)."""
    from rfrepro.runner.store import FAILED

    return {"status": FAILED, "arm": p.job.arm, "run_id": p.run_id, "error_type": type(exc).__name__,
            "error": f"{type(exc).__name__}: {exc}"}


def _kept(planned: list[Planned]) -> tuple[int, int]:
    """(runs of ``planned`` with a finished record, planned runs): what a full disk leaves."""
    from rfrepro.runner.store import RecordStore

    done = sum(1 for p in planned if p.cfg is not None and p.run_id is not None
               and RecordStore(p.cfg.paths.results, study_slug(p.cfg)).is_finished(p.run_id))
    return done, len(planned)


def _pool(jobs: int):
    """The loky pool of ``jobs`` workers, reused while this process's ``RFREPRO_*`` variables are unchanged.

    A worker keeps the environment it started with and run configs read
    paths and the mirror from it (``${oc.env:RFREPRO_DATA}``), so a caller
    that changes them between two sweeps (a test, a notebook) gets new workers.
    """
    import os

    from joblib.externals.loky import get_reusable_executor

    env = {k: v for k, v in sorted(os.environ.items())
           if k.startswith("RFREPRO_") and k != "RFREPRO_EXECUTOR"}  # a worker sets its own executor
    return get_reusable_executor(max_workers=jobs, reuse="auto", env=env)


def _run_pool(todo: list[Planned], jobs: int, bar, results: list, submit=None) -> bool:
    """Run ``todo`` on a loky process pool; a run whose worker dies is recorded and retried once, alone.

    At most ``jobs`` runs are in flight, so every run caught by a pool crash
    was running: each is recorded ``failed`` (worker died) and queued once
    more; a run caught by two crashes stays failed. (loky stops the whole pool
    when one worker dies, so the run that killed it cannot be told from the
    ones running beside it; they are retried alike.) The retries run after
    every other run, one at a time: a run killed for memory by the runs beside
    it then gets the machine to itself. ``submit`` (tests) replaces the function
    the workers run.

    A run that fails on a full disk (or quota: its exception, or its ``failed``
    record, says ``[Errno 28]``) stops the dispatch: the runs in flight end as
    they do, no other run starts, and True is returned.
    """
    import os
    from collections import Counter, deque
    from concurrent.futures import FIRST_COMPLETED, wait

    submit = submit or run_planned
    parent = os.getpid()
    queue, retry, inflight, attempts = deque(todo), deque(), {}, Counter()
    width, full = jobs, False
    executor = _pool(jobs)
    while queue or retry or inflight:
        if not queue and not inflight:  # only retries left: one at a time
            queue, retry, width = retry, deque(), 1
        while queue and len(inflight) < width:
            p = queue.popleft()
            try:
                inflight[executor.submit(submit, p, parent, "loky")] = p
            except RuntimeError:  # the pool broke between two submissions: start a new one
                queue.appendleft(p)
                executor = _pool(jobs)
        done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
        broken = False
        for fut in done:
            p = inflight.pop(fut)
            try:
                rec = fut.result()
                full = full or failed_on_full_disk(rec)
            except Exception as exc:  # noqa: BLE001 - a dead worker, or a result that cannot come back
                from joblib.externals.loky.process_executor import BrokenProcessPool

                try:
                    if is_disk_full(exc):  # its record could not be written: neither can a failed one
                        raise exc
                    if isinstance(exc, BrokenProcessPool):
                        broken = True
                        attempts[p.run_id] += 1
                        rec = _worker_died(p, exc, attempts[p.run_id])
                        if attempts[p.run_id] < 2:
                            retry.append(p)
                            continue
                    else:
                        from rfrepro.runner.record import record_failure

                        rec = run_row(record_failure(p.cfg, p.ident, f"{type(exc).__name__}: {exc}"))
                except Exception as err:  # noqa: BLE001 - a full disk ends the sweep with one line
                    if not is_disk_full(err):
                        raise
                    full, rec = True, _disk_row(p, err)
            results.append(rec)
            bar.update()
        if full:  # no run starts on a full disk; the ones in flight end as they do
            queue.clear()
            retry.clear()
        if broken:
            executor = _pool(jobs)
    return full


def run_sweep(
    name: str,
    *,
    smoke: bool = False,
    jobs: int = 1,
    force: bool = False,
    extra: list[str] | None = None,
    progress: bool = True,
    scheduler: str | None = None,
    in_process: bool = False,
) -> list[dict]:
    """Run every run of experiment ``name``; finished runs are skipped unless ``force``.

    The runs go to a local process pool of ``jobs`` workers (one worker for
    ``jobs=1``, a study's ``sweep.max_jobs: 1`` or a single run), never into
    this process: a run killed there (SIGKILL, out of memory) is recorded
    ``failed`` and retried once, and the other runs go on (see ``_run_pool``).
    ``scheduler`` (a Dask scheduler address) sends them to a cluster instead.
    ``in_process=True`` runs them one by one in this process, without that
    protection (for a debugger, or a test that patches code in this process).
    Returns one summary dict per run (``status``: ok / failed / unavailable /
    busy; ``_skipped`` for runs finished before). Raises
    :class:`~rfrepro.harness.paths.DiskFull` when the results folder is full
    (a run, its record or the plan could not be written): no run is started after
    that, the finished records are kept, and the same call resumes.
    """
    import sys

    from rfrepro.runner.store import FAILED, FINISHED, RecordStore

    limit = max_jobs(name, smoke=smoke, extra=extra)
    if limit is not None and scheduler:
        print(f"{name}: its runs are timed (sweep.max_jobs={limit}); on a cluster they share hosts with "
              f"other tasks, so read its timings with care", file=sys.stderr)
    elif limit is not None and jobs > limit:
        print(f"{name}: {limit} run(s) at a time, not {jobs} (sweep.max_jobs: its runs are timed and "
              f"must not share cores)", file=sys.stderr)
        jobs = limit
    planned = plan(name, smoke=smoke, extra=extra, jobs=1 if scheduler else jobs, force=force,
                   progress=progress)
    roots = sorted({str(p.cfg.paths.results) for p in planned if p.cfg is not None})
    full = False
    try:
        for root in roots:  # the plan is what the study's outputs are drawn from (rfrepro.harness.run.plan)
            save_plan(name, planned, root, smoke=smoke, extra=extra)
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        full = True
    results: list[dict] = []
    todo = []
    for p in planned:
        if full:
            break
        if p.cfg is None:
            results.append({"status": FAILED, "arm": p.job.arm, "run_id": None, "error_type": "ConfigError",
                            "error": f"config {' '.join(p.job.overrides)}: {p.error}"})
            continue
        store = RecordStore(p.cfg.paths.results, study_slug(p.cfg))
        if not force and store.is_finished(p.run_id):
            results.append({"status": FINISHED, "_skipped": True, "arm": p.job.arm, "run_id": p.run_id})
        elif p.ident[3] is not None:  # data known unavailable: record it here, no worker needed
            full = _in_process(p, results)
        else:
            todo.append(p)
    if full:
        raise DiskFull(roots[0] if roots else "results", *_kept(planned))
    bar = tqdm(total=len(planned), initial=len(results), desc=name, unit="run", disable=not progress)
    if scheduler:
        from omegaconf import open_dict

        from rfrepro.harness.run.distributed import dask_map, threads_per_task

        per_task = threads_per_task(scheduler) if todo else 1
        for p in todo:  # the hosts' cores shared among their task slots, unless threads= was given
            if not p.user_threads:
                with open_dict(p.cfg):
                    p.cfg.threads = per_task
        outcomes = dask_map(_run_on_cluster, todo, address=scheduler, retries=1, desc=name, progress=False)
        for p, res, exc in outcomes:
            try:
                if exc is not None and is_disk_full(exc):
                    raise exc
                results.append(res if exc is None else _worker_died(p, exc, 2))
                full = failed_on_full_disk(results[-1])
            except Exception as err:  # noqa: BLE001 - a full disk ends the sweep with one line
                if not is_disk_full(err):
                    raise
                full = True
            bar.update()
            if full:
                outcomes.close()  # cancels the runs not finished
                break
    elif in_process:
        for p in todo:
            if _in_process(p, results):
                full = True
                break
            bar.update()
    elif todo:  # serial too: a worker's death is recorded and retried, this process's would end the sweep
        from rfrepro.harness.run.roofline import host_peaks

        host_peaks()  # measured here once, before the workers start (they read the cache)
        full = _run_pool(todo, max(1, min(jobs, len(todo))), bar, results)
    bar.close()
    if full:
        raise DiskFull(roots[0], *_kept(planned))
    return results


def _in_process(p: Planned, results: list) -> bool:
    """Run ``p`` in this process, its row added to ``results``; True when it failed on a full disk."""
    try:
        results.append(run_planned(p))
    except Exception as exc:  # noqa: BLE001 - a full disk ends the sweep with one line
        if not is_disk_full(exc):
            raise
        results.append(_disk_row(p, exc))
        return True
    return failed_on_full_disk(results[-1])


def _run_on_cluster(p: Planned) -> dict:
    """One run on a Dask worker (``dask_map`` has checked the locked environment)."""
    return run_planned(p, executor="dask")
