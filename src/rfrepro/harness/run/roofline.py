"""The host's roofline: its peak GEMM rates and memory bandwidth, measured once per host and cached.

A run's record sets its transform's declared cost (``cost(n)`` of the map,
:mod:`rfrepro.features._cost`) against these peaks: the predicted time is
``max(flops / peak GEMM rate at the run's dtype, bytes / bandwidth)`` and
the fraction of peak is predicted over measured time (1 = at the roofline).

The peaks are measured by a micro-benchmark of a few seconds, with every
BLAS thread: the best of a few square float32 and float64 matrix products
(size :data:`GEMM_SIZE`), and the best of a few copies of a
:data:`COPY_MB` MB array split over one thread per core (numpy releases the
GIL while copying; one thread alone cannot saturate the memory bus). They
are cached as JSON under ``<user cache>/roofline/<key>.json``
(:func:`rfrepro.layout.user_cache_dir`), ``key`` hashing the host's
identity: host name, CPU model, core count, numpy and its BLAS library. A
new machine, a new BLAS or a new numpy is measured afresh.

``RFREPRO_ROOFLINE=off`` (or ``0``, ``false``, ``no``) disables it: runs
then record ``roofline: null``. The test suite sets it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from rfrepro.atomic import atomic_write_text
from rfrepro.layout import user_cache_dir
from rfrepro.runner.env import cpu_model

ROOFLINE_ENV = "RFREPRO_ROOFLINE"
#: values of ``$RFREPRO_ROOFLINE`` that switch the measurement (and the records' roofline) off
OFF = ("0", "off", "false", "no")
#: side of the square matrices multiplied (about 12 GFlop per float64 product)
GEMM_SIZE = 1800
#: size of the array copied to measure the memory bandwidth (well beyond any cache)
COPY_MB = 256
#: repetitions of each measurement; the best one is kept (the least disturbed, as timeit does)
REPEATS = 3
#: the keys of the peaks a record keeps (flop/s, flop/s, byte/s)
PEAK_KEYS = ("gemm_f32", "gemm_f64", "bandwidth")


def enabled() -> bool:
    return os.environ.get(ROOFLINE_ENV, "").strip().lower() not in OFF


def _numpy_blas() -> str:
    """numpy's own BLAS, the one the GEMM peak measures.

    Not every BLAS threadpoolctl lists: which others are loaded (scipy's, say)
    depends on what the process imported before, and the key must not.
    """
    from threadpoolctl import threadpool_info

    np_dir = Path(np.__file__).parent
    for i in threadpool_info():
        path = Path(i.get("filepath") or "")
        if i.get("user_api") == "blas" and (path.parent.name.startswith("numpy") or np_dir in path.parents):
            return f"{i.get('internal_api')} {i.get('version')} {path.name}"
    try:  # a BLAS outside numpy's folder (conda's MKL, a system OpenBLAS): numpy's build says which
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except (KeyError, TypeError, AttributeError):
        return "unknown"


@functools.lru_cache(maxsize=1)
def host_identity() -> dict:
    """What the peaks depend on: the machine, numpy and its BLAS (not the thread limits)."""
    return {"hostname": socket.gethostname(), "cpu": cpu_model(), "cores": os.cpu_count() or 1,
            "numpy": np.__version__, "blas": _numpy_blas()}


def host_key(identity: dict | None = None) -> str:
    identity = host_identity() if identity is None else identity
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def cache_path(identity: dict | None = None) -> Path:
    return user_cache_dir() / "roofline" / f"{host_key(identity)}.json"


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return max(best, 1e-9)


def gemm_rate(dtype, size: int = GEMM_SIZE, repeats: int = REPEATS) -> float:
    """Best flop/s of a ``size x size`` matrix product in ``dtype`` (all BLAS threads)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(dtype)
    b = rng.standard_normal((size, size)).astype(dtype)
    out = np.empty((size, size), dtype=dtype)
    np.matmul(a, b, out=out)  # untimed: wakes the BLAS threads
    return 2.0 * size**3 / _best(lambda: np.matmul(a, b, out=out), repeats)


def copy_bandwidth(megabytes: float = COPY_MB, repeats: int = REPEATS, threads: int | None = None) -> float:
    """Best bytes/s of copying a ``megabytes`` array (read + write), one slice per thread."""
    threads = threads or os.cpu_count() or 1
    n = max(threads, int(megabytes * 2**20) // 8)
    src = np.ones(n)
    dst = np.empty_like(src)  # ones / empty, then a first copy: every page is touched before timing
    bounds = np.linspace(0, n, threads + 1).astype(int)
    parts = [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]
    with ThreadPoolExecutor(threads) as pool:
        def copy():
            list(pool.map(lambda s: np.copyto(dst[s], src[s]), parts))

        copy()
        return 2.0 * src.nbytes / _best(copy, repeats)


def measure(*, gemm_size: int = GEMM_SIZE, copy_mb: float = COPY_MB, repeats: int = REPEATS) -> dict:
    """The host's peaks (``gemm_f32``, ``gemm_f64`` in flop/s, ``bandwidth`` in bytes/s), measured now."""
    return {"gemm_f32": gemm_rate(np.float32, gemm_size, repeats),
            "gemm_f64": gemm_rate(np.float64, gemm_size, repeats),
            "bandwidth": copy_bandwidth(copy_mb, repeats)}


def _read(path: Path) -> dict | None:
    try:
        cached = json.loads(path.read_text())
        if cached.get("identity") == json.loads(json.dumps(host_identity())):
            peaks = {k: float(cached[k]) for k in PEAK_KEYS}
            return peaks if all(v > 0 for v in peaks.values()) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def host_peaks(*, refresh: bool = False, gemm_size: int = GEMM_SIZE, copy_mb: float = COPY_MB,
               repeats: int = REPEATS) -> dict | None:
    """This host's peaks, from its cache file, else measured now and cached; None when disabled.

    ``refresh`` measures again and keeps, per peak, the higher of the new and
    the cached value. A cache that cannot be written (read-only home) only
    costs a measurement per call; a measurement that fails gives the cached
    peaks or None, never a failed run.
    """
    if not enabled():
        return None
    path = cache_path()
    cached = _read(path)
    if cached is not None and not refresh:
        return cached
    try:
        peaks = measure(gemm_size=gemm_size, copy_mb=copy_mb, repeats=repeats)
    except (MemoryError, OSError, ValueError):
        return cached
    if cached is not None:  # a peak is an upper bound: a measurement disturbed by other jobs lowers none
        peaks = {k: max(peaks[k], cached[k]) for k in PEAK_KEYS}
    payload = {**peaks, "identity": host_identity(),
               "sizes": {"gemm_size": gemm_size, "copy_mb": copy_mb, "repeats": repeats},
               "measured": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        atomic_write_text(path, json.dumps(payload, indent=1, sort_keys=True))
    except OSError:
        pass
    return peaks


if __name__ == "__main__":  # `python -m rfrepro.harness.run.roofline [--refresh]`: this host's peaks
    import sys

    peaks = host_peaks(refresh="--refresh" in sys.argv)
    if peaks is None:
        print(f"roofline disabled (${ROOFLINE_ENV})")
    else:
        print(f"{cache_path()}\n  GEMM float32 {peaks['gemm_f32'] / 1e9:.1f} GFlop/s, "
              f"float64 {peaks['gemm_f64'] / 1e9:.1f} GFlop/s, copy {peaks['bandwidth'] / 1e9:.1f} GB/s")
