"""Every command README.md shows is run here (shrunken where the full version takes hours).

``HOW`` says how each command of the README's ``bash`` blocks is run; a command
the README gains without an entry here fails ``test_every_readme_command_is_covered``.
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "datasets"
SMALL = ["dataset.n_train=200", "dataset.n_test=500"]

#: README command -> (how it is run here, marks). "as is" runs it unchanged;
#: a list appends arguments (SMOKE=1 or smaller data); None: not run here, and why.
HOW = {
    "make demo": (["SMOKE=1"], ()),
    "make test": (None, "this suite is what `make test` runs"),
    "make list": ("as is", ()),
    "make reproduce-sun2018-fig1": (["SMOKE=1"], ()),
    "make reproduce-sun2018-fig1 SMOKE=1": ("as is", ()),
    "make smoke": ("as is", ("slow", "mirror")),
    "make reproduce-all": (["SMOKE=1", "STUDIES=sun2018/fig1 schleif2016/fig1"], ("mirror",)),
    "make report": ("as is", ()),
    ".venv/bin/python -m rfrepro experiment=sun2018/fig1 method.n_components=1,3 seed=0,1 -m": (SMALL, ()),
    ".venv/bin/python -m rfrepro experiment=sun2018/fig1 method.n_components=1,3 seed=0,1 "
    "hydra/launcher=parallel -m": (SMALL, ()),
    ".venv/bin/python -m rfrepro dataset=cpusmall method=nystrom method.n_components=512 model=krr "
    "model.lam=0.1": (["dataset.subsample.n_train=1000"], ("mirror",)),
    "export RFREPRO_MIRROR=file:///path/to/mirror": (None, "sets a variable; the mirror tests use it"),
    "make reproduce-rff-kernel-approx": (["SMOKE=1"], ("mirror",)),
    "make bench": ("as is", ("slow",)),
    ".venv/bin/python scripts/bench_chen.py": ("as is", ("slow",)),
    ".venv/bin/python scripts/bench_selection.py": ("as is", ("slow",)),
    ".venv/bin/python scripts/bench_harness.py": ("as is", ("slow",)),
    ".venv/bin/python scripts/bench_hamid.py --quick": ("as is", ()),
    ".venv/bin/python scripts/bench_wu.py --quick": ("as is", ()),
    ".venv/bin/python scripts/bench_svm.py --quick": ("as is", ()),
    ".venv/bin/python scripts/bench_leverage.py --quick": ("as is", ()),
    ".venv/bin/python scripts/bench_kernel_errors.py --quick": ("as is", ()),
    ".venv/bin/python scripts/time_budget.py": ("as is", ()),
}


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def test_every_readme_command_is_covered():
    missing = [c for c in readme_commands() if c not in HOW]
    assert not missing, f"README commands without a test: {missing}"


def _cases():
    for cmd, (how, marks) in HOW.items():
        if how is None:
            continue
        m = [getattr(pytest.mark, name) for name in marks]
        yield pytest.param(cmd, how, "mirror" in marks, marks=m, id=cmd[:60])


@pytest.mark.parametrize("cmd, how, needs_mirror", list(_cases()))
def test_readme_command_runs(cmd, how, needs_mirror, tmp_path):
    if needs_mirror and not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"):
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR)")
    args = shlex.split(cmd) + ([] if how == "as is" else list(how))
    if args[0] == "make":  # never reinstall the environment from inside the test suite
        args = ["make", "-o", ".venv/.installed", *args[1:]]
    env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path / "results"), "RFREPRO_DATA": str(tmp_path / "data")}
    if needs_mirror and not env.get("RFREPRO_MIRROR"):
        env["RFREPRO_MIRROR"] = f"file://{MIRROR}"
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    if cmd == "make smoke" and proc.returncode != 0:
        # a partial mirror leaves datasets unavailable: the worst status is then 3 (not run; make
        # reports "Error 3" and exits 2), never 1 (a run failed)
        assert "Error 3" in proc.stderr and "  FAILED" not in proc.stderr, proc.stderr[-3000:]
        assert "NOT RUN" in proc.stderr and "unavailable" in proc.stderr
    else:
        assert proc.returncode == 0, (proc.stdout[-1500:], proc.stderr[-3000:])
    if "reproduce" in cmd or cmd.startswith("make demo"):
        assert list((tmp_path / "results").rglob("figures/*.png"))
    if cmd.startswith(("make demo", "make report")):
        assert list((tmp_path / "results").rglob("REPORT.md"))
