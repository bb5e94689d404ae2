"""A study's plan: every run composed, checked and identified before anything runs."""

from __future__ import annotations

from dataclasses import dataclass

from rfrepro.harness.config import compose_cached
from rfrepro.harness.grid import Job, _fmt, _sweep_spec, expand
from rfrepro.harness.validate import check_run_config
from rfrepro.runner.env import threads_for


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
    from rfrepro.runner.record import identify

    extra = list(extra or [])
    user_threads = any(o.split("=", 1)[0] == "threads" for o in extra)
    # an experiment that sets threads (a timing study) keeps them, as a user's threads= does
    fixed = user_threads or _sweep_spec(name, smoke, tuple(extra))["threads"] is not None
    tail = ([] if fixed else [f"threads={threads_for(jobs)}"]) + [f"force={_fmt(force)}"]
    out = []
    for job in expand(name, smoke=smoke, extra=extra):
        try:
            cfg = compose_cached(job.overrides + tail)
            check_run_config(cfg)
        except Exception as exc:  # noqa: BLE001 - bad input: one clear line, nothing runs
            point = " ".join(o for o in job.overrides if not o.startswith(("experiment=", "smoke=")))
            raise ValueError(f"{str(exc).splitlines()[0]} (in the run {point})") from None
        out.append(Planned(job, cfg, identify(cfg), user_threads=fixed))
    return out
