"""The locked environment: which lock file, its hash, and whether this process runs it.

``requirements.lock`` (pip-tools' ``pip-compile --generate-hashes``, made by
``make lock``) pins every package with its hashes; ``make setup`` installs
exactly from it. A record carries :func:`lock_hash` beside the package versions,
and cluster workers call :func:`check_locked_env` so that a node with other
versions refuses to run instead of producing other numbers.

The lock file is looked up in ``$RFREPRO_LOCK``, else at the root of the
checkout this package is installed from (``make setup`` installs it editable).
"""

from __future__ import annotations

import hashlib
import os
import re
from importlib import metadata
from pathlib import Path

from rfrepro.layout import project_root

__all__ = ["LOCK_ENV", "LOCK_NAME", "check_locked_env", "lock_file", "lock_hash", "locked_versions"]

LOCK_ENV = "RFREPRO_LOCK"
LOCK_NAME = "requirements.lock"

# "name==version" at the start of a requirement line, optional marker after ";"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)\s*(?:;([^\\]*))?")


# Installers, pinned so that `make setup` is repeatable, but they do not enter
# a result: a worker whose pip differs is not refused.
_INSTALLERS = frozenset({"pip", "setuptools"})


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_file() -> Path | None:
    """Path of the lock file in force, or None when there is none."""
    env = os.environ.get(LOCK_ENV)
    if env:
        path = Path(env).expanduser()
        return path if path.is_file() else None
    path = project_root() / LOCK_NAME
    return path if path.is_file() else None


def lock_hash() -> str | None:
    """Hex sha256 of the lock file's bytes (None without a lock file)."""
    path = lock_file()
    if path is None:
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def locked_versions(path: str | os.PathLike | None = None) -> dict[str, str]:
    """{canonical package name: pinned version} for the lock's lines that apply here.

    Lines whose environment marker does not hold on this interpreter (another
    platform or Python) are left out.
    """
    from packaging.markers import Marker

    path = Path(path) if path is not None else lock_file()
    if path is None:
        return {}
    pins = {}
    for line in path.read_text().splitlines():
        m = _PIN.match(line.strip())
        if not m:
            continue
        name, version, marker = m.groups()
        if marker and marker.strip() and not Marker(marker.strip()).evaluate():
            continue
        pins[_canonical(name)] = version
    return pins


def check_locked_env() -> None:
    """Raise RuntimeError when installed versions differ from the lock (or there is no lock).

    The message is one line naming the lock, the first few differences and the
    command that fixes it.
    """
    path = lock_file()
    if path is None:
        raise RuntimeError(
            f"no {LOCK_NAME} found (set {LOCK_ENV} to its path): cannot check that this "
            "process runs the locked environment")
    wrong = []
    for name, want in sorted(locked_versions(path).items()):
        if name in _INSTALLERS:
            continue
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "missing"
        if have != want:
            wrong.append(f"{name} {have} (locked {want})")
    if wrong:
        shown = ", ".join(wrong[:5]) + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else "")
        raise RuntimeError(
            f"environment differs from {path.name} ({lock_hash()[:12]}): {shown}; "
            f"install it with `make setup` (pip install --require-hashes -r {path.name})")
