"""An experiment's sweep: arms x grid, run in parallel, resumable.

An experiment config (``conf/experiment/<paper>/<item>.yaml``) declares::

    sweep:
      grid: {model.lam: [...], seed: [0, 1, 2]}          # shared by every arm
      arms:
        ksvm: {overrides: [method=exact, model=kernel_svm]}
        rfsvm_unif: {overrides: [method=rff_unif], grid: {method.n_components: [1]}}
      max_jobs: 1                                        # optional: runs at most this many at once
    smoke_sweep:                                         # replaces grid values, adds overrides
      grid: {seed: [0]}
      overrides: [dataset.n_test=2000]

Each point of the grid becomes one run (one composed config, one record).
``max_jobs`` is for studies whose result is a wall time (a speedup against
threads, a time-complexity slope): their runs must not share cores, so a
``--jobs`` above it is lowered, with a note, rather than trusted.
"""

from __future__ import annotations

import copy
import functools
import itertools
from dataclasses import dataclass

from omegaconf import OmegaConf
from tqdm.auto import tqdm

from rfrepro.config import GROUPS, compose, options
from rfrepro.runner.env import threads_for


@dataclass
class Job:
    arm: str
    overrides: list[str]


def _fmt(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_fmt(v) for v in value) + "]"
    return repr(value)


def infer_arm(cfg) -> str | None:
    """The sweep arm a config belongs to, from its arm overrides (method, model, any key=value).

    Lets runs started by a plain Hydra multirun carry the same arm label as
    the runs of ``reproduce``; the arm whose overrides all hold and are the
    most specific wins; None when no arm of the experiment matches.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    arms = (cfg.get("sweep") or {}).get("arms") or {}
    best, best_n = None, 0
    parser = OverridesParser.create()
    for arm, spec in arms.items():
        overrides = list((spec or {}).get("overrides") or [])
        try:
            parsed = parser.parse_overrides(overrides)
        except Exception:  # noqa: BLE001 - an arm we cannot read matches nothing
            continue
        ok = True
        for ov in parsed:
            key, value = ov.key_or_group, ov.value()
            have = cfg.get(key, {}).get("name") if key in GROUPS else OmegaConf.select(cfg, key)
            if have != value:
                ok = False
                break
        if ok and len(parsed) > best_n:
            best, best_n = str(arm), len(parsed)
    return best


def check_experiment(name: str) -> None:
    valid = options("experiment")
    if name not in valid:
        raise ValueError(f"unknown experiment {name!r}; valid experiments: {', '.join(valid)}")


@functools.lru_cache(maxsize=16)
def _sweep_spec(name: str, smoke: bool, extra: tuple[str, ...]) -> dict:
    check_experiment(name)
    cfg = compose([f"experiment={name}", f"smoke={_fmt(smoke)}", *extra])
    return {"sweep": OmegaConf.to_container(cfg.get("sweep") or {}, resolve=False),
            "smoke_sweep": OmegaConf.to_container(cfg.get("smoke_sweep") or {}, resolve=False),
            "threads": cfg.get("threads")}


def max_jobs(name: str, *, smoke: bool = False, extra: list[str] | None = None) -> int | None:
    """The study's ``sweep.max_jobs`` (runs at once that its timings allow), None when unlimited."""
    value = _sweep_spec(name, smoke, tuple(extra or ()))["sweep"].get("max_jobs")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name}: sweep.max_jobs must be an integer >= 1, got {value!r}")
    return value


