"""Threaded and serial builds of one kernel body are cached apart (numba keys its cache without the flags)."""

import numba
import numpy as np
from numba import njit, prange

from rfrepro.jit import threaded_and_serial


def _double_body(x):
    for i in prange(x.size):
        x[i] = 2.0 * x[i]


def _index_files(folder):
    return sorted(p.name for p in folder.rglob("*.nbi"))


def _compile_serial_then_threaded(threaded, serial):
    x = np.arange(4.0)
    serial(x)  # compiled first, so its build is what a shared cache entry would hold
    threaded(x)
    assert x.tolist() == [0.0, 4.0, 8.0, 12.0]
    return threaded.overloads[threaded.signatures[0]].metadata


def test_the_threaded_build_is_compiled_not_the_serial_one_loaded(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "pair"))
    metadata = _compile_serial_then_threaded(*threaded_and_serial(_double_body))
    # compiled here with its parallel loop (a build loaded from the cache carries no metadata)
    assert metadata is not None and metadata["parfors"]
    names = _index_files(tmp_path / "pair")
    assert len(names) == 2 and names[0].startswith("test_jit._double_body__serial-")
    assert names[1].startswith("test_jit._double_body__threaded-")


def test_plain_njit_pairs_share_one_entry(tmp_path, monkeypatch):
    """What the helper exists for (numba issue #6845): the naive pair loads the serial build as the threaded one.

    Should a numba release key its cache by the flags, this fails, and the helper can go."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "naive"))
    metadata = _compile_serial_then_threaded(njit(parallel=True, cache=True)(_double_body),
                                             njit(cache=True)(_double_body))
    assert metadata is None
    assert len(_index_files(tmp_path / "naive")) == 1
