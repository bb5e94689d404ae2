"""The Makefile forwards what users give it (checked with `make -n`: nothing runs)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry(*args: str) -> str:
    # the setup prerequisite is touched, not rebuilt: -n prints the recipe only
    proc = subprocess.run(["make", "-n", "--no-print-directory", "-o", "setup", "-o", ".venv/.installed", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_reproduce_forwards_args_jobs_and_smoke():
    out = _dry("reproduce-sun2018-fig1", "ARGS=mirror=file:///m seed=3", "JOBS=1", "SMOKE=1")
    line = next(x for x in out.splitlines() if "rfrepro.reproduce" in x)
    assert "sun2018-fig1 --jobs 1 --smoke" in line and line.rstrip().endswith("mirror=file:///m seed=3")


def test_reproduce_without_args_adds_nothing():
    line = next(x for x in _dry("reproduce-sun2018-fig1", "JOBS=2", "SMOKE=", "SCHEDULER=", "ARGS=").splitlines() if "rfrepro.reproduce" in x)
    assert line.split("rfrepro.reproduce", 1)[1].split() == ["sun2018-fig1", "--jobs", "2"]


def test_clean_results_removes_every_generated_folder_and_nothing_else(tmp_path):
    import os
    import sys

    from rfrepro.layout import ResultsLayout

    generated = ResultsLayout(tmp_path).generated()
    assert {p.name for p in generated} >= {"runs", "plans", "tables", "figures", "claims", "artifacts",
                                           "compute", "fits", "cv", "hydra", "smoke", "REPORT.md"}
    for p in generated:
        if p.suffix:
            p.write_text("x")
        else:
            (p / "sub").mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("mine")
    proc = subprocess.run(["make", "-o", "setup", "-o", ".venv/.installed", "clean-results", f"PY={sys.executable}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "RFREPRO_RESULTS": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert not any(p.exists() for p in generated)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_reproduce_all_runs_each_study_even_after_a_bad_one_and_prints_the_total(tmp_path):
    # a study that does not exist (exit 2), then Sun Fig. 1 in smoke mode (generated data, seconds)
    proc = subprocess.run(["make", "-s", "-o", "setup", "-o", ".venv/.installed", "reproduce-all",
                           "STUDIES=no/such sun2018/fig1", "SMOKE=1", "JOBS=2",
                           f"ARGS=paths.results={tmp_path}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "error: " in proc.stderr and "no/such" in proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"reproduce-all: 2 studies in \d+ s of wall time \(exit status 2\)", last), last
    assert (tmp_path / "claims" / "sun2018-fig1.json").is_file() and (tmp_path / "REPORT.md").is_file()


def test_reproduce_all_is_every_study_of_the_five_papers():
    line = _dry("reproduce-all").splitlines()[0]
    studies = line.split(" for e in ", 1)[1].split("; do", 1)[0].split()
    assert {s.split("/")[0] for s in studies} == {"chen2015", "hamid2014", "schleif2016", "sun2018", "wu2016"}
    papers = ("chen2015", "hamid2014", "schleif2016", "sun2018", "wu2016")
    on_disk = {f"{p.parent.name}/{p.stem}" for paper in papers
               for p in (ROOT / "conf" / "experiment" / paper).glob("*.yaml") if not p.name.startswith("_")}
    assert sorted(studies) == sorted(on_disk) and len(studies) == 20


def test_make_alone_shows_every_target_and_the_form_of_make_lists_targets():
    proc = subprocess.run(["make", "--no-print-directory", "-o", "setup", "-o", ".venv/.installed"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "rfrepro: every target sets up its own virtualenv (.venv) on first use."
    assert not any(line.startswith("#") for line in lines)
    # every target the Makefile declares, but help itself (make test-all is said on make test's line)
    phony = re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), flags=re.M).group(1).split()
    shown = {m.group(1) for line in lines for m in re.finditer(r"\bmake ([a-z][\w<>-]*)", line)}
    assert set(phony) - {"help"} <= shown, set(phony) - shown
    # `make list` lists its studies as make reproduce-<study>: the help gives that form and examples
    assert "  make reproduce-<paper>-<item>  one study of `make list`, e.g. make reproduce-sun2018-fig1," in lines
    assert any(line.lstrip().startswith("make list ") and "make reproduce-<paper>-<item> target" in line
               for line in lines)
    from rfrepro.harness.catalog import options

    listed = subprocess.run([sys.executable, "-m", "rfrepro.reproduce", "list"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120).stdout
    for study in options("experiment"):  # each is make reproduce-<paper>-<item>
        assert study.replace("/", "-") in listed
