"""A full disk stops a sweep with one line and exit status 1; the finished runs are kept and the same
command resumes."""

import errno
import functools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rfrepro.harness.reproduce import main
from rfrepro.harness.run import pools as sweep_mod
from rfrepro.harness.run.grid import expand
from rfrepro.runner.store import RecordStore

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["dataset.n_train=150", "dataset.n_test=300"]
N_SMOKE = len(expand("sun2018/fig1", smoke=True))
LINE = re.compile(r"^rfrepro: no space left on device under (.+) \(.+ free\): (\d+) of (\d+) runs finished and "
                  r"are kept; free some space and run the same command again to resume$")


def _disk_lines(text: str) -> list[str]:
    """The lines of ``text`` about the disk (a progress bar's carriage returns end lines too)."""
    return [line for line in re.split(r"[\r\n]", text)
            if "no space left" in line.lower() or "errno 28" in line.lower()]


def _check_stopped(out: str, err: str, root: Path) -> list[dict]:
    """One line about the disk, no traceback, every record readable; the line counts the finished ones."""
    assert "Traceback" not in out + err, err[-3000:]
    lines = _disk_lines(out + err)
    assert len(lines) == 1 and lines[0] in err.splitlines(), err[-3000:]
    m = LINE.match(lines[0])
    assert m and m.group(1) == str(root) and int(m.group(3)) == N_SMOKE, lines[0]
    runs = root / "runs" / "sun2018-fig1"
    records = [json.loads(p.read_text()) for p in runs.glob("*.json")]  # temp files start with "." and are gone
    assert not list(runs.glob(".*")), list(runs.glob(".*"))
    finished = [r for r in records if r["status"] == "ok"]
    assert int(m.group(2)) == len(finished) > 0
    assert all(r.get("metrics") for r in finished)
    return records


def _run(args: list[str], env: dict | None = None):
    proc = subprocess.run([sys.executable, "-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def _enospc():
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["record", "run"])
def test_a_full_disk_stops_an_in_process_sweep_in_one_line(results_root, monkeypatch, capsys, where):
    # record: writing a run's record fails (the run raises); run: the run itself fails on the disk and
    # its failed record says so ("OSError: [Errno 28] ...")
    from rfrepro.models import LinearSVM

    k = 3
    calls = {"n": 0}
    owner, name = (RecordStore, "write") if where == "record" else (LinearSVM, "fit")
    real = getattr(owner, name)

    def after_k(*a, **kw):
        calls["n"] += 1
        if calls["n"] > k:
            raise _enospc()
        return real(*a, **kw)

    monkeypatch.setattr(sweep_mod, "run_sweep", functools.partial(sweep_mod.run_sweep, in_process=True))
    args = ["sun2018/fig1", "--smoke", f"paths.results={results_root}", *SMALL]
    with monkeypatch.context() as m:
        m.setattr(owner, name, after_k)
        assert main(args) == 1
    out, err = capsys.readouterr()
    assert "runs:" not in out  # the line replaces the summary
    records = _check_stopped(out, err, results_root)
    failed = [r for r in records if r["status"] != "ok"]
    if where == "record":
        assert len(records) == k and not failed
    else:  # the run that hit the full disk, and no run after it
        assert len(failed) == 1 and "[Errno 28]" in failed[0]["error"]
    kept = len(records) - len(failed)

    assert main(args) == 0  # the disk has room again: the same command resumes
    out, err = capsys.readouterr()
    assert f"{kept} skipped (finished before)" in out and not _disk_lines(err)
    assert sum(r["status"] == "ok" for r in RecordStore(results_root, "sun2018-fig1").records()) == N_SMOKE

    # the outputs too: one line, every run kept
    from rfrepro.harness.report import outputs

    def no_room(*a, **kw):
        raise _enospc()

    monkeypatch.setattr(outputs, "build_outputs", no_room)
    assert main([*args, "--outputs-only"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and len(_disk_lines(err)) == 1
    assert LINE.match(_disk_lines(err)[0]).group(2) == str(N_SMOKE)


def test_a_full_disk_at_the_plan_is_one_line(results_root, monkeypatch, capsys):
    def no_room(*a, **kw):
        raise _enospc()

    monkeypatch.setattr(sweep_mod, "save_plan", no_room)
    monkeypatch.setattr(sweep_mod, "run_planned", no_room)  # nothing may run
    assert main(["sun2018/fig1", "--smoke", "--jobs", "1", f"paths.results={results_root}", *SMALL]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = _disk_lines(err)
    assert len(lines) == 1 and LINE.match(lines[0]).group(2) == "0", err[-3000:]


# Loaded by the sweep and its pool workers (PYTHONPATH): a record can be written while its study's
# folder holds fewer than RFREPRO_TEST_RECORDS records; after that the disk is "full".
SITECUSTOMIZE = textwrap.dedent('''
    import errno
    import os

    _replace = os.replace
    _limit = int(os.environ["RFREPRO_TEST_RECORDS"])

    def replace(src, dst, *args, **kw):
        dst = os.fspath(dst)
        folder = os.path.dirname(dst)
        if (os.path.basename(os.path.dirname(folder)) == "runs" and dst.endswith(".json")
                and not os.path.exists(dst)
                and sum(n.endswith(".json") and not n.startswith(".") for n in os.listdir(folder)) >= _limit):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return _replace(src, dst, *args, **kw)

    os.replace = replace
''')


@pytest.mark.parametrize("jobs", ["2", "1"])
def test_a_full_disk_in_a_worker_stops_the_sweep_in_one_line(tmp_path, jobs):
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(SITECUSTOMIZE)
    root = tmp_path / "results"
    env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path), "RFREPRO_DATA": str(tmp_path / "data")}
    full = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(patch), env.get("PYTHONPATH")])),
            "RFREPRO_TEST_RECORDS": "4"}
    args = ["--jobs", jobs, f"paths.results={root}", *SMALL]
    code, out, err = _run(args, full)
    assert code == 1, err[-3000:]
    records = _check_stopped(out, err, root)
    assert 4 <= len(records) <= 4 + int(jobs) - 1  # runs in flight may have slipped in
    if jobs == "1":
        return  # resuming is the same for both (and checked on a real file system below)

    code, out, err = _run(args, env)  # room again: the same command resumes
    assert code == 0, err[-3000:]
    assert f"{len(records)} skipped (finished before)" in out and not _disk_lines(err)
    assert sum(r["status"] == "ok" for r in RecordStore(root, "sun2018-fig1").records()) == N_SMOKE


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a tmpfs mount needs Linux")
def test_a_really_full_filesystem(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)],
                                 capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        mounted = False
    if not mounted:
        pytest.skip("cannot mount a small tmpfs here (needs root and the mount capability)")
    try:
        root = mnt / "results"
        env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path), "RFREPRO_DATA": str(tmp_path / "data")}
        args = ["--jobs", "1", f"paths.results={root}", *SMALL]
        code, out, err = _run(args, env)
        assert code == 1, err[-3000:]
        records = _check_stopped(out, err, root)
        assert len(records) < N_SMOKE

        subprocess.run(["mount", "-o", "remount,size=20m", str(mnt)], check=True, timeout=30)
        code, out, err = _run(args, env)
        assert code == 0, err[-3000:]
        assert not _disk_lines(err)
        assert sum(r["status"] == "ok" for r in RecordStore(root, "sun2018-fig1").records()) == N_SMOKE
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)
