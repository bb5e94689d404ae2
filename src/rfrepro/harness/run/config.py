"""Locating and composing the Hydra configuration, with clear errors for bad names."""

from __future__ import annotations

import difflib
import math
import re

from omegaconf import DictConfig, OmegaConf

from rfrepro.harness.catalog import config_dirs, options
from rfrepro.harness.run.arms import strip as strip_declarations
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


_ABSENT = object()


def dotted_keys(cfg) -> list[str]:
    """Every key of ``cfg`` as a dotted path (nodes and leaves; list items are not keys)."""
    out = []

    def walk(node, prefix: str) -> None:
        for k in node.keys():
            path = f"{prefix}{k}"
            out.append(path)
            child = node._get_node(k)
            if isinstance(child, DictConfig) and not child._is_none() and not child._is_interpolation():
                walk(child, f"{path}.")

    walk(cfg, "")
    return out


class UnknownKey(ValueError):
    """A ``key=value`` override of a key the composed config lacks: one line with the closest keys."""

    def __init__(self, key: str, cfg) -> None:
        self.key = key
        close = difflib.get_close_matches(key, dotted_keys(cfg), n=3, cutoff=0.8)
        if close:
            hint = f"did you mean {' or '.join(close)}?"
        else:  # what the nearest node that exists has
            parent = key.rpartition(".")[0]
            while parent and OmegaConf.select(cfg, parent, default=_ABSENT) is _ABSENT:
                parent = parent.rpartition(".")[0]
            node = OmegaConf.select(cfg, parent) if parent else cfg
            if isinstance(node, DictConfig):
                name = node.get("name") if parent in GROUPS else None
                hint = f"{f'{parent}={name}' if name else parent or 'the config'} has {', '.join(map(str, node))}"
            else:
                hint = f"{parent} is a value, not a node"
        super().__init__(f"Could not override '{key}': unknown key; {hint}")


def _hydra_compose(overrides: list[str]) -> DictConfig:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=search_path_overrides() + overrides)
    strip_declarations(cfg)
    return cfg


def _is_group(override: str) -> bool:
    key = override.lstrip("+~").split("=", 1)[0]
    return "." not in key and key in GROUPS


def compose(overrides: list[str] | None = None) -> DictConfig:
    """Compose the run config from ``conf/`` with Hydra overrides (no Hydra app needed).

    A ``key=value`` override of a key the config lacks raises :class:`UnknownKey`
    (with the closest keys of the config its group choices compose), not
    Hydra's advice to add it with ``+key``.
    """
    overrides = list(overrides or [])
    check_overrides(overrides)
    try:
        return _hydra_compose(overrides)
    except Exception as exc:
        m = re.match(r"Could not override '([^']+)'", str(exc))
        if m is None:
            raise
        try:
            base = _hydra_compose([o for o in overrides if _is_group(o)])
        except Exception:  # noqa: BLE001 - the group choices alone fail: Hydra's own error says more
            raise exc from None
        if OmegaConf.select(base, m.group(1), default=_ABSENT) is not _ABSENT:
            raise  # the key exists: its value is what Hydra refused
        raise UnknownKey(m.group(1), base) from None


def search_path_overrides() -> list[str]:
    """``hydra.searchpath=[...]`` for the config directories on ``RFREPRO_CONFIG_PATH`` (none: ``[]``):
    a user's own method, model or dataset yamls, composed as if they were in ``conf/``."""
    extra = config_dirs()[1:]
    return [f"hydra.searchpath=[{','.join('file://' + str(p.resolve()) for p in extra)}]"] if extra else []


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
        add = ov.is_force_add() or ov.is_add()
        if not add and OmegaConf.select(cfg, ov.key_or_group, default=_ABSENT) is _ABSENT:
            raise UnknownKey(ov.key_or_group, _BASES[groups])  # as Hydra's compose would refuse it
        try:
            OmegaConf.update(cfg, ov.key_or_group, ov.value(), merge=True, force_add=add)
        except Exception:  # noqa: BLE001 - e.g. a value of the wrong type: Hydra's compose says it best
            return compose(overrides)
    return cfg
