"""Locating and composing the Hydra configuration, with clear errors for bad names."""

from __future__ import annotations

import difflib
import math
import os

from omegaconf import DictConfig, OmegaConf

from rfrepro.layout import conf_dir, project_root  # noqa: F401 - re-exported for callers

# N = ceil(c ln^2 m): the feature count of Sun et al.'s learning-rate experiment.
OmegaConf.register_new_resolver(
    "ceil_c_ln2", lambda m, c: max(1, math.ceil(float(c) * math.log(float(m)) ** 2)), replace=True
)
# A value that defaults to the model's lambda (the leverage-score sampler's mu, as in Sun et
# al.'s code) has none to take when lambda is chosen by CV (model.lam: cv, the ad-hoc default):
# it then takes the given fallback instead of the string "cv".
OmegaConf.register_new_resolver(
    "unless_cv", lambda value, fallback: fallback if value == "cv" else value, replace=True
)

#: Config groups whose option names are checked before composing.
GROUPS = ("dataset", "method", "model", "experiment")


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


def compose_message(exc: BaseException) -> str:
    """Hydra's or OmegaConf's composition error as one line (Hydra puts its hint on the second line)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines[:2])[:300] or type(exc).__name__


def check_composes(overrides: list[str]) -> DictConfig:
    """``compose(overrides)``, with any composition error (an unknown key, a bad value) as one-line ValueError."""
    try:
        return compose(overrides)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - Hydra's errors are many types; the user needs one line
        raise ValueError(compose_message(exc)) from None


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
        try:
            OmegaConf.update(cfg, ov.key_or_group, ov.value(), merge=True,
                             force_add=ov.is_force_add() or ov.is_add())
        except Exception:  # noqa: BLE001 - e.g. a key the config lacks: Hydra's compose says it best
            return compose(overrides)
    return cfg
