"""One JSON record per run, written atomically; the table is built from them alone.

Paths come from :class:`rfrepro.layout.ResultsLayout`.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from pathlib import Path

import pandas as pd

from rfrepro.atomic import atomic_write_text, jsonable
from rfrepro.layout import ResultsLayout

#: Record statuses. Only FINISHED counts as done; the others are tried again. UNAVAILABLE: its
#: data could not be had; REFUSED: it needs more memory than its budget (``max_memory_gb``).
FINISHED, FAILED, UNAVAILABLE, REFUSED = "ok", "failed", "unavailable", "refused"
STATUSES = (FINISHED, FAILED, UNAVAILABLE, REFUSED)
#: What a sweep reports for a run another process holds the lock of (never written to a record).
BUSY = "busy"


class RecordStore:
    """The run records of one study under ``root/runs/<slug>/``."""

    def __init__(self, root: str | Path, slug: str):
        self.layout = ResultsLayout(root)
        self.root = self.layout.root
        self.slug = slug
        self.dir = self.layout.study_runs(slug)

    def path(self, run_id: str) -> Path:
        return self.layout.record(self.slug, run_id)

    def write(self, record: dict) -> Path:
        path = self.path(record["run_id"])
        atomic_write_text(path, json.dumps(jsonable(record), indent=1, sort_keys=True))
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
        return RunLock(self.layout.run_lock(self.slug, run_id))

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


def _open_existing(path: Path) -> int:
    """Open an existing file, for writing where allowed: over NFS an exclusive flock needs it."""
    try:
        return os.open(path, os.O_RDWR)
    except PermissionError:
        return os.open(path, os.O_RDONLY)


class RunLock:
    """An atomic claim on one run (``O_CREAT | O_EXCL``), so two sweeps never compute it twice.

    The file holds ``host pid time``. A lock left by a process that died on
    this host is stale and taken over; one held by a live process is
    respected. Another host's process cannot be checked from here, so the
    holder touches its lock every ``HEARTBEAT`` seconds and a lock from another
    host untouched for ``LEASE`` seconds is stale (a node that died). Of
    several processes that find the same stale lock, one takes it over
    (:meth:`_take_over`).
    """

    HEARTBEAT = 30.0
    LEASE = 180.0

    def __init__(self, path: Path):
        self.path = Path(path)
        self.held = False
        self._beat: threading.Event | None = None

    def _stale(self, st: os.stat_result, text: str) -> bool:
        """Whether the lock file read as (``st``, ``text``) was left by a process that is gone."""
        age = time.time() - st.st_mtime
        try:
            host, pid, _ = text.split(" ", 2)
            pid = int(pid)
        except ValueError:
            # unreadable: a writer between create and write, or garbage; old garbage is stale
            return age > 60
        if host != socket.gethostname():
            return age > self.LEASE
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def _take_over(self) -> bool:
        """Remove the lock file if it is stale; True when it is gone (so try to create it again).

        Judging and removing by name would race: two processes that found the
        same stale lock would both remove "it", the second removing the new
        lock the first had just made, and both would run. So the file is judged
        and removed under an exclusive ``flock`` of it, and only while its name
        still points to it: a second taker waits, then finds the name gone or
        pointing to a newer file, which the next attempt judges afresh. The
        kernel drops the flock of a process that dies.
        """
        try:
            fd = _open_existing(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False  # cannot be opened, so cannot be judged: respected
        with os.fdopen(fd, "rb") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            st = os.fstat(fh.fileno())
            try:
                if not os.path.samestat(st, os.stat(self.path)):
                    return True
            except FileNotFoundError:
                return True
            if not self._stale(st, fh.read().decode("utf-8", "replace")):
                return False
            self.path.unlink()
            return True

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # less the umask
            except FileExistsError:
                if self._take_over():
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
