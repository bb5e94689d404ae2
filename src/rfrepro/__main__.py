"""Hydra entry point: ``python -m rfrepro [overrides] [-m]`` runs one config per job.

Each job writes one record under ``<paths.results>/runs/<paper>-<item>/``;
``python -m rfrepro.reproduce <paper>/<item> --outputs-only`` or ``make report``
rebuilds the tables and figures from the records. A job whose run does not
finish (failed, data unavailable, or computed by another process) raises, so
the command exits with status 1 (Hydra's status for a failed job) after all
jobs ran; each job prints one line saying what happened.
"""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig, open_dict

from rfrepro.config import check_overrides, conf_dir


class RunNotFinished(RuntimeError):
    """A run ended failed / unavailable / busy: the command must not exit 0."""


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


def _not_finished(message: str) -> None:
    """One line and exit 1 for a single run; for a multirun, raise so Hydra runs the other jobs
    and then exits 1."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        multirun = HydraConfig.get().mode == RunMode.MULTIRUN
    except (ValueError, ImportError):
        multirun = False
    if multirun:
        raise RunNotFinished(message)
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def task(cfg: DictConfig) -> float | None:
    from rfrepro.runner.run import run_and_record
    from rfrepro.runner.summary import MIRROR_HELP
    from rfrepro.runner.sweep import infer_arm
    from rfrepro.runner.validate import check_run_config

    with open_dict(cfg):
        cfg.threads = _threads_from_launcher(cfg)
        cfg.arm = cfg.arm or infer_arm(cfg)
    try:
        check_run_config(cfg)
    except ValueError as exc:
        return _not_finished(f"bad config: {exc}")
    os.environ["RFREPRO_EXECUTOR"] = _executor()
    try:
        rec = run_and_record(cfg)
    except OSError as exc:
        return _not_finished(f"cannot write results under {cfg.paths.results!r}: {exc.strerror or exc} "
                             "(set RFREPRO_RESULTS or paths.results= to a writable folder)")
    status = "skipped (finished before)" if rec.get("_skipped") else rec["status"]
    metrics = rec.get("metrics") or {}
    shown = ", ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float))
    print(f"[{status}] {rec.get('study')} {rec.get('arm')} seed={cfg.seed} run={rec.get('run_id')} {shown}")
    if rec["status"] != "ok":
        where = f"{cfg.paths.results}/runs/{cfg.study.paper}-{cfg.study.item}/{rec.get('run_id')}.json"
        first = str(rec.get("error") or rec["status"]).splitlines()[0]
        hint = f"; {MIRROR_HELP}" if rec["status"] == "unavailable" else ""
        return _not_finished(f"run {rec.get('run_id')} {rec['status']}: {first} (record: {where}){hint}")
    return metrics.get("error")


def main() -> None:
    import warnings

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
        sys.exit(2)
    hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")(task)()


if __name__ == "__main__":
    main()
