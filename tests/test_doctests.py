"""`make test` runs the Examples in ``src/rfrepro``'s docstrings (``--doctest-modules``).

The check runs the exact pytest command that ``make -n test`` prints, in
collect-only mode, so it fails whether the flag or the ``src/rfrepro`` path is
dropped from the Makefile or from pyproject's pytest options.
"""

import inspect
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

import rfrepro.features
from rfrepro.features._base import FeatureMap

ROOT = Path(__file__).resolve().parents[1]

#: Docstring examples under src/rfrepro when this test was written (31: one per
#: feature map, the models, layout, claims, dask_map, ...); fewer means some
#: stopped being collected, not that the count may drift down.
MIN_DOCTESTS = 31


@pytest.fixture(scope="module")
def make_test_doctests() -> list[str]:
    """Node ids of the docstring examples that `make test`'s pytest command collects."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # -o: never rebuild the environment from inside the suite; -n: print, do not run
    dry = subprocess.run(["make", "-n", "-o", ".venv/.installed", "test"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    commands = [line for line in dry.splitlines() if " pytest" in line]
    assert len(commands) == 1, f"`make -n test` should print one pytest command:\n{dry}"
    args = [*shlex.split(commands[0]), "--collect-only", "-p", "no:cacheprovider"]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"collection failed (a module under src/rfrepro that cannot be " \
                                 f"imported?):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    return re.findall(r"^src/rfrepro/\S+\.py::\S+$", proc.stdout, flags=re.M)


def test_make_test_collects_the_docstring_examples(make_test_doctests):
    assert len(make_test_doctests) >= MIN_DOCTESTS, make_test_doctests


def test_every_feature_map_has_an_example_that_make_test_runs(make_test_doctests):
    collected = {node.split("::", 1)[1] for node in make_test_doctests}
    maps = [obj for obj in map(rfrepro.features.__dict__.get, rfrepro.features.__all__)
            if inspect.isclass(obj) and issubclass(obj, FeatureMap)]
    assert len(maps) >= 16  # the maps rfrepro.features exports
    missing = [cls.__name__ for cls in maps if f"{cls.__module__}.{cls.__qualname__}" not in collected]
    assert not missing, f"feature maps without a docstring example that `make test` runs: {missing}"
