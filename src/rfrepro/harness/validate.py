"""Checks of a composed run config that Hydra cannot express: one clear line per problem."""

from __future__ import annotations

import numbers

from omegaconf import DictConfig


def _int_at_least(value, name: str, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def check_run_config(cfg: DictConfig) -> None:
    """Raise ValueError naming the key and value for a config no run can use."""
    _int_at_least(cfg.seed, "seed", 0)
    if cfg.threads is not None:
        _int_at_least(cfg.threads, "threads", 1)
    ds = cfg.dataset
    for key in ("n_train", "n_test", "n_val"):
        if key in ds and ds[key] is not None and key != "n_val":
            _int_at_least(ds[key], f"dataset.{key}", 1)
    sub = ds.get("subsample") or {}
    for key in ("n_train", "n_test"):
        if sub.get(key) is not None:
            _int_at_least(sub[key], f"dataset.subsample.{key}", 1)
    if cfg.eval.kernel_error:
        _int_at_least(cfg.eval.kernel_error_points, "eval.kernel_error_points", 2)
    _int_at_least(cfg.eval.test_chunk_rows, "eval.test_chunk_rows", 1)
    _int_at_least(cfg.eval.get("warmup_rows", 0), "eval.warmup_rows", 0)
    if not isinstance(cfg.eval.get("share_fit", False), bool):
        raise ValueError(f"eval.share_fit must be true or false, got {cfg.eval.share_fit!r}")
    if str(cfg.dtype) not in ("float64", "float32"):
        raise ValueError(f"dtype must be float64 or float32, got {cfg.dtype!r}")
