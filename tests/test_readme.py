"""Every command README.md and the guide (docs/guide/*.md) show is run here (shrunken where the full
version takes hours), and every relative link of those pages leads to a file that exists.

``HOW`` says how each command of the pages' ``bash`` blocks is run; a command a page gains without
an entry here fails ``test_every_page_command_is_covered``, and an entry no page shows any more
fails ``test_every_entry_is_shown``. docs/guide/extending.md has its own test
(tests/test_extending_guide.py), and so has docs/performance.md (tests/test_docs_performance.py).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "datasets"
SMALL = ["dataset.n_train=200", "dataset.n_test=500"]
GUIDE = ROOT / "docs" / "guide"
#: guide pages whose commands another test runs
OWN_TEST = {"extending.md": "tests/test_extending_guide.py"}

#: page command -> (how it is run here, marks[, expect]). "as is" runs it unchanged;
#: a list appends arguments (SMOKE=1 or smaller data); None: not run here, and why.
#: ``expect`` (optional): "exit" the status it must end with (default 0), "stderr" a text its
#: error output must hold, "before" commands run first in the same results folder.
#: One entry per command, whichever pages show it.
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
    # docs/guide/reproducing.md
    ".venv/bin/python -m rfrepro.reproduce sun2018/fig1 --smoke --outputs-only":
        ("as is", (), {"before": [".venv/bin/python -m rfrepro.reproduce sun2018/fig1 --smoke"]}),
    # docs/guide/results.md (run on a copy of the reference: judged anew, its claims are the committed ones)
    ".venv/bin/python -m rfrepro.harness.reference --rejudge wu2016/fig3": ("as is", ()),
    # docs/guide/command-line.md
    ".venv/bin/python -m rfrepro --help": ("as is", ()),
    ".venv/bin/python -m rfrepro dataset=checkerboard method.n_components=64": ("as is", ()),
    ".venv/bin/python -m rfrepro dataset=checkerboard method.n_component=64":
        ("as is", (), {"exit": 2, "stderr": "did you mean method.n_components?"}),
    # docs/guide/leaderboard.md
    "make leaderboard SMOKE=1": ("as is", ("slow", "mirror")),
}


def pages() -> list[Path]:
    """README.md and every guide page whose commands this file runs."""
    return [ROOT / "README.md", *sorted(p for p in GUIDE.glob("*.md") if p.name not in OWN_TEST)]


def page_commands(page: Path) -> list[str]:
    """Every command line of the page's ``bash`` blocks, without its trailing comment."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_page_command_is_covered(page):
    missing = [c for c in page_commands(page) if c not in HOW]
    assert not missing, f"{page.relative_to(ROOT)} commands without a test: {missing}"


def test_every_entry_is_shown():
    shown = {c for page in pages() for c in page_commands(page)}
    stale = [c for c in HOW if c not in shown]
    assert not stale, f"HOW entries no page shows: {stale}"


def test_the_pages_with_their_own_test_have_it():
    for name, test in OWN_TEST.items():
        assert (GUIDE / name).is_file() and (ROOT / test).is_file()


def _slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text()
    return ({_slug(h) for h in re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), flags=re.M)}
            | set(re.findall(r'<a id="([^"]+)"', text)))


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted(GUIDE.glob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_lead_somewhere(page):
    """Each relative link of README.md and the guide names an existing file (and, into a markdown
    file, one of its headings or ``<a id>`` anchors)."""
    broken = []
    for link in _links(page):
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(link)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(link)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


def _cases():
    for cmd, (how, marks, *expect) in HOW.items():
        if how is None:
            continue
        m = [getattr(pytest.mark, name) for name in marks]
        yield pytest.param(cmd, how, "mirror" in marks, (expect or [{}])[0], marks=m,
                           id=cmd.removeprefix(".venv/bin/python ")[:70])


def _args(cmd: str, how="as is") -> list[str]:
    args = shlex.split(cmd) + ([] if how == "as is" else list(how))
    if args[0] == "make":  # never reinstall the environment from inside the test suite
        args = ["make", "-o", ".venv/.installed", *args[1:]]
    return args


@pytest.mark.parametrize("cmd, how, needs_mirror, expect", list(_cases()))
def test_readme_command_runs(cmd, how, needs_mirror, expect, tmp_path):
    if needs_mirror and not MIRROR.is_dir() and not os.environ.get("RFREPRO_MIRROR"):
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR)")
    env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path / "results"), "RFREPRO_DATA": str(tmp_path / "data")}
    if needs_mirror and not env.get("RFREPRO_MIRROR"):
        env["RFREPRO_MIRROR"] = f"file://{MIRROR}"
    for before in expect.get("before", ()):
        proc = subprocess.run(_args(before), cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, (before, proc.stderr[-3000:])
    if "--rejudge" in cmd:  # judge a copy of the committed reference anew
        shutil.copytree(ROOT / "results" / "reference", tmp_path / "results" / "reference")
    if "--outputs-only" in cmd:  # the outputs must be drawn again, from the plan and records alone
        for figures in (tmp_path / "results").rglob("figures"):
            shutil.rmtree(figures)
    proc = subprocess.run(_args(cmd, how), cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    if cmd == "make smoke" and proc.returncode != 0:
        # a partial mirror leaves datasets unavailable: the worst status is then 3 (not run; make
        # reports "Error 3" and exits 2), never 1 (a run failed)
        assert "Error 3" in proc.stderr and "  FAILED" not in proc.stderr, proc.stderr[-3000:]
        assert "NOT RUN" in proc.stderr and "unavailable" in proc.stderr
    else:
        assert proc.returncode == expect.get("exit", 0), (proc.stdout[-1500:], proc.stderr[-3000:])
    if "stderr" in expect:
        assert expect["stderr"] in proc.stderr, proc.stderr[-3000:]
    if "reproduce" in cmd or cmd.startswith(("make demo", "make leaderboard")):
        assert list((tmp_path / "results").rglob("figures/*.png"))
    if cmd.startswith(("make demo", "make report", "make leaderboard")):
        assert list((tmp_path / "results").rglob("REPORT.md"))
    if "--rejudge" in cmd:  # the committed reference is what today's study code judges
        claims = "claims/wu2016-fig3.json"
        assert json.loads((tmp_path / "results" / "reference" / claims).read_text()) == \
            json.loads((ROOT / "results" / "reference" / claims).read_text())
