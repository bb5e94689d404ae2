"""One JSON record per run, written atomically; the table is built from them alone.

Layout under the results root::

    runs/<paper>-<item>/<run_id>.json   one record per run (status ok | failed | unavailable)
    runs/<paper>-<item>/<run_id>.lock   present while a process computes that run
    tables/<paper>-<item>.parquet       one tidy row per run
    figures/<paper>-<item>.{png,pdf}
    claims/<paper>-<item>.json
"""

from __future__ import annotations

import json
import math
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: Record statuses. Only FINISHED counts as done; the others are tried again. UNAVAILABLE: its
#: data could not be had; REFUSED: it needs more memory than its budget (``max_memory_gb``).
FINISHED, FAILED, UNAVAILABLE, REFUSED = "ok", "failed", "unavailable", "refused"
STATUSES = (FINISHED, FAILED, UNAVAILABLE, REFUSED)


def _umask() -> int:
    # os.umask can only be read by setting it; do it once per process
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return _UMASK


_UMASK: int | None = None


def atomic_replace(path: Path, write) -> None:
    """Create ``path`` through ``write(tmp_path)`` + rename: never a half file.

    The temp name is unique (two processes writing the same file do not
    collide), and the file gets the user's umask (mkstemp alone gives 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_replace`)."""
    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    atomic_replace(path, write)


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

    def lock(self, run_id: str) -> RunLock:
        return RunLock(self.dir / f"{run_id}.lock")

    def records(self) -> list[dict]:
        out = []
        for path in sorted(self.dir.glob("*.json")):
            if path.name.startswith("."):  # a temp file being written
                continue
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


class RunLock:
    """An atomic claim on one run (``O_CREAT | O_EXCL``), so two sweeps never compute it twice.

    The file holds ``host pid time``. A lock left by a process that died on
    this host is stale and taken over; one held by a live process is
    respected. Another host's process cannot be checked from here, so the
    holder touches its lock every ``HEARTBEAT`` seconds and a lock from another
    host untouched for ``LEASE`` seconds is stale (a node that died).
    """

    HEARTBEAT = 30.0
    LEASE = 180.0

    def __init__(self, path: Path):
        self.path = Path(path)
        self.held = False
        self._beat: threading.Event | None = None

    def _owner(self) -> tuple[str, int] | None:
        try:
            host, pid, _ = self.path.read_text().split(" ", 2)
            return host, int(pid)
        except (OSError, ValueError):
            return None

    def _stale(self) -> bool:
        owner = self._owner()
        if owner is None:
            # unreadable: a writer between create and write, or garbage; old garbage is stale
            try:
                return time.time() - self.path.stat().st_mtime > 60
            except OSError:
                return True
        host, pid = owner
        if host != socket.gethostname():
            try:
                return time.time() - self.path.stat().st_mtime > self.LEASE
            except OSError:
                return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666 & ~_umask())
            except FileExistsError:
                if self._stale():
                    self.path.unlink(missing_ok=True)
                    continue
                return False
            with os.fdopen(fd, "w") as fh:
                fh.write(f"{socket.gethostname()} {os.getpid()} {time.time():.0f}")
            self.held = True
            self._beat = threading.Event()
            threading.Thread(target=self._heartbeat, args=(self._beat,), daemon=True).start()
            return True
        return False

    def _heartbeat(self, stop: threading.Event) -> None:
        while not stop.wait(self.HEARTBEAT):
            try:
                os.utime(self.path)
            except OSError:
                return

    def release(self) -> None:
        if self._beat is not None:
            self._beat.set()
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
