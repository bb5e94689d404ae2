"""Files written whole or not at all, readable by the group that shares them.

Every file the project writes (records, tables, figures, caches, downloaded
data) goes through :func:`atomic_replace`: a temp file in the same folder,
then one rename, so a reader never sees half a file and a killed writer
leaves none.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np


def file_mode() -> int:
    """The mode a new file of this process gets: ``0o666`` less the umask.

    Files made through a temp file (``mkstemp``: 0600) or by a library are
    given it, so that results and a data cache shared between users stay
    readable. The umask is read from ``/proc`` where there is one: ``os.umask``
    can only read it by setting it, which a thread creating a file meanwhile
    would see; elsewhere it is read that way once per process.
    """
    return 0o666 & ~_umask()


def _umask() -> int:
    global _UMASK
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
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
        os.chmod(tmp, file_mode())
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


def jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    return obj
