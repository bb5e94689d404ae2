"""OpenBLAS's idle threads sleep at once in every process that imports rfrepro before numpy (rfrepro.BLAS_IDLE_ENV)."""

import os
import subprocess
import sys

import pytest

import rfrepro

READ = "import os; {imports}; print(os.environ['OPENBLAS_THREAD_TIMEOUT'], rfrepro.OPENBLAS_THREAD_TIMEOUT)"


def _child(imports: str, preset: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if preset is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = preset
    out = subprocess.run([sys.executable, "-c", READ.format(imports=imports)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.split()


@pytest.mark.parametrize(("imports", "preset", "expected"), [
    ("import rfrepro", None, [rfrepro.BLAS_IDLE_ENV["OPENBLAS_THREAD_TIMEOUT"]] * 2),  # set, and in force
    ("import rfrepro", "28", ["28", "28"]),  # the user's own value wins
    # numpy's OpenBLAS loaded before the setting: children get it, this process says it runs the default
    ("import numpy; import rfrepro", None, [rfrepro.BLAS_IDLE_ENV["OPENBLAS_THREAD_TIMEOUT"], "None"]),
    ("import numpy; import rfrepro", "6", ["6", "6"]),
])
def test_importing_rfrepro_sets_the_blas_idle_timeout_and_says_what_is_in_force(imports, preset, expected):
    assert _child(imports, preset) == expected


def test_a_runs_thread_report_says_the_openblas_timeout_in_force():
    from rfrepro.runner.env import limit_threads

    with limit_threads(1) as lim:
        assert lim.report()["openblas_thread_timeout"] == rfrepro.OPENBLAS_THREAD_TIMEOUT
