"""An experiment's sweep: arms x grid, run in parallel, resumable.

An experiment config (``conf/experiment/<paper>/<item>.yaml``) declares::

    sweep:
      grid: {model.lam: [...], seed: [0, 1, 2]}          # shared by every arm
      arms:
        ksvm: {overrides: [method=exact, model=kernel_svm]}
        rfsvm_unif: {overrides: [method=rff_unif], grid: {method.n_components: [1]}}
    smoke:                                               # replaces grid values, adds overrides
      grid: {seed: [0]}
      overrides: [dataset.n_test=2000]

Each point of the grid becomes one run (one composed config, one record).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from joblib import Parallel, delayed
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
    """The sweep arm a config belongs to, from its method and model names.

    Lets runs started by a plain Hydra multirun carry the same arm label as
    the runs of ``reproduce``; None when no arm of the experiment matches.
    """
    arms = (cfg.get("sweep") or {}).get("arms") or {}
    chosen = {"method": cfg.method.get("name"), "model": cfg.model.get("name")}
    for arm, spec in arms.items():
        picks = dict(
            o.split("=", 1) for o in (spec or {}).get("overrides") or [] if o.split("=", 1)[0] in chosen
        )
        if picks and all(chosen[k] == v for k, v in picks.items()):
            return str(arm)
    return None


def check_experiment(name: str) -> None:
    valid = options("experiment")
    if name not in valid:
        raise ValueError(f"unknown experiment {name!r}; valid experiments: {', '.join(valid)}")


def expand(name: str, *, smoke: bool = False, extra: list[str] | None = None) -> list[Job]:
    """The runs of experiment ``name`` as override lists (deterministic order)."""
    check_experiment(name)
    extra = list(extra or [])
    head = [f"experiment={name}", f"smoke={_fmt(smoke)}"]
    cfg = compose(head + extra)
    sweep = OmegaConf.to_container(cfg.get("sweep") or {}, resolve=False)
    smoke_cfg = OmegaConf.to_container(cfg.get("smoke_sweep") or {}, resolve=False) if smoke else {}
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


def _run_job(job: Job, threads: int | None, force: bool) -> dict:
    from rfrepro.runner.run import run_and_record

    overrides = job.overrides + [f"threads={_fmt(threads)}", f"force={_fmt(force)}"]
    try:
        cfg = compose_cached(overrides)
    except Exception as exc:  # noqa: BLE001 - a bad point must not stop the sweep
        return {"status": "failed", "arm": job.arm, "error": f"config: {exc}", "overrides": overrides}
    rec = run_and_record(cfg)
    return {k: rec.get(k) for k in ("status", "arm", "run_id", "error", "_skipped")}


def run_sweep(
    name: str,
    *,
    smoke: bool = False,
    jobs: int = 1,
    force: bool = False,
    extra: list[str] | None = None,
    progress: bool = True,
) -> list[dict]:
    """Run every job of experiment ``name``; finished runs are skipped unless ``force``."""
    todo = expand(name, smoke=smoke, extra=extra)
    threads = threads_for(jobs) if jobs > 1 else None
    bar = tqdm(total=len(todo), desc=name, unit="run", disable=not progress)
    results = []
    if jobs <= 1:
        for job in todo:
            results.append(_run_job(job, threads, force))
            bar.update()
    else:
        par = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")
        for res in par(delayed(_run_job)(job, threads, force) for job in todo):
            results.append(res)
            bar.update()
    bar.close()
    return results
