"""A run's identity: the whole computation, so a record is reused only for the same one.

``run_id`` hashes

- the fully resolved config, minus :data:`NOT_IDENTITY` (keys that cannot
  change what a run computes: where files go, labels, thread counts, the
  sweep's own grid description, the study's prose);
- the data actually read: the dataset variant loaded and the sha256 of every
  file it read (see :func:`rfrepro.data.fingerprint`);
- the code version: the package version and a hash of the source files of
  ``rfrepro`` (see :func:`code_version`).

``compute_id`` is the same without the study's name, so two studies that
contain the same computation share one result (the copy says ``reused_from``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

#: Config keys (dotted) that cannot change a run's result. Everything else is identity.
NOT_IDENTITY = (
    "paths",            # where data and results live (the data's bytes are hashed instead)
    "mirror",           # where the data came from (idem)
    "force",            # whether to redo a finished run
    "threads",          # BLAS/numba threads: timings change, results do not
    "arm",              # the sweep's label for the run
    "study.title",      # prose
    "deviations",       # prose: the study's declared differences from the paper
    "deviations_shared",  # prose: the differences its shared defaults declare (leaderboard/_base)
    "sweep",            # the grid a run was expanded from (the run's own values are in the config)
    "smoke_sweep",
    "hydra",
)
#: Removed as well from :func:`compute_id`: the study a computation belongs to.
STUDY_KEYS = ("study",)


#: The one package whose modules never run between loading a run's data and writing its
#: numbers: sweeps, pools, outputs, claims, plots, the report and the command line. Every other
#: module of ``rfrepro`` computes (data, features, models, metrics, one run's steps, identity)
#: and is hashed into the code version; editing a module of this package keeps every record
#: valid. A test checks that no computing module imports it.
ORCHESTRATION = "harness"


def source_digest(root: Path) -> str:
    """sha256 over the names and bytes of the ``.py`` files under ``root``, less :data:`ORCHESTRATION`."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] == ORCHESTRATION:
            continue
        h.update(rel.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``<package version>+src.<sha256 of the package's computing .py files, first 12 hex>``.

    A hash of the source rather than the git commit: it changes exactly when
    the code that computes a run changes (not for a README edit, nor for the
    package ``rfrepro.harness``, which only orchestrates and draws outputs), it is
    the same for a clean checkout and an installed copy, and it needs no git.
    Configs are not in it (the resolved config is hashed on its own);
    ``experiments/`` only draws outputs from records and is not in it either.
    """
    try:
        version = metadata.version("rfrepro")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        version = "0+unknown"
    return f"{version}+src.{source_digest(Path(__file__).resolve().parents[1])[:12]}"


def _drop(tree: dict, dotted: str) -> None:
    head, _, rest = dotted.partition(".")
    if head not in tree:
        return
    if rest:
        if isinstance(tree[head], dict):
            _drop(tree[head], rest)
    else:
        del tree[head]


def identity_config(cfg: DictConfig | dict, *, with_study: bool = True) -> dict:
    """The resolved config restricted to what defines the computation."""
    tree = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else json.loads(
        json.dumps(cfg, default=str))
    for key in NOT_IDENTITY + (() if with_study else STUDY_KEYS):
        _drop(tree, key)
    return tree


def identities(cfg, data: dict, code: str | None = None) -> tuple[str, str]:
    """(:func:`run_id`, :func:`compute_id`), resolving the config once."""
    tree = identity_config(cfg)
    code = code or code_version()
    rid = _digest({"config": tree, "data": data, "code": code})
    for key in STUDY_KEYS:
        _drop(tree, key)
    return rid, _digest({"config": tree, "data": data, "code": code})


def _digest(payload: dict) -> str:
    blob = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def run_id(cfg, data: dict, code: str | None = None) -> str:
    """Hash of the run's identity config, its data fingerprint and the code version."""
    return _digest({"config": identity_config(cfg), "data": data, "code": code or code_version()})


def compute_id(cfg, data: dict, code: str | None = None) -> str:
    """:func:`run_id` without the study: the same computation in any study."""
    return _digest({"config": identity_config(cfg, with_study=False), "data": data,
                    "code": code or code_version()})
