"""The lock file: its hash, its pins, and the check cluster workers run."""

from __future__ import annotations

import hashlib
import re
from importlib import metadata
from pathlib import Path

import pytest

from rfrepro import lock

REPO = Path(__file__).resolve().parents[2]


def _write_lock(path: Path, pins: dict[str, str], marker: dict[str, str] | None = None) -> Path:
    lines = []
    for name, version in pins.items():
        tail = f" ; {marker[name]}" if marker and name in marker else ""
        lines += [f"{name}=={version}{tail} \\", "    --hash=sha256:" + "ab" * 32, "    # via x"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lock_hash_is_the_files_sha256(tmp_path, monkeypatch):
    path = _write_lock(tmp_path / "requirements.lock", {"numpy": "1.0"})
    monkeypatch.setenv(lock.LOCK_ENV, str(path))
    assert lock.lock_hash() == hashlib.sha256(path.read_bytes()).hexdigest()
    monkeypatch.setenv(lock.LOCK_ENV, str(tmp_path / "absent.lock"))
    assert lock.lock_hash() is None
    with pytest.raises(RuntimeError, match="no requirements.lock found"):
        lock.check_locked_env()


def test_markers_for_other_platforms_are_left_out(tmp_path):
    path = _write_lock(tmp_path / "l.lock", {"numpy": "1.0", "pywin32": "306", "Typing_Extensions": "4"},
                       marker={"pywin32": 'sys_platform == "win32" and sys_platform == "cygwin"',
                               "Typing_Extensions": 'python_version >= "3"'})
    assert lock.locked_versions(path) == {"numpy": "1.0", "typing-extensions": "4"}


def test_check_passes_on_installed_versions_and_names_differences(tmp_path, monkeypatch):
    have = {n: metadata.version(n) for n in ("numpy", "pooch", "scikit-learn")}
    path = _write_lock(tmp_path / "requirements.lock", have)
    monkeypatch.setenv(lock.LOCK_ENV, str(path))
    lock.check_locked_env()  # the same versions: no error
    _write_lock(path, {**have, "numpy": "0.0.1", "no-such-package-here": "1.0"})
    with pytest.raises(RuntimeError) as info:
        lock.check_locked_env()
    msg = str(info.value)
    assert "\n" not in msg
    assert f"numpy {have['numpy']} (locked 0.0.1)" in msg
    assert "no-such-package-here missing (locked 1.0)" in msg
    assert "pooch" not in msg and "make setup" in msg


def test_repo_lock_pins_every_declared_dependency():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11, what the lock is made for
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    names = {re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0] for d in declared}
    pins = lock.locked_versions(REPO / lock.LOCK_NAME)
    assert {lock._canonical(n) for n in names} <= set(pins)
    lines = (REPO / lock.LOCK_NAME).read_text().splitlines()
    # every pin is followed by its hashes (pip --require-hashes refuses otherwise)
    pinned = [i for i, line in enumerate(lines) if re.match(r"[A-Za-z0-9].*==", line)]
    assert len(pinned) == len(pins)
    assert all(lines[i + 1].strip().startswith("--hash=sha256:") for i in pinned)


def test_this_environment_is_the_locked_one():
    """`make setup` installs exactly the lock; a drift (a hand-installed upgrade) fails here."""
    lock.check_locked_env()
