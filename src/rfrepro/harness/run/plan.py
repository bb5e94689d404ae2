"""A study's plan: every run composed, checked and identified before anything runs.

The sweep saves its plan as ``plans/<slug>.json`` (:func:`save_plan`): the
study's title and deviations, the user's overrides, the code its runs can
execute (``code_modules``: module path -> git blob id, over all its runs), and
per run its id, compute id, code version, arm, overrides, dataset, seed and data fingerprint.
Outputs and the report read that file and the records (:func:`load_plan`):
they never compose a config, fingerprint or fetch data, so a report on a
machine without the data gives the same verdicts as where the data is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tqdm.auto import tqdm

from rfrepro.harness.planfile import write_plan
from rfrepro.harness.run.config import UnknownKey, compose_cached, compose_message
from rfrepro.harness.run.grid import Job, _fmt, _sweep_spec, expand
from rfrepro.harness.run.validate import check_run_config
from rfrepro.runner.env import threads_for

#: overrides that say where results go, not what is computed: not part of a plan's grid
_WHERE = ("paths.results=",)


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


#: A plan of at least this many runs shows a progress bar when asked (``progress``): composing
#: takes 10-40 ms a run, and the largest studies have thousands (Chen Fig. 1: 3600 runs, 1.6 min).
PLAN_PROGRESS_RUNS = 200


def plan(name: str, *, smoke: bool = False, extra: list[str] | None = None, jobs: int = 1,
         force: bool = False, progress: bool = False) -> list[Planned]:
    """Compose every run of ``name`` and compute its identity (fetching data once per source).

    The run ids of a plan are the study's own runs: its outputs are drawn from
    exactly these records. ``threads`` is set to cores / ``jobs`` unless the
    overrides or the experiment set it. ``progress``: a progress bar on a plan
    of :data:`PLAN_PROGRESS_RUNS` runs or more.
    """
    from rfrepro.runner.record import identify

    extra = list(extra or [])
    user_threads = any(o.split("=", 1)[0] == "threads" for o in extra)
    # an experiment that sets threads (a timing study) keeps them, as a user's threads= does
    fixed = user_threads or _sweep_spec(name, smoke, tuple(extra))["threads"] is not None
    tail = ([] if fixed else [f"threads={threads_for(jobs)}"]) + [f"force={_fmt(force)}"]
    out = []
    todo = expand(name, smoke=smoke, extra=extra)
    skipped: dict[str, set[str]] = {}  # a user's key=value -> the arms whose config lacks its key
    for job in tqdm(todo, desc=f"{name}: planning", unit="run",
                    disable=not progress or len(todo) < PLAN_PROGRESS_RUNS, leave=False):
        try:
            cfg = compose_cached(job.overrides + tail)
            check_run_config(cfg)
        except Exception as exc:  # noqa: BLE001 - bad input: one clear line, nothing runs
            job, cfg = _where_the_key_exists(job, tail, extra, exc, skipped)
        out.append(Planned(job, cfg, identify(cfg), user_threads=fixed))
    _check_applied(name, skipped, out)
    return out


def _where_the_key_exists(job: Job, tail: list[str], extra: list[str], exc: Exception,
                          skipped: dict[str, set[str]]):
    """The run without the user's ``key=value`` overrides its arm's config has no key for, and its config.

    A user's override applies to the arms whose config has the key (a study's
    exact-kernel arm has no ``method.n_components``): the others run as the
    study defines them. Any other error is raised as one line naming the run.
    """
    while isinstance(exc, UnknownKey):
        mine = [o for o in job.overrides if o in extra and not o.startswith(("+", "~"))
                and o.split("=", 1)[0] == exc.key]
        if not mine:
            break
        skipped.setdefault(mine[-1], set()).add(job.arm)
        job = Job(job.arm, [o for o in job.overrides if o not in mine])
        try:
            cfg = compose_cached(job.overrides + tail)
            check_run_config(cfg)
            return job, cfg
        except Exception as again:  # noqa: BLE001 - another key, or a bad value
            exc = again
    message = compose_message(exc)
    yours = [o for o in extra if o in job.overrides and message.startswith(o.lstrip("+~").split("=", 1)[0] + " ")]
    if yours:  # the user's own value: which override, and the arm it failed in
        raise ValueError(f"{message} (the override {yours[-1]}, in the arm {job.arm})") from None
    point = " ".join(o for o in job.overrides if not o.startswith(("experiment=", "smoke=", *_WHERE)))
    raise ValueError(f"{message} (in the run {point})") from None


def _check_applied(name: str, skipped: dict[str, set[str]], planned: list[Planned]) -> None:
    """Refuse a user's override that no run took; say (stderr) which arms went without one."""
    import sys

    for override, arms in skipped.items():
        if not any(override in p.job.overrides for p in planned):
            key = override.split("=", 1)[0]
            raise ValueError(f"Could not override '{key}': unknown key in every arm of {name} "
                             f"({', '.join(sorted(arms))})")
    for override, arms in skipped.items():
        print(f"note: {override} applies to the arms whose config has {override.split('=', 1)[0]}; "
              f"{', '.join(sorted(arms))} run without it", file=sys.stderr)


def user_overrides(extra: list[str] | None) -> list[str]:
    """The overrides that change a study's grid (``paths.results=`` only says where it goes)."""
    return [o for o in (extra or []) if not o.lstrip("+~").startswith(_WHERE)]


def save_plan(name: str, planned: list[Planned], root: str | Path, *, smoke: bool,
              extra: list[str] | None = None) -> Path:
    """Write ``plans/<slug>.json`` under ``root`` (atomically) and return its path."""

    from rfrepro.runner.code import run_code

    cfgs = [p.cfg for p in planned if p.cfg is not None]
    first = cfgs[0] if cfgs else None
    runs = []
    modules: dict[str, str] = {}
    for p in planned:
        run_id, compute_id, fingerprint, unavailable = p.ident or (None, None, None, None)
        code = None if p.cfg is None else run_code(p.cfg)
        if code is not None:
            modules.update(code.modules)
        runs.append({
            "run_id": run_id, "compute_id": compute_id, "arm": p.job.arm,
            "code_version": None if code is None else code.version,
            "overrides": user_overrides(p.job.overrides),  # what the run computes, not where it went
            "dataset": None if p.cfg is None else p.cfg.dataset.get("name"),
            "seed": None if p.cfg is None else p.cfg.get("seed"),
            "data_fingerprint": fingerprint,
            "unavailable": None if unavailable is None else str(unavailable).splitlines()[0],
        })
    doc = {
        "study": name, "title": None if first is None else first.study.get("title"), "smoke": bool(smoke),
        "overrides": user_overrides(extra), "code_modules": dict(sorted(modules.items())),
        "planned_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "deviations": deviations(first),
        "runs": runs,
    }
    return write_plan(root, name, doc)


def deviations(cfg) -> list[dict]:
    """A composed study config's declared deviations as a list of {what, why, effect} (none: []).

    ``deviations_shared:`` (those a shared defaults file declares for every study that uses it:
    Hydra replaces a list, it does not extend one) come first, then the study's own ``deviations:``.
    """
    from omegaconf import OmegaConf

    if cfg is None:
        return []
    devs = []
    for key in ("deviations_shared", "deviations"):
        if cfg.get(key) is not None:
            devs += OmegaConf.to_container(cfg.get(key), resolve=False)
    return [d if isinstance(d, dict) else {"what": str(d)} for d in devs]


def study_deviations(name: str) -> list[dict]:
    """The study ``name``'s deviations as its config declares them today."""
    from rfrepro.harness.run.config import compose

    return deviations(compose([f"experiment={name}"]))


