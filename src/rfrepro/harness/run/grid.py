"""The grid language of a study's sweep: arms x grid -> one override list per run.

An experiment config (``conf/experiment/<paper>/<item>.yaml``) declares::

    sweep:
      grid: {model.lam: [...], seed: [0, 1, 2]}          # shared by every arm
      arms:
        ksvm: {overrides: [method=exact, model=kernel_svm]}
        rfsvm_unif: {overrides: [method=rff_unif], grid: {method.n_components: [1]}}
      max_jobs: 1                                        # optional: runs at most this many at once
      arms_from: {kernel: gaussian}                      # or: the arms the maps declare (rfrepro.harness.run.arms)
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
import difflib
import functools
import itertools
from dataclasses import dataclass

from omegaconf import OmegaConf

from rfrepro.harness.catalog import options
from rfrepro.harness.run.arms import arms as declared_arms
from rfrepro.harness.run.config import GROUPS, compose


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

    sweep = cfg.get("sweep") or {}
    arms = sweep.get("arms") or {}
    if not arms and sweep.get("arms_from"):
        arms = declared_arms(OmegaConf.to_container(sweep.arms_from, resolve=True))
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


def resolve_study(name: str) -> str:
    """Map ``sun2018-fig1`` / ``sun2018/fig1`` / ``rff-kernel-approx`` to a study name."""
    valid = options("experiment")
    if name in valid:
        return name
    for study in valid:
        paper, item = study.split("/", 1)
        if name in (f"{paper}-{item}", item if paper == "spine" else None):
            return study
    close = difflib.get_close_matches(name, valid + [v.replace("/", "-") for v in valid], n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ValueError(f"unknown experiment {name!r}{hint} (`python -m rfrepro.reproduce list` lists them)")


@functools.lru_cache(maxsize=16)
def _sweep_spec(name: str, smoke: bool, extra: tuple[str, ...]) -> dict:
    check_experiment(name)
    cfg = compose([f"experiment={name}", f"smoke={_fmt(smoke)}", *extra])
    sweep = OmegaConf.to_container(cfg.get("sweep") or {}, resolve=False)
    if sweep.get("arms_from") and not sweep.get("arms"):  # the arms the maps declare, as the study asks
        sweep["arms"] = declared_arms(OmegaConf.to_container(cfg.sweep.arms_from, resolve=True))
    return {"sweep": sweep,
            "smoke_sweep": OmegaConf.to_container(cfg.get("smoke_sweep") or {}, resolve=False),
            "threads": cfg.get("threads")}


def max_jobs(name: str, *, smoke: bool = False, extra: list[str] | None = None) -> int | None:
    """The study's ``sweep.max_jobs`` (runs at once that its timings allow), None when unlimited."""
    value = _sweep_spec(name, smoke, tuple(extra or ()))["sweep"].get("max_jobs")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name}: sweep.max_jobs must be an integer >= 1, got {value!r}")
    return value


def _skipped(point: dict, skip: dict) -> bool:
    """True when ``point`` has, for some key of ``skip``, one of the values listed there."""
    return any(point.get(k) in (v if isinstance(v, list) else [v]) for k, v in skip.items())


def expand(name: str, *, smoke: bool = False, extra: list[str] | None = None) -> list[Job]:
    """The runs of experiment ``name`` as override lists (deterministic order).

    ``sweep.per_dataset.<name>``: for the grid points of that dataset,
    ``overrides`` applied before the arm's own, and ``skip`` (key -> values)
    the points left out, e.g. the budgets a dataset has too few rows for.
    """
    extra = list(extra or [])
    head = [f"experiment={name}", f"smoke={_fmt(smoke)}"]
    spec = copy.deepcopy(_sweep_spec(name, smoke, tuple(extra)))
    sweep = spec["sweep"]
    smoke_cfg = spec["smoke_sweep"] if smoke else {}
    smoke_grid = smoke_cfg.get("grid") or {}
    head += list(smoke_cfg.get("overrides") or [])
    arms = sweep.get("arms") or {"default": {}}
    per_dataset = sweep.get("per_dataset") or {}
    jobs = []
    for arm, spec in arms.items():
        spec = spec or {}
        grid = {**(sweep.get("grid") or {}), **(spec.get("grid") or {})}
        grid = {k: smoke_grid.get(k, v) for k, v in grid.items()}
        keys = list(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            picked = dict(zip(keys, values))
            own = per_dataset.get(str(picked.get("dataset")), {}) or {}
            if _skipped(picked, own.get("skip") or {}):
                continue
            point = [f"{k}={_fmt(v)}" for k, v in picked.items()]
            jobs.append(Job(arm, head + list(own.get("overrides") or []) + list(spec.get("overrides") or [])
                            + point + [f"arm={arm}"] + extra))
    # dataset-major, then seed: consecutive runs share a loaded dataset, a training sample and
    # its cached kernels (the order changes no result: each run has its own identity)
    def locality(job: Job):
        picks = dict(o.split("=", 1) for o in job.overrides if o.split("=", 1)[0] in ("dataset", "seed"))
        return picks.get("dataset", ""), picks.get("seed", "")

    jobs.sort(key=locality)
    return jobs
