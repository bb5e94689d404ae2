"""A composed run config checked before anything runs, declaratively: one line naming the key.

Two sources of truth, both in scikit-learn's constraint language
(``sklearn.utils._param_validation``):

- the run's own keys: :data:`RUN_CONSTRAINTS` below (seed, threads, dtype,
  dataset sizes, ``eval.*``, the kernel's bandwidth);
- the feature map's and the model's parameters: the ``_parameter_constraints``
  each estimator class declares beside its ``__init__`` (as scikit-learn's do).
  A key of ``method.*`` / ``model.*`` that is not a parameter of its class is
  refused too.

A bad value raises ``ValueError("method.n_components must be an int in the
range [1, inf), got -5")``; the entry points turn it into one line and exit
status 2, before any record is written.

>>> from rfrepro.harness.run.config import compose
>>> check_run_config(compose(["seed=3"]))
>>> check_run_config(compose(["method.n_components=-5"]))
Traceback (most recent call last):
...
ValueError: method.n_components must be an int in the range [1, inf), got -5
"""

from __future__ import annotations

import importlib
import re
from numbers import Integral

from omegaconf import DictConfig, OmegaConf
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)

from rfrepro.features._base import NONNEGATIVE_INT, POSITIVE_INT, POSITIVE_REAL, SIGMA
from rfrepro.harness.paths import check_writable
from rfrepro.harness.run.config import compose_cached, compose_message

#: every key of a run config that a run reads directly, and what it may be
RUN_CONSTRAINTS: dict[str, list] = {
    "seed": NONNEGATIVE_INT,
    "threads": [None, *POSITIVE_INT],
    "dtype": [StrOptions({"float64", "float32"})],
    "force": ["boolean"],
    "smoke": ["boolean"],
    "kernel.sigma": [None, *SIGMA],
    "kernel.sigma_scale": [None, *POSITIVE_REAL],
    "dataset.n_train": [None, *POSITIVE_INT],
    "dataset.n_test": [None, *POSITIVE_INT],
    "dataset.subsample.n_train": [None, *POSITIVE_INT],
    "dataset.subsample.n_test": [None, *POSITIVE_INT],
    "eval.kernel_error": ["boolean"],
    "eval.kernel_error_points": [Interval(Integral, 2, None, closed="left")],
    "eval.kernel_image_points": NONNEGATIVE_INT,
    "eval.predict": ["boolean"],
    "eval.train_metrics": ["boolean"],
    "eval.test_chunk_rows": POSITIVE_INT,
    "eval.warmup_rows": NONNEGATIVE_INT,
    "eval.time_repeats": POSITIVE_INT,
    "eval.time_repeats_budget_s": [None, *POSITIVE_REAL],
    "eval.share_fit": ["boolean"],
}
#: config keys of an estimator node that are not constructor parameters
_NODE_KEYS = ("name", "_target_")


def _one_line(exc: InvalidParameterError, key: str, value) -> str:
    """scikit-learn's "The 'p' parameter of C must be X. Got v instead." as "key must be X, got v"."""
    text = str(exc)
    m = re.search(r" must be (.*)\. Got .* instead\.?$", text, flags=re.S)
    allowed = m.group(1) if m else text
    return f"{key} must be {allowed}, got {value!r}"


def _check(constraints: dict, values: dict, prefix: str, owner: str) -> None:
    for name, value in values.items():
        if name not in constraints:
            continue
        try:
            validate_parameter_constraints({name: constraints[name]}, {name: value}, caller_name=owner)
        except InvalidParameterError as exc:
            raise ValueError(_one_line(exc, f"{prefix}{name}", value)) from None


#: rows of the generated array a map without ``_parameter_constraints`` is fitted on before dispatch
PROBE_ROWS = 16
#: (node key, target, parameters, input dimension, task) -> the probe's one-line complaint or None
_PROBED: dict[tuple, str | None] = {}


