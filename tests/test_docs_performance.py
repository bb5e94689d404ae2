"""Every command docs/performance.md shows is run here (benchmarks in their ``--quick`` form; full forms are ``slow``).

``HOW`` says how each command of the document's ``bash`` blocks is run; a command the document
gains without an entry here fails ``test_every_performance_command_is_covered``. The
``--write docs/performance.md`` command writes into a copy, which must equal the document: its
generated table is the one the reference results give today.
"""

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from test_readme import page_commands

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "datasets"
DOC = ROOT / "docs" / "performance.md"
QUICK = ["--quick"]
PY = ".venv/bin/python"
PLAN_ONE = (f"{PY} -c \"import time; from rfrepro.harness.run.plan import plan; t = time.perf_counter(); "
            "n = len(plan('leaderboard/gaussian-classification')); print(n, 'runs planned in', "
            "round(time.perf_counter() - t, 1), 's')\"")
PEAKS = (f"{PY} -c \"import glob, pandas as pd; [print(f[25:-8], pd.read_parquet(f).groupby('arm')"
         "[['memory.peak_bytes', 'memory.rss_peak_above_start_bytes']].max().div(1e9).round(2)"
         ".nlargest(2, 'memory.peak_bytes').to_dict('index')) for f in "
         "sorted(glob.glob('results/reference/tables/*.parquet'))]\"")

#: command -> (how it is run here, marks). "as is" runs it unchanged; a list appends arguments
#: (QUICK: the benchmark's small sizes; its full form also runs, marked slow); "copy": the
#: document path is replaced by a copy, which must come out unchanged; None: not run, and why.
HOW = {
    "make list": ("as is", ()),
    f"{PY} scripts/time_budget.py": ("as is", ()),
    f"{PY} scripts/time_budget.py --write docs/performance.md": ("copy", ()),
    f"{PY} scripts/time_budget.py --studies 'leaderboard-*'": ("as is", ()),
    f"{PY} scripts/time_budget.py --studies '[!l]*'": ("as is", ()),
    PLAN_ONE: ("as is", ("slow", "mirror")),
    PEAKS: ("as is", ()),
    f"{PY} scripts/bench_features.py": (QUICK, ()),
    f"{PY} scripts/bench_features.py --d 1024": ("as is", ("slow",)),  # --quick would override --d
    f"{PY} scripts/bench_kernel_errors.py": (QUICK, ()),
    f"{PY} scripts/bench_svm.py": (QUICK, ()),
    f"{PY} scripts/bench_svm.py --only primal": (QUICK, ()),
    f"{PY} scripts/bench_leverage.py": (QUICK, ()),
    f"{PY} scripts/bench_wu.py --only l1": (QUICK, ()),
    f"{PY} scripts/bench_wu.py --only cg": (QUICK, ("slow",)),  # about 50 s even quick
    f"{PY} scripts/bench_wu.py --only rcd --repeat 5": (QUICK, ("slow",)),  # about 2 min quick
    f"{PY} scripts/roofline.py --refresh": ("as is", ("slow",)),
    f"{PY} scripts/bench_blas_idle.py": (QUICK, ()),  # measures the host's peaks (into a tmp cache)
}


def performance_commands() -> list[str]:
    """Every command line of the document's ``bash`` blocks, without its trailing comment (as README's)."""
    return page_commands(DOC)


def test_every_performance_command_is_covered():
    commands = performance_commands()
    missing = [c for c in commands if c not in HOW]
    assert not missing, f"docs/performance.md commands without a test: {missing}"
    stale = [c for c in HOW if c not in commands]
    assert not stale, f"HOW entries the document no longer shows: {stale}"


def _cases():
    for cmd, (how, marks) in HOW.items():
        if how is None:
            continue
        m = [getattr(pytest.mark, name) for name in marks]
        yield pytest.param(cmd, how, "mirror" in marks, marks=m, id=cmd[len(PY) + 1:][:60])
        if how == QUICK:  # the full-size form the document shows, too
            yield pytest.param(cmd, "as is", False, marks=[pytest.mark.slow], id="full " + cmd[len(PY) + 1:][:55])


@pytest.mark.parametrize("cmd, how, needs_mirror", list(_cases()))
def test_performance_command_runs(cmd, how, needs_mirror, tmp_path):
    if needs_mirror and not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"):
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR)")
    args = shlex.split(cmd)
    if how == "copy":
        copy = tmp_path / "performance.md"
        copy.write_text(DOC.read_text())
        args = [str(copy) if a == "docs/performance.md" else a for a in args]
    elif how != "as is":
        args += list(how)
    if args[0] == "make":  # never reinstall the environment from inside the test suite
        args = ["make", "-o", ".venv/.installed", *args[1:]]
    env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path / "results"), "RFREPRO_DATA": str(tmp_path / "data"),
           "RFREPRO_CACHE": str(tmp_path / "cache")}
    if "roofline" in cmd:  # the suite turns the roofline off (conftest); this command is about it
        env.pop("RFREPRO_ROOFLINE", None)
    if needs_mirror and not env.get("RFREPRO_MIRROR"):
        env["RFREPRO_MIRROR"] = f"file://{MIRROR}"
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, (proc.stdout[-1500:], proc.stderr[-3000:])
    assert proc.stdout.strip(), "the command printed nothing"
    if how == "copy":
        assert copy.read_text() == DOC.read_text(), (
            "docs/performance.md's time-budget table is stale: run "
            "`.venv/bin/python scripts/time_budget.py --write docs/performance.md`")
