"""One JSON record per run, written atomically; the table is built from them alone.

Layout under the results root::

    runs/<paper>-<item>/<run_id>.json   one record per run (status ok | failed | unavailable)
    tables/<paper>-<item>.parquet       one tidy row per run
    figures/<paper>-<item>.{png,pdf}
    claims/<paper>-<item>.json
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

FINISHED = "ok"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file + rename: never a half file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    return obj


class RecordStore:
    """The run records of one study under ``root/runs/<slug>/``."""

    def __init__(self, root: str | Path, slug: str):
        self.root = Path(root)
        self.slug = slug
        self.dir = self.root / "runs" / slug

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.json"

    def write(self, record: dict) -> Path:
        path = self.path(record["run_id"])
        atomic_write_text(path, json.dumps(_jsonable(record), indent=1, sort_keys=True))
        return path

    def read(self, run_id: str) -> dict | None:
        path = self.path(run_id)
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None  # a damaged record counts as not finished: the run is redone

    def is_finished(self, run_id: str) -> bool:
        rec = self.read(run_id)
        return rec is not None and rec.get("status") == FINISHED

    def records(self) -> list[dict]:
        out = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                out.append(json.loads(path.read_text()))
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
        return out

    def table(self) -> pd.DataFrame:
        return records_to_table(self.records())


def records_to_table(records: list[dict]) -> pd.DataFrame:
    """Flatten records into one tidy row per run (nested keys joined by '.')."""
    if not records:
        return pd.DataFrame()
    flat = [{k: v for k, v in r.items() if k != "config"} for r in records]
    df = pd.json_normalize(flat, sep=".")
    # parquet wants one type per column: lists and mixed objects become JSON text
    for col in df.columns:
        if df[col].dtype == object:
            vals = df[col].dropna()
            if len(vals) and not all(isinstance(v, str) for v in vals):
                df[col] = df[col].map(lambda v: v if v is None or isinstance(v, str) else json.dumps(v))
    return df.sort_values("run_id").reset_index(drop=True)