def _input_dim(dataset) -> int:
    """The dataset's number of input features as its config states it (``n_features`` anywhere in it),
    2 for a generated dataset that states none (this project's are planar), else 8."""
    found = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "n_features" and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    found.append(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(dataset)
    return max(found) if found else 2 if dataset.get("generator") else 8


def _named(exc: Exception, key: str, cls_name: str, own: dict) -> str:
    """``method.n_components=-5: MyMap rejected it: ValueError: ...`` (the parameter the message names first)."""
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    said = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    hits = [(m.start(), name) for name in own
            for m in [re.search(rf"(?<![\w.]){re.escape(str(name))}(?!\w)", text)] if m]
    if not hits:
        return f"{key}: {cls_name} rejected its parameters: {said}"
    name = min(hits)[1]
    return f"{key}.{name}={own[name]!r}: {cls_name} rejected it: {said}"


def _probe(cfg: DictConfig, key: str, target: str, cls_name: str) -> None:
    """Build an estimator whose class declares no constraints; fit a map on a few generated rows.

    Once per distinct (target, parameters, input dimension, task) in a
    process, so once per plan. The bandwidth rule (``kernel.sigma: median``)
    is a number by the time a run builds its map: the probe gives it 1.0. A
    map that fails on :data:`PROBE_ROWS` rows is tried once more on as many
    rows as its largest integer parameter (up to 2048), so that a map that
    needs more rows than it has landmarks is not refused for it.
    """
    import warnings

    import numpy as np
    from hydra.utils import instantiate
    from omegaconf import open_dict

    from rfrepro.runner.steps import SHIFT_INVARIANT

    probe_cfg = cfg.copy()
    kernel = probe_cfg.get("kernel")
    if kernel is not None and isinstance(kernel.get("sigma"), str):
        with open_dict(probe_cfg):
            probe_cfg.kernel.sigma = 1.0 if kernel.get("name") in SHIFT_INVARIANT else None
    params = OmegaConf.to_container(probe_cfg[key], resolve=True)
    params.pop("name", None)
    own = {k: v for k, v in params.items() if k not in _NODE_KEYS}
    dataset = OmegaConf.to_container(cfg.get("dataset") or {}, resolve=False)
    dim, task = _input_dim(dataset), str(dataset.get("task"))
    ident = (key, target, repr(sorted(own.items(), key=str)), dim, task)
    if ident not in _PROBED:
        ints = [v for v in own.values() if isinstance(v, int) and not isinstance(v, bool)]
        sizes = [PROBE_ROWS] + [n for n in [min(max(ints, default=0) + 1, 2048)] if n > PROBE_ROWS]
        problem = None
        for rows in sizes:
            rng = np.random.default_rng(0)
            X = rng.standard_normal((rows, dim))
            y = rng.standard_normal(rows) if task == "regression" else np.arange(rows) % 2 * 2 - 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = instantiate(params)
                    if key == "method":  # a model is only built: its fit needs the features
                        est.fit(X, y)
                        est.transform(X[:2])
                problem = None
                break
            except Exception as exc:  # noqa: BLE001 - any complaint of the user's class, named in one line
                problem = _named(exc, key, cls_name, own)
        _PROBED[ident] = problem
    if _PROBED[ident] is not None:
        raise ValueError(_PROBED[ident])


def check_estimator_node(node, key: str, cfg: DictConfig | None = None) -> None:
    """Check a ``method`` / ``model`` node against its class's ``_parameter_constraints``.

    A class that declares none is built (a map also fitted on a few generated
    rows) when the run config ``cfg`` is given: see :func:`_probe`.
    """
    if node is None:
        return
    try:
        params = OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else dict(node)
    except Exception as exc:  # noqa: BLE001 - e.g. ${kernel.degree} under a kernel that has none
        raise ValueError(f"{key}: {str(exc).splitlines()[0]} (does the kernel suit this {key}?)") from None
    target = params.get("_target_")
    if not target:
        return
    module, _, name = str(target).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ValueError(f"{key}._target_: no class {target!r}") from None
    constraints = getattr(cls, "_parameter_constraints", None)
    if constraints is None:  # a class that declares nothing: built (and a map fitted) on a few rows
        if cfg is not None:
            _probe(cfg, key, str(target), name)
        return
    own = {k: v for k, v in params.items() if k not in _NODE_KEYS}
    unknown = sorted(set(own) - set(constraints))
    if unknown:
        raise ValueError(f"{key}.{unknown[0]} is not a parameter of {name} (its parameters: "
                         f"{', '.join(sorted(constraints))})")
    # a nested estimator (CRAFT's up-projection) is checked against its own class
    nested = {k for k, v in own.items() if isinstance(v, dict) and "_target_" in v}
    for sub in sorted(nested):
        check_estimator_node(own[sub], f"{key}.{sub}")
    _check(constraints, {k: v for k, v in own.items() if k not in nested}, f"{key}.", name)


def check_run_config(cfg: DictConfig) -> None:
    """Raise ValueError (one line naming the key, the value and what is allowed) for a bad run config."""
    values = {}
    for key in RUN_CONSTRAINTS:
        if OmegaConf.select(cfg, key, default="__absent__") != "__absent__":
            values[key] = OmegaConf.select(cfg, key)
    _check(RUN_CONSTRAINTS, values, "", "the run config")
    check_estimator_node(cfg.get("method"), "method", cfg)
    check_estimator_node(cfg.get("model"), "model", cfg)


def _is_hydra_key(override: str) -> bool:
    key = override.lstrip("+~").split("=", 1)[0]
    return key == "hydra" or key.startswith(("hydra.", "hydra/"))


def _parses(parser, override: str) -> bool:
    try:
        parser.parse_override(override)
    except Exception:  # noqa: BLE001
        return False
    return True


def check_command(args: list[str], multirun: bool) -> list[str]:
    """One line per problem with the command's input, found before anything runs ([] when fine).

    Composes and checks the config of every job of the command (a multirun's
    sweep expanded as Hydra's basic sweeper does) and probes each results
    folder. A command with Hydra's own flags (``--cfg``, ``--help``, ``-cn``...)
    is left to Hydra.
    """
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
            cfg = compose_cached(job)
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