def expand(name: str, *, smoke: bool = False, extra: list[str] | None = None) -> list[Job]:
    """The runs of experiment ``name`` as override lists (deterministic order)."""
    extra = list(extra or [])
    head = [f"experiment={name}", f"smoke={_fmt(smoke)}"]
    spec = copy.deepcopy(_sweep_spec(name, smoke, tuple(extra)))
    sweep = spec["sweep"]
    smoke_cfg = spec["smoke_sweep"] if smoke else {}
    smoke_grid = smoke_cfg.get("grid") or {}
    head += list(smoke_cfg.get("overrides") or [])
    arms = sweep.get("arms") or {"default": {}}
    jobs = []
    for arm, spec in arms.items():
        spec = spec or {}
        grid = {**(sweep.get("grid") or {}), **(spec.get("grid") or {})}
        grid = {k: smoke_grid.get(k, v) for k, v in grid.items()}
        keys = list(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            point = [f"{k}={_fmt(v)}" for k, v in zip(keys, values)]
            jobs.append(Job(arm, head + list(spec.get("overrides") or []) + point + [f"arm={arm}"] + extra))
    # dataset-major, then seed: consecutive runs share a loaded dataset, a training sample and
    # its cached kernels (the order changes no result: each run has its own identity)
    def locality(job: Job):
        picks = dict(o.split("=", 1) for o in job.overrides if o.split("=", 1)[0] in ("dataset", "seed"))
        return picks.get("dataset", ""), picks.get("seed", "")

    jobs.sort(key=locality)
    return jobs


_BASES: dict[tuple[str, ...], object] = {}


def compose_cached(overrides: list[str]):
    """``compose(overrides)`` with the group choices composed once per process.

    Hydra's compose costs tens of milliseconds to seconds (it copies its whole
    config repository); a sweep has few distinct group choices (dataset,
    method, model, experiment) but many key=value points. The base config of a
    group choice is composed once, then the key=value overrides are parsed by
    Hydra's own parser and applied in order, giving the same config.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    def is_group(o: str) -> bool:
        key = o.lstrip("+~").split("=", 1)[0]
        return "." not in key and key in GROUPS

    groups = tuple(o for o in overrides if is_group(o))
    if groups not in _BASES:
        _BASES[groups] = compose(list(groups))
    cfg = _BASES[groups].copy()
    for ov in OverridesParser.create().parse_overrides([o for o in overrides if not is_group(o)]):
        if ov.is_delete() or ov.is_sweep_override():
            return compose(overrides)  # rare forms: let Hydra handle them
        OmegaConf.update(cfg, ov.key_or_group, ov.value(), merge=True, force_add=ov.is_force_add() or ov.is_add())
    return cfg


@dataclass
class Planned:
    """One run of a sweep: its config and identity, known before anything runs."""

    job: Job
    cfg: object = None                 # the composed DictConfig (None when composing failed)
    ident: tuple | None = None         # (run_id, compute_id, data fingerprint, unavailability)
    error: str | None = None           # why the config could not be composed
    user_threads: bool = False         # threads= set by the user or the experiment (it wins everywhere)

    @property
    def run_id(self) -> str | None:
        return None if self.ident is None else self.ident[0]


def plan(name: str, *, smoke: bool = False, extra: list[str] | None = None, jobs: int = 1,
         force: bool = False) -> list[Planned]:
    """Compose every run of ``name`` and compute its identity (fetching data once per source).

    The run ids of a plan are the study's own runs: its outputs are drawn from
    exactly these records. ``threads`` is set to cores / ``jobs`` unless the
    overrides or the experiment set it.
    """
    from rfrepro.runner.run import identify

    extra = list(extra or [])
    user_threads = any(o.split("=", 1)[0] == "threads" for o in extra)
    # an experiment that sets threads (a timing study) keeps them, as a user's threads= does
    fixed = user_threads or _sweep_spec(name, smoke, tuple(extra))["threads"] is not None
    tail = ([] if fixed else [f"threads={threads_for(jobs)}"]) + [f"force={_fmt(force)}"]
    out = []
    for job in expand(name, smoke=smoke, extra=extra):
        try:
            cfg = compose_cached(job.overrides + tail)
            from rfrepro.runner.validate import check_run_config

            check_run_config(cfg)
        except Exception as exc:  # noqa: BLE001 - bad input: one clear line, nothing runs
            point = " ".join(o for o in job.overrides if not o.startswith(("experiment=", "smoke=")))
            raise ValueError(f"{str(exc).splitlines()[0]} (in the run {point})") from None
        out.append(Planned(job, cfg, identify(cfg), user_threads=fixed))
    return out


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


def _summary(rec: dict) -> dict:
    out = {k: rec.get(k) for k in ("status", "arm", "run_id", "error", "error_type", "_skipped", "urls_tried",
                                   "reused_from")}
    out["dataset"] = (rec.get("dataset") or {}).get("name")
    return out


def run_planned(p: Planned, parent: int | None = None, executor: str = "local") -> dict:
    """Run one planned run in this process and return its summary (the record is written)."""
    import os

    from rfrepro.runner.run import run_and_record

    if parent is not None:
        _watch_parent(parent)
    os.environ["RFREPRO_EXECUTOR"] = executor
    return _summary(run_and_record(p.cfg, ident=p.ident, parent=parent))


def _worker_died(p: Planned, exc: BaseException, attempt: int) -> dict:
    from rfrepro.runner.run import record_failure

    cause = f"worker died ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    rec = record_failure(p.cfg, p.ident, cause + (", retrying" if attempt < 2 else ", after one retry"))
    return _summary(rec)


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


def _run_pool(todo: list[Planned], jobs: int, bar, results: list, submit=None) -> None:
    """Run ``todo`` on a loky process pool; a run whose worker dies is recorded and retried once, alone.

    At most ``jobs`` runs are in flight, so every run caught by a pool crash
    was running: each is recorded ``failed`` (worker died) and queued once
    more; a run caught by two crashes stays failed. (loky stops the whole pool
    when one worker dies, so the run that killed it cannot be told from the
    ones running beside it; they are retried alike.) The retries run after
    every other run, one at a time: a run killed for memory by the runs beside
    it then gets the machine to itself. ``submit`` (tests) replaces the function
    the workers run.
    """
    import os
    from collections import Counter, deque
    from concurrent.futures import FIRST_COMPLETED, wait

    submit = submit or run_planned
    parent = os.getpid()
    queue, retry, inflight, attempts = deque(todo), deque(), {}, Counter()
    width = jobs
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
                results.append(fut.result())
                bar.update()
            except Exception as exc:  # noqa: BLE001 - a dead worker, or a result that cannot come back
                from joblib.externals.loky.process_executor import BrokenProcessPool

                if isinstance(exc, BrokenProcessPool):
                    broken = True
                    attempts[p.run_id] += 1
                    rec = _worker_died(p, exc, attempts[p.run_id])
                    if attempts[p.run_id] < 2:
                        retry.append(p)
                        continue
                else:
                    from rfrepro.runner.run import record_failure

                    rec = _summary(record_failure(p.cfg, p.ident, f"{type(exc).__name__}: {exc}"))
                results.append(rec)
                bar.update()
        if broken:
            executor = _pool(jobs)


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
    busy; ``_skipped`` for runs finished before).
    """
    import sys

    from rfrepro.results.store import FINISHED, RecordStore

    limit = max_jobs(name, smoke=smoke, extra=extra)
    if limit is not None and scheduler:
        print(f"{name}: its runs are timed (sweep.max_jobs={limit}); on a cluster they share hosts with "
              f"other tasks, so read its timings with care", file=sys.stderr)
    elif limit is not None and jobs > limit:
        print(f"{name}: {limit} run(s) at a time, not {jobs} (sweep.max_jobs: its runs are timed and "
              f"must not share cores)", file=sys.stderr)
        jobs = limit
    planned = plan(name, smoke=smoke, extra=extra, jobs=1 if scheduler else jobs, force=force)
    results: list[dict] = []
    todo = []
    for p in planned:
        if p.cfg is None:
            results.append({"status": "failed", "arm": p.job.arm, "run_id": None, "error_type": "ConfigError",
                            "error": f"config {' '.join(p.job.overrides)}: {p.error}"})
            continue
        store = RecordStore(p.cfg.paths.results, f"{p.cfg.study.paper}-{p.cfg.study.item}")
        if not force and store.is_finished(p.run_id):
            results.append({"status": FINISHED, "_skipped": True, "arm": p.job.arm, "run_id": p.run_id})
        elif p.ident[3] is not None:  # data known unavailable: record it here, no worker needed
            results.append(run_planned(p))
        else:
            todo.append(p)
    bar = tqdm(total=len(planned), initial=len(results), desc=name, unit="run", disable=not progress)
    if scheduler:
        from omegaconf import open_dict

        from rfrepro.distributed import dask_map, threads_per_task

        per_task = threads_per_task(scheduler) if todo else 1
        for p in todo:  # the hosts' cores shared among their task slots, unless threads= was given
            if not p.user_threads:
                with open_dict(p.cfg):
                    p.cfg.threads = per_task
        for p, res, exc in dask_map(_run_on_cluster, todo, address=scheduler, retries=1, desc=name,
                                    progress=False):
            results.append(res if exc is None else _worker_died(p, exc, 2))
            bar.update()
    elif in_process:
        for p in todo:
            results.append(run_planned(p))
            bar.update()
    elif todo:  # serial too: a worker's death is recorded and retried, this process's would end the sweep
        _run_pool(todo, max(1, min(jobs, len(todo))), bar, results)
    bar.close()
    return results


def _run_on_cluster(p: Planned) -> dict:
    """One run on a Dask worker (``dask_map`` has checked the locked environment)."""
    return run_planned(p, executor="dask")
