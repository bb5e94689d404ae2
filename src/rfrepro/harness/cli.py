"""Hydra entry point: ``python -m rfrepro [overrides] [-m]`` runs one config per job.

Each job writes one record under ``<paths.results>/runs/<paper>-<item>/``;
``python -m rfrepro.reproduce <paper>/<item> --outputs-only`` or ``make report``
rebuilds the tables and figures from the records.

Before anything runs, the config of every job is composed and checked and the
results folder is probed: bad input (an unknown name or key, a bad value, a
results path that cannot be written) gets one line per bad run on stderr and
exit status 2, and no run starts.

Each job prints one line saying what happened. A single run that did not
finish also prints one error line (with its record). A multirun (``-m``) ends
with the summary ``python -m rfrepro.reproduce`` prints: counts per status, and
each failure with its run id, error type and record. Each job leaves its result
in ``rfrepro-run.json`` in its Hydra output folder and the summary is read back
from there, so it works with the launchers that run jobs in other processes
(``hydra/launcher=parallel``, submitit) too. A launcher that stops on a job
whose process was killed (the joblib launcher of ``hydra/launcher=parallel``)
ends the multirun with exit status 1 and no summary; the runs that finished
keep their records (``python -m rfrepro.reproduce`` instead records a killed
run as failed, retries it once and goes on).

Exit status, as for ``python -m rfrepro.reproduce`` (see rfrepro.harness.summary):
0 every run finished, 1 a run failed, 2 bad input, 3 a run was not run (data
unavailable, over the memory budget, or being computed by another process).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import hydra
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, open_dict

from rfrepro.harness.config import check_overrides, compose_message, conf_dir

RESULT_FILE = "rfrepro-run.json"  # a multirun job's result, in its Hydra output folder
_CALLBACK = "rfrepro_summary"  # the name main() registers MultirunSummary under in hydra.callbacks


def _threads_from_launcher(cfg: DictConfig):
    """Threads per job: an explicit ``threads=`` wins; the joblib launcher gets cores // n_jobs."""
    if cfg.threads is not None:
        return cfg.threads
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ValueError, ImportError):
        return None
    target = str(launcher.get("_target_", ""))
    if "Joblib" in target:
        from rfrepro.runner.env import threads_for

        n_jobs = int(launcher.get("n_jobs") or -1)
        return threads_for(os.cpu_count() if n_jobs < 1 else n_jobs)
    if "submitit" in target.lower() and launcher.get("cpus_per_task"):
        return int(launcher.cpus_per_task)  # the cores SLURM (or the local executor) gives the task
    return None


def _executor() -> str:
    try:
        from hydra.core.hydra_config import HydraConfig

        target = str(HydraConfig.get().launcher.get("_target_", ""))
    except (ValueError, ImportError):
        return "hydra"
    return "hydra:" + (target.rsplit(".", 1)[-1] or "basic")


class RunNotFinished(RuntimeError):
    """A job of a multirun that main() did not start (no summary at its end) did not finish."""


