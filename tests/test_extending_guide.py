"""docs/guide/extending.md, run as a new user would: its files written as shown, its commands run.

The guide's map package and config are written from its ``# file:`` blocks into
a temporary folder outside the source tree; each command of its ``bash`` blocks
has an entry in ``HOW`` (a command the guide gains without one fails
``test_every_guide_command_is_covered``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rfrepro.harness.run.grid import expand

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "extending.md"
MIRROR = ROOT.parent / "shared" / "datasets"
STUDY = "leaderboard/gaussian-classification"
#: the arms kept beside the new map in the fast test: a champion of claims (TEFM-G) and RKS
KEEP = ("rks_cos", "tefm_g")

#: guide command -> how it is run here ("env": sets the environment the others run in; "run":
#: as is; "slow+mirror": as is, marked slow and needing the dataset mirror)
HOW = {
    "export PYTHONPATH=$PWD/mymaps RFREPRO_CONFIG_PATH=$PWD/mymaps/conf": "env",
    ".venv/bin/python -m rfrepro method=antithetic dataset=checkerboard method.n_components=64": "run",
    "make leaderboard METHODS=+antithetic SMOKE=1": "slow+mirror",
    '.venv/bin/python -m rfrepro.reproduce leaderboard/gaussian-classification --smoke '
    '"sweep.arms_from.add=[antithetic]"': "run",
}


def guide_commands() -> list[str]:
    out = []
    for block in re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), flags=re.S):
        out += [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return out


def write_guide_files(base: Path) -> list[Path]:
    written = []
    for body in re.findall(r"```(?:python|yaml)\n(.*?)```", GUIDE.read_text(), flags=re.S):
        first, _, rest = body.partition("\n")
        m = re.fullmatch(r"# file: (\S+)", first.strip())
        if m:
            path = base / m.group(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rest)
            written.append(path)
    return written


@pytest.fixture
def user(tmp_path):
    """A user's folder with the guide's files, and the environment its export line sets."""
    assert {p.relative_to(tmp_path).as_posix() for p in write_guide_files(tmp_path)} == {
        "mymaps/mymaps/__init__.py", "mymaps/mymaps/antithetic.py", "mymaps/conf/method/antithetic.yaml"}
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "mymaps"),
           "RFREPRO_CONFIG_PATH": str(tmp_path / "mymaps" / "conf"), "RFREPRO_RESULTS": str(tmp_path / "results")}
    return tmp_path, env


def _run(cmd: str, base: Path, env: dict, extra: list[str] = ()) -> subprocess.CompletedProcess:
    args = [sys.executable if a == ".venv/bin/python" else a for a in shlex.split(cmd)] + list(extra)
    if args[0] == "make":
        args = ["make", "-o", ".venv/.installed", *args[1:]]
    return subprocess.run(args, cwd=ROOT if args[0] == "make" else base, env=env, capture_output=True,
                          text=True, timeout=1200)


def test_every_guide_command_is_covered():
    assert not [c for c in guide_commands() if c not in HOW]


def test_the_guides_map_runs_and_a_bad_value_is_one_line(user):
    base, env = user
    cmd = next(c for c, how in HOW.items() if how == "run" and "rfrepro method=" in c)
    proc = _run(cmd, base, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[ok] adhoc/run antithetic+linear_svm" in proc.stdout
    record = json.loads(next((base / "results" / "runs" / "adhoc-run").glob("*.json")).read_text())
    assert record["fitted"]["n_features_out"] == 64 and record["method"]["name"] == "antithetic"
    # its declared cost is what a record's roofline sets against the host (switched off in tests)
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("antithetic", base / "mymaps" / "mymaps" / "antithetic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fmap = module.AntitheticRFF(64, sigma=1.0, random_state=0).fit(np.zeros((5, 3)))
    assert fmap.cost(10)["flops"] > 0 and fmap.transform(np.zeros((2, 3))).shape == (2, 64)
    bad = _run(cmd.replace("method.n_components=64", "method.n_components=1"), base, env)
    assert bad.returncode == 2
    assert "method.n_components must be an int in the range [2, inf), got 1" in bad.stderr
    assert len(list((base / "results" / "runs" / "adhoc-run").glob("*.json"))) == 1  # no record for it


def test_the_guides_map_reaches_a_leaderboard_table_and_a_claim_reusing_every_other_run(user):
    if not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"):
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR): the leaderboard's smoke sweep is real data")
    base, env = user
    env.setdefault("RFREPRO_MIRROR", f"file://{MIRROR}")
    from rfrepro.harness.run.arms import kernel_arms

    drop = f"sweep.arms_from.drop=[{','.join(a for a in kernel_arms('gaussian') if a not in KEEP)}]"
    cmd = next(c for c, how in HOW.items() if how == "run" and "arms_from.add" in c)
    first = _run(cmd.replace(' "sweep.arms_from.add=[antithetic]"', ""), base, env, [drop])
    assert first.returncode == 0, first.stderr[-2000:]
    per_arm = len([j for j in expand(STUDY, smoke=True) if j.arm == KEEP[0]])  # the smoke sweep's runs of one arm
    assert f"{2 * per_arm} runs: {2 * per_arm} ok" in first.stderr + first.stdout
    second = _run(cmd, base, env, [drop])
    assert second.returncode == 0, second.stderr[-2000:]
    assert (f"{3 * per_arm} runs: {per_arm} ok, {2 * per_arm} skipped (finished before)"
            in second.stderr + second.stdout)
    smoke = base / "results" / "smoke"
    claims = {c["id"]: c for c in json.loads((smoke / "claims" / "leaderboard-gaussian-classification.json").read_text())}
    assert claims["X-C1.1-tefm_g-vs-antithetic"]["verdict"] in ("pass", "fail", "inconclusive")
    table = (smoke / "tables" / "leaderboard-gaussian-classification.md").read_text()
    assert "| Antithetic RFF |" in table
    plan = json.loads((smoke / "plans" / "leaderboard-gaussian-classification.json").read_text())
    assert "sweep.arms_from.add=[antithetic]" in plan["overrides"]
    assert "mymaps/antithetic.py" in plan["code_modules"]  # the user's map is in its runs' code


@pytest.mark.slow
def test_make_leaderboard_with_the_guides_map(user):
    if not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"):
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR)")
    base, env = user
    env.setdefault("RFREPRO_MIRROR", f"file://{MIRROR}")
    proc = _run("make leaderboard METHODS=+antithetic SMOKE=1", base, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for study in ("gaussian-classification", "gaussian-regression"):
        assert "| Antithetic RFF |" in (base / "results" / "smoke" / "tables" / f"leaderboard-{study}.md").read_text()
