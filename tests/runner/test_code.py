"""A run's code identity covers exactly the modules it can execute (rfrepro.runner.code)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import rfrepro
from rfrepro.runner import code

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(rfrepro.__file__).parent


def _write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A package ``toypkg`` on sys.path: a re-exporting ``maps/__init__``, two maps, a shared helper."""
    _write(tmp_path, {
        "toypkg/__init__.py": '"""Toy."""\n',
        "toypkg/maps/__init__.py": '''\
            """Maps."""
            from toypkg.maps.a import MapA
            from .b import MapB

            __all__ = ["MapA", "MapB"]
            ''',
        "toypkg/maps/a.py": "import numpy as np\nfrom toypkg.shared import helper\n\nclass MapA:\n    pass\n",
        "toypkg/maps/b.py": "class MapB:\n    def fit(self):\n        from toypkg import lazy  # noqa\n",
        "toypkg/shared.py": "def helper():\n    return 1\n",
        "toypkg/lazy.py": "X = 1\n",
        "toypkg/steps.py": "from toypkg.maps import MapA\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    code._locate.cache_clear()
    yield tmp_path
    code._locate.cache_clear()


def test_closure_follows_names_through_a_reexporting_init_and_function_level_imports(toy):
    assert list(code.closure(("toypkg.steps",))) == ["toypkg/maps/a.py", "toypkg/shared.py", "toypkg/steps.py"]
    # MapB's import inside a method counts (it may run); the re-exporting __init__ files never do
    assert list(code.closure(("toypkg.maps.b",))) == ["toypkg/lazy.py", "toypkg/maps/b.py"]
    assert code._target_module("toypkg.maps.MapB") == "toypkg.maps.b"
    # a module a root may not enter is skipped with what only it imports
    assert list(code.closure(("toypkg.maps.b",), skip=frozenset({"toypkg.lazy"}))) == ["toypkg/maps/b.py"]


def test_an_init_with_code_is_part_of_the_closure(toy):
    (toy / "toypkg/maps/__init__.py").write_text("from toypkg.maps.a import MapA\nSCALE = 2.0\n")
    assert "toypkg/maps/__init__.py" in code.closure(("toypkg.steps",))


def test_blob_ids_are_gits():
    proc = subprocess.run(["git", "hash-object", "--stdin"], input=b"hello\n", capture_output=True)
    if proc.returncode != 0:
        pytest.skip("git is not available")
    assert code.blob_id(b"hello\n") == proc.stdout.decode().strip()


def test_a_third_party_target_is_identified_by_its_distribution_version():
    from importlib import metadata

    cfg = OmegaConf.create({"method": {"_target_": "sklearn.preprocessing.FunctionTransformer"}})
    modules = code.run_code(cfg).as_dict()
    assert modules["sklearn (installed)"] == f"scikit-learn=={metadata.version('scikit-learn')}"
    assert not [m for m in modules if m.startswith("sklearn/")]
    assert code.changed({"sklearn (installed)": "scikit-learn==0.0"}) == ["sklearn (installed)"]


def test_cross_validation_is_in_the_code_only_of_runs_that_ask_for_it():
    base = {"method": {"_target_": "rfrepro.features.tefm.TEFMG"}, "model": {"_target_": "rfrepro.models.RidgeRegression"}}
    without = code.run_code(OmegaConf.create(base)).as_dict()
    with_cv = code.run_code(OmegaConf.create({**base, "cv": {"enabled": True}})).as_dict()
    assert "rfrepro/runner/cv.py" in with_cv and "rfrepro/runner/cv.py" not in without
    assert {"rfrepro/features/tefm.py", "rfrepro/models/ridge.py", "rfrepro/runner/steps.py",
            "rfrepro/data/__init__.py", "rfrepro/metrics/kernel.py"} <= set(without)
    # record keeping and orchestration are not code a run executes
    assert not [m for m in with_cv if m.startswith("rfrepro/harness/") or m.endswith(("record.py", "store.py"))]
    assert "rfrepro/features/craft.py" not in with_cv and "rfrepro/models/svm.py" not in with_cv


_VERSIONS = """
import json, sys
from pathlib import Path
from omegaconf import OmegaConf
from rfrepro.runner.code import run_code
out = {}
for path in sorted(Path(sys.argv[1]).glob("*.yaml")):
    node = OmegaConf.load(path)
    cfg = OmegaConf.create({"method": {"_target_": node.get("_target_")},
                            "model": {"_target_": "rfrepro.models.RidgeRegression"}})
    out[path.stem] = run_code(cfg).version
print(json.dumps(out))
"""


def test_an_edit_changes_exactly_the_runs_that_execute_it(tmp_path):
    """On a copy of the package: a new module changes no run's code; an edit of TEFM only TEFM's runs;
    an edit of the runner's steps every run's."""
    copy = tmp_path / "src" / "rfrepro"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src"), "RFREPRO_ROOT": str(ROOT)}

    def versions() -> dict[str, str]:
        proc = subprocess.run([sys.executable, "-c", _VERSIONS, str(ROOT / "conf" / "method")], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        return json.loads(proc.stdout)

    before = versions()
    assert len(set(before.values())) > 5
    (copy / "features" / "my_new_map.py").write_text("class MyNewMap:\n    pass\n")
    assert versions() == before
    with open(copy / "features" / "tefm.py", "a") as fh:
        fh.write("\n# edited\n")
    after = versions()
    assert {m for m in before if before[m] != after[m]} == {"tefm_g", "tefm_s"}
    with open(copy / "runner" / "steps.py", "a") as fh:
        fh.write("\n# edited\n")
    assert all(v != after[m] for m, v in versions().items())


def test_adding_a_map_reuses_every_run_of_a_smoke_study(tmp_path):
    """The smoke study runs on a copy of the package; a map module and its yaml added, it reruns nothing."""
    copy = tmp_path / "src" / "rfrepro"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    conf = tmp_path / "myconf"
    _write(conf, {"method/my_new_map.yaml": "name: my_new_map\n_target_: rfrepro.features.my_new_map.MyNewMap\n"})
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src"), "RFREPRO_ROOT": str(ROOT),
           "RFREPRO_RESULTS": str(tmp_path / "results"), "RFREPRO_CONFIG_PATH": str(conf)}

    def sweep() -> str:
        proc = subprocess.run([sys.executable, "-m", "rfrepro.reproduce", "sun2018/fig1", "--smoke", "--jobs", "2"],
                              env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stderr + proc.stdout

    assert "finished before" not in sweep()
    (copy / "features" / "my_new_map.py").write_text("class MyNewMap:\n    pass\n")
    out = sweep()
    assert "36 runs: 36 skipped (finished before)" in out, out[-2000:]
