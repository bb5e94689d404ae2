"""Locating and composing the Hydra configuration, with clear errors for bad names."""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

# N = ceil(c ln^2 m): the feature count of Sun et al.'s learning-rate experiment.
OmegaConf.register_new_resolver(
    "ceil_c_ln2", lambda m, c: max(1, math.ceil(float(c) * math.log(float(m)) ** 2)), replace=True
)

#: Config groups whose option names are checked before composing.
GROUPS = ("dataset", "method", "model", "experiment")


def project_root() -> Path:
    """The repository root: RFREPRO_ROOT, else the checkout this package lives in, else cwd."""
    env = os.environ.get("RFREPRO_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]
    if (here / "conf" / "config.yaml").is_file():
        return here
    return Path.cwd()


def conf_dir() -> Path:
    path = project_root() / "conf"
    if not (path / "config.yaml").is_file():
        raise FileNotFoundError(
            f"no conf/config.yaml under {project_root()}; run from the rfrepro checkout "
            "or set RFREPRO_ROOT"
        )
    return path


def options(group: str) -> list[str]:
    """Option names of a config group (experiments as ``paper/item``)."""
    base = conf_dir() / group
    if not base.is_dir():
        return []
    # files starting with "_" are shared bases included by other configs, not options
    return sorted(
        str(p.relative_to(base).with_suffix("")).replace(os.sep, "/")
        for p in base.rglob("*.yaml")
        if not p.name.startswith("_")
    )


def check_overrides(overrides: list[str]) -> None:
    """Raise ValueError for an unknown option of a checked group, listing the valid ones."""
    for item in overrides:
        key, sep, value = item.lstrip("+~").partition("=")
        if not sep or key not in GROUPS:
            continue
        valid = options(key)
        for choice in value.split(","):
            if choice and choice != "null" and choice not in valid:
                close = difflib.get_close_matches(choice, valid, n=3, cutoff=0.5)
                hint = f"did you mean {' or '.join(close)}? " if close else ""
                raise ValueError(
                    f"unknown {key} {choice!r}; {hint}valid {key} names: {', '.join(valid)}"
                )


def compose(overrides: list[str] | None = None) -> DictConfig:
    """Compose the run config from ``conf/`` with Hydra overrides (no Hydra app needed)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    overrides = list(overrides or [])
    check_overrides(overrides)
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=overrides)