def _multirun_job():
    """This job's Hydra config when it is a job of a multirun, else None."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
    except (ValueError, ImportError):
        return None
    return hc if hc.mode == RunMode.MULTIRUN else None


def _summarized(hc) -> bool:
    """Whether main() registered the summary of this multirun (which reads the jobs' results)."""
    return bool((hc.callbacks.get(_CALLBACK) or {}).get("token"))


def _leave_result(hc, cfg: DictConfig, result: dict | None, bad_input: str | None = None) -> None:
    """Write this job's result where MultirunSummary finds it (its Hydra output folder)."""
    from rfrepro.atomic import atomic_write_text

    out = {"token": str(hc.callbacks[_CALLBACK].token), "job": int(hc.job.num),
           "overrides": [str(o) for o in hc.overrides.task], "study": f"{cfg.study.paper}/{cfg.study.item}",
           "results": str(cfg.paths.results), "result": result, "bad_input": bad_input}
    try:
        atomic_write_text(Path(hc.runtime.output_dir) / RESULT_FILE, json.dumps(out, default=str))
    except OSError as exc:
        print(f"error: job {hc.job.num}: cannot leave its result in {hc.runtime.output_dir}: "
              f"{exc.strerror or exc}", file=sys.stderr)


def _bad_input(cfg: DictConfig, message: str) -> None:
    """One line; a single run exits 2, a multirun job is counted as bad input by the summary."""
    from rfrepro.harness.summary import EXIT_USAGE

    hc = _multirun_job()
    if hc is None:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if not _summarized(hc):
        raise RunNotFinished(message)  # Hydra runs the other jobs, then exits 1
    print(f"error: {message} (job {hc.job.num}: {' '.join(hc.overrides.task)})", file=sys.stderr)
    _leave_result(hc, cfg, None, bad_input=message)


def task(cfg: DictConfig) -> float | None:
    from rfrepro.harness.grid import infer_arm
    from rfrepro.harness.summary import MIRROR_HELP, exit_code, run_row
    from rfrepro.harness.validate import check_run_config
    from rfrepro.runner.record import run_and_record
    from rfrepro.runner.store import FINISHED, UNAVAILABLE

    with open_dict(cfg):
        cfg.threads = _threads_from_launcher(cfg)
        cfg.arm = cfg.arm or infer_arm(cfg)
    try:
        check_run_config(cfg)
    except ValueError as exc:
        return _bad_input(cfg, f"bad config: {exc}")
    os.environ["RFREPRO_EXECUTOR"] = _executor()
    try:
        rec = run_and_record(cfg)
    except OSError as exc:
        return _bad_input(cfg, f"cannot write results under {cfg.paths.results!r}: {exc.strerror or exc} "
                               "(set RFREPRO_RESULTS or paths.results= to a writable folder)")
    result = run_row(rec)
    status = "skipped (finished before)" if rec.get("_skipped") else rec["status"]
    metrics = rec.get("metrics") or {}
    shown = ", ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float))
    print(f"[{status}] {rec.get('study')} {rec.get('arm')} seed={cfg.seed} run={rec.get('run_id')} {shown}")
    hc = _multirun_job()
    if hc is not None and _summarized(hc):  # the summary at the end says what did not finish
        _leave_result(hc, cfg, result)
    elif rec["status"] != FINISHED:
        where = f"{cfg.paths.results}/runs/{cfg.study.paper}-{cfg.study.item}/{rec.get('run_id')}.json"
        first = str(rec.get("error") or rec["status"]).splitlines()[0]
        hint = f"; {MIRROR_HELP}" if rec["status"] == UNAVAILABLE else ""
        message = f"run {rec.get('run_id')} {rec['status']}: {first} (record: {where}){hint}"
        if hc is not None:
            raise RunNotFinished(message)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(exit_code([result]))
    return metrics.get("error")


def _expected_jobs(config: DictConfig) -> int | None:
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

    ``jobs``: the results the jobs left (see ``_leave_result``). A job with bad
    input makes the status 2; a job that left no result counts as failed.
    """
    from rfrepro.harness.summary import EXIT_FAILED, EXIT_USAGE, exit_code, summarize

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
        code = multirun_summary(jobs, _expected_jobs(config))
        if code:
            raise SystemExit(code)  # Hydra passes it on: the command's exit status


def _is_hydra_key(override: str) -> bool:
    key = override.lstrip("+~").split("=", 1)[0]
    return key == "hydra" or key.startswith(("hydra.", "hydra/"))


def _parses(parser, override: str) -> bool:
    try:
        parser.parse_override(override)
    except Exception:  # noqa: BLE001
        return False
    return True


def check_input(args: list[str], multirun: bool) -> list[str]:
    """One line per problem with the command's input, found before anything runs ([] when fine).

    Composes and checks the config of every job of the command (a multirun's
    sweep expanded as Hydra's basic sweeper does) and probes each results
    folder. A command with Hydra's own flags (``--cfg``, ``--help``, ``-cn``...)
    is left to Hydra.
    """
    from rfrepro.harness.config import compose, compose_cached
    from rfrepro.harness.reproduce import check_writable
    from rfrepro.harness.validate import check_run_config

    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in args):
        return []
    overrides = [a for a in args if not a.startswith("-") and not _is_hydra_key(a)]
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    try:
        parsed = [parser.parse_override(o) for o in overrides]
    except Exception as exc:  # noqa: BLE001 - one override Hydra cannot read
        bad = next((o for o in overrides if not _parses(parser, o)), " ".join(overrides))
        return [f"cannot read the override {bad!r}: {compose_message(exc).split(' See https')[0]}"]
    swept = [o for o in parsed if o.is_sweep_override()]
    if swept and not multirun:
        return [f"{o.input_line} gives several values: add -m (multirun) to run one job per value, "
                f"or quote it (key='a,b') for one string" for o in swept]
    try:
        jobs = BasicSweeper.split_arguments(parsed, None)[0] if multirun else [overrides]
    except Exception:  # noqa: BLE001 - a sweep form only Hydra can expand: Hydra checks it
        return []
    swept_keys = {o.get_key_element() for o in swept}
    problems, roots = [], {}
    for job in jobs:
        try:
            try:
                cfg = compose_cached(job)
                root = str(cfg.paths.results)
            except Exception:  # noqa: BLE001 - Hydra's compose says it best (or accepts what we did not)
                cfg = compose(job)
                root = str(cfg.paths.results)
            check_run_config(cfg)
            roots.setdefault(root, None)
        except Exception as exc:  # noqa: BLE001 - bad input: one line per run, nothing runs
            point = " ".join(o for o in job if o.split("=", 1)[0] in swept_keys)
            problems.append(f"bad config: {compose_message(exc)}" + (f" (in the run {point})" if point else ""))
    for root in roots:
        try:
            check_writable(root)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def main() -> None:
    import uuid
    import warnings

    from rfrepro.harness.summary import EXIT_USAGE

    # our launcher files keep the plugin's names, so Hydra checks them against its schema and says so
    warnings.filterwarnings("ignore", message=".*validated against ConfigStore schema.*")
    # Hydra's parser rejects overrides placed after -m: accept them anywhere
    flags = [a for a in sys.argv[1:] if a in ("-m", "--multirun")]
    if flags:
        sys.argv = [sys.argv[0], *[a for a in sys.argv[1:] if a not in flags], flags[0]]
    try:
        check_overrides([a for a in sys.argv[1:] if not a.startswith("-")])
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    problems = check_input(sys.argv[1:], multirun=bool(flags))
    if problems:
        for line in problems:
            print(f"error: {line}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if flags:  # the summary and exit status at the end of the multirun
        token = f"t{uuid.uuid4().hex}"
        sys.argv[-1:-1] = [f"++hydra.callbacks.{_CALLBACK}._target_=rfrepro.harness.cli.MultirunSummary",
                           f"++hydra.callbacks.{_CALLBACK}.token={token}"]
    hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")(task)()


if __name__ == "__main__":
    main()
