"""A dataset config resolved once: :class:`DatasetSpec`, what loading and fingerprinting both take.

A run's ``dataset`` node (an OmegaConf node with interpolations, or a plain
mapping) is turned into a plain dict, checked against the schema
(:func:`rfrepro.data.schema.validate_config`; generated datasets have a schema
of their own, checked when they are drawn) and keyed by its JSON text with
sorted keys, once. :func:`rfrepro.data.load_dataset` and
:func:`rfrepro.data.fingerprint` accept the config or its spec and resolve a
config at their entry; everything below them (the in-process memos included)
takes the spec, so nothing is converted or validated twice.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["DatasetSpec", "dataset_spec", "resolved_config"]


@dataclass(frozen=True)
class DatasetSpec:
    """A resolved, validated dataset config; equal and hashed by ``key``, so it keys a memo.

    ``key`` is ``json.dumps(config, sort_keys=True)``: the text the in-process
    memos were keyed by before there was a spec. :attr:`config` is the config
    as that text reads back (keys sorted at every level: the order in which
    every run has loaded its data, e.g. the order sources are pooled in), a
    fresh copy on every access, so a caller that fills in defaults cannot
    change the spec.
    """

    key: str
    _config: dict = field(compare=False, repr=False)

    @property
    def config(self) -> dict:
        """The config as a plain dict (a copy)."""
        return copy.deepcopy(self._config)

    @property
    def name(self) -> str | None:
        return self._config.get("name")

    @property
    def generator(self) -> str | None:
        """The generator's name for a generated dataset, else None."""
        return self._config.get("generator")

    def get(self, key: str, default=None):
        """A top-level value of the config (not a copy: do not change it)."""
        return self._config.get(key, default)


def dataset_spec(cfg: Mapping | DatasetSpec) -> DatasetSpec:
    """``cfg`` resolved once (a spec is returned as it is): interpolations resolved, a plain
    dict, checked against the schema unless generated; raises ``ValueError`` as
    :func:`~rfrepro.data.schema.validate_config` does."""
    if isinstance(cfg, DatasetSpec):
        return cfg
    # imported here: the schema pulls in the file formats (pandas), needed only on use
    from rfrepro.data.schema import plain_config, validate_config

    plain = plain_config(cfg)
    if "generator" not in plain:
        validate_config(plain)
    try:
        key = json.dumps(plain, sort_keys=True)
    except TypeError:  # a value JSON cannot hold (a hand-made config): keyed by its text
        return DatasetSpec(json.dumps(plain, sort_keys=True, default=str), plain)
    # the config as its key reads back: what loading and fingerprinting have always been given
    return DatasetSpec(key, json.loads(key))


def resolved_config(cfg: Mapping | DatasetSpec, *, generated_ok: bool = False) -> dict:
    """The plain, validated dict of ``cfg``: a spec's :attr:`~DatasetSpec.config`, or a mapping
    resolved and validated here, once, in its own key order (as the file loaders have always
    read a config given to them directly)."""
    if isinstance(cfg, DatasetSpec):
        return cfg.config
    from rfrepro.data.schema import plain_config, validate_config

    top = plain_config(cfg)
    if not (generated_ok and "generator" in top):
        validate_config(top)
    return top
