"""Where results go and whether they can be written there: the results roots, writability and a full disk.

Shared by running (sweeps write records) and reporting (the report and the reference write outputs).
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from rfrepro.layout import default_root

#: the reference results' folder under a results root (``results/reference``)
REFERENCE = "reference"
#: the errors of a results folder that is full (no space left, or over its quota)
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def results_root(smoke: bool, overrides: list[str] = ()) -> str:
    """Where the study's records and outputs go: ``paths.results=`` if given, else $RFREPRO_RESULTS.

    A ``paths.results`` override is taken as it is (the runs and the outputs
    both go there); the default root gets a ``smoke/`` folder for smoke runs.
    """
    for o in reversed(list(overrides)):
        key, _, value = o.lstrip("+~").partition("=")
        if key == "paths.results" and value:
            return value
    base = os.environ.get("RFREPRO_RESULTS", "results")
    return os.path.join(base, "smoke") if smoke else base


def reference_root(results: str | Path | None = None) -> Path:
    """``<results>/reference`` (default ``results/reference``)."""
    return Path(results if results is not None else default_root()) / REFERENCE


def check_writable(root: str) -> None:
    """Raise ValueError (one line) when results cannot be written under ``root``; DiskFull when it is full."""
    path = Path(root)
    probe = path / "runs"
    try:
        probe.mkdir(parents=True, exist_ok=True)
        test = probe / f".write-test-{os.getpid()}"
        test.write_text("x")
        test.unlink()
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(root) from None
        raise ValueError(f"cannot write results under {root!r}: {exc.strerror or exc} "
                         "(set RFREPRO_RESULTS or paths.results= to a writable folder)") from None


class DiskFull(Exception):
    """The results folder ran out of space: the sweep stopped starting runs.

    ``finished`` of the ``total`` planned runs have a finished record (kept;
    None when not known, e.g. before the study was planned).
    """

    def __init__(self, root, finished: int | None = None, total: int | None = None):
        super().__init__(f"no space left on device under {root}")
        self.root, self.finished, self.total = str(root), finished, total

    def line(self) -> str:
        return disk_full_line(self.root, self.finished, self.total)


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an exception it was raised from or while handling, is a full disk or quota."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFull) or (isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def free_space(root) -> str:
    """The free space of the file system holding ``root`` (its nearest existing folder): ``12 KB free``."""
    path = Path(os.path.abspath(root))
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return f"{_size(shutil.disk_usage(path).free)} free"
    except OSError:
        return "free space unknown"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n} {unit}" if unit == "B" else f"{n:.0f} {unit}" if n >= 10 else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def disk_full_line(root, finished: int | None = None, total: int | None = None) -> str:
    """The one line a sweep stopped by a full disk prints (on stderr) instead of its summary."""
    kept = "" if total is None else f": {finished} of {total} runs finished and are kept"
    return (f"rfrepro: no space left on device under {root} ({free_space(root)}){kept}; "
            "free some space and run the same command again to resume")
