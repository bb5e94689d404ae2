"""The saved-plan file (``plans/<slug>.json``): what a study's outputs are drawn from.

Written by the sweep (:func:`rfrepro.harness.run.plan.save_plan`), read by the
outputs, the report and the reference; its format: the study's title and
deviations, the user's overrides, ``code_modules`` (module path -> git blob
id, the code its runs can execute) and per run its id, compute id, code
version, arm, overrides, dataset, seed and data fingerprint.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from rfrepro.atomic import atomic_write_text, jsonable
from rfrepro.layout import ResultsLayout, study_slug


def write_plan(root: str | Path, name: str, doc: dict) -> Path:
    """Write ``doc`` as the study's saved plan under ``root`` (atomically) and return its path."""
    path = ResultsLayout(root).plan(study_slug(name))
    atomic_write_text(path, json.dumps(jsonable(doc), indent=1))
    return path


def plan_file(root: str | Path, name: str) -> Path | None:
    """The study's saved plan under ``root``: ``plans/<slug>.json``, or its gzip-compressed copy
    ``plans/<slug>.json.gz`` (the reference results keep theirs compressed); None when never planned."""
    plain = ResultsLayout(root).plan(study_slug(name))
    for path in (plain, plain.with_name(plain.name + ".gz")):
        if path.is_file():
            return path
    return None


def load_plan(name: str, root: str | Path) -> dict | None:
    """The study's saved plan under ``root`` (``.json`` or ``.json.gz``), or None when it was never planned there."""
    path = plan_file(root, name)
    if path is None:
        return None
    try:
        data = path.read_bytes()
        return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)
    except FileNotFoundError:
        return None
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path} is not a readable plan ({exc}); run the study's sweep again") from None
