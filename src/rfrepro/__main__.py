"""Hydra entry point: ``python -m rfrepro [overrides] [-m]`` runs one config per job.

Each job writes one record under ``<paths.results>/runs/<paper>-<item>/``;
``python -m rfrepro.reproduce <paper>/<item> --outputs-only`` or ``make report``
rebuilds the tables and figures from the records.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, open_dict

from rfrepro.config import check_overrides, conf_dir


def _threads_from_launcher(cfg: DictConfig):
    """Limit threads per job under the joblib launcher (cores // n_jobs)."""
    if cfg.threads is not None:
        return cfg.threads
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ValueError, ImportError):
        return None
    if "Joblib" in str(launcher.get("_target_", "")):
        from rfrepro.runner.env import threads_for

        n_jobs = int(launcher.get("n_jobs") or -1)
        import os

        return threads_for(os.cpu_count() if n_jobs < 1 else n_jobs)
    return None


def task(cfg: DictConfig) -> float | None:
    from rfrepro.runner.run import run_and_record
    from rfrepro.runner.sweep import infer_arm

    with open_dict(cfg):
        cfg.threads = _threads_from_launcher(cfg)
        cfg.arm = cfg.arm or infer_arm(cfg)
        cfg.pop("sweep", None)
        cfg.pop("smoke_sweep", None)
    rec = run_and_record(cfg)
    status = "skipped (finished before)" if rec.get("_skipped") else rec["status"]
    metrics = rec.get("metrics") or {}
    shown = ", ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float))
    print(f"[{status}] {rec['study']} {rec['arm']} seed={rec['seed']} {shown} {rec.get('error', '')}")
    return metrics.get("error")


def main() -> None:
    try:
        check_overrides([a for a in sys.argv[1:] if not a.startswith("-")])
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")(task)()


if __name__ == "__main__":
    main()
