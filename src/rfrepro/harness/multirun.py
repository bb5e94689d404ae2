"""A Hydra multirun of ``python -m rfrepro``: each job leaves its result, the last one sums them up.

Each job writes ``rfrepro-run.json`` (:data:`RESULT_FILE`) in its Hydra output
folder; :class:`MultirunSummary`, a Hydra callback that ``python -m rfrepro``
registers for a multirun, reads them back after the last job and prints the
summary ``python -m rfrepro.reproduce`` prints, with its exit status. Files
rather than memory, so it works with launchers that run jobs in other
processes or hosts (joblib, submitit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

RESULT_FILE = "rfrepro-run.json"  # a multirun job's result, in its Hydra output folder
CALLBACK = "rfrepro_summary"  # the name main() registers MultirunSummary under in hydra.callbacks


class RunNotFinished(RuntimeError):
    """A job of a multirun that main() did not start (no summary at its end) did not finish."""


def multirun_job():
    """This job's Hydra config when it is a job of a multirun, else None."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
    except (ValueError, ImportError):
        return None
    return hc if hc.mode == RunMode.MULTIRUN else None


def summarized(hc) -> bool:
    """Whether main() registered the summary of this multirun (which reads the jobs' results)."""
    return bool((hc.callbacks.get(CALLBACK) or {}).get("token"))


def leave_result(hc, cfg: DictConfig, result: dict | None, bad_input: str | None = None) -> None:
    """Write this job's result where MultirunSummary finds it (its Hydra output folder)."""
    from rfrepro.atomic import atomic_write_text

    out = {"token": str(hc.callbacks[CALLBACK].token), "job": int(hc.job.num),
           "overrides": [str(o) for o in hc.overrides.task], "study": f"{cfg.study.paper}/{cfg.study.item}",
           "results": str(cfg.paths.results), "result": result, "bad_input": bad_input}
    try:
        atomic_write_text(Path(hc.runtime.output_dir) / RESULT_FILE, json.dumps(out, default=str))
    except OSError as exc:
        print(f"error: job {hc.job.num}: cannot leave its result in {hc.runtime.output_dir}: "
              f"{exc.strerror or exc}", file=sys.stderr)



def expected_jobs(config: DictConfig) -> int | None:
    """How many jobs Hydra's basic sweeper made of the multirun (None for another sweeper)."""
    try:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
        from hydra.core.override_parser.overrides_parser import OverridesParser

        if not str(config.hydra.sweeper.get("_target_", "")).endswith("BasicSweeper"):
            return None
        params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
        parsed = OverridesParser.create().parse_overrides([*params, *config.hydra.overrides.task])
        return len(BasicSweeper.split_arguments(parsed, None)[0])
    except Exception:  # noqa: BLE001 - only a cross-check of the results found
        return None


def multirun_summary(jobs: list[dict], expected: int | None = None) -> int:
    """Print what a multirun did (as ``reproduce`` does, per study) and return its exit status.

    ``jobs``: the results the jobs left (see :func:`leave_result`). A job with bad
    input makes the status 2; a job that left no result counts as failed.
    """
    from rfrepro.harness.run.summary import EXIT_FAILED, EXIT_USAGE, exit_code, summarize

    groups: dict[tuple[str, str], list[dict]] = {}
    for job in jobs:
        if job.get("result"):
            groups.setdefault((job["study"], job["results"]), []).append(job["result"])
    for (study, root), results in groups.items():
        lines = summarize(study, results, root)
        print(lines[0])
        for line in lines[1:]:
            print(line, file=sys.stderr)
    code = exit_code([r for results in groups.values() for r in results])
    bad = [job for job in jobs if job.get("bad_input")]
    if bad:
        print(f"error: {len(bad)} of {len(jobs)} jobs had bad input and did not run (their error lines say why)",
              file=sys.stderr)
        code = EXIT_USAGE
    missing = (expected or 0) - len(jobs)
    if missing > 0:
        print(f"error: {missing} of {expected} jobs left no result ({RESULT_FILE} in their Hydra output folder): "
              "their process may have been killed", file=sys.stderr)
        code = code if code == EXIT_USAGE else EXIT_FAILED
    return code


class MultirunSummary(Callback):
    """Registered by main() for a multirun: after the last job, the summary and the exit status."""

    def __init__(self, token: str) -> None:
        self.token = str(token)

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        jobs = []
        for path in Path(str(config.hydra.sweep.dir)).rglob(RESULT_FILE):
            try:
                job = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if job.get("token") == self.token:
                jobs.append(job)
        jobs.sort(key=lambda job: job.get("job", 0))
        code = multirun_summary(jobs, expected_jobs(config))
        if code:
            raise SystemExit(code)  # Hydra passes it on: the command's exit status
