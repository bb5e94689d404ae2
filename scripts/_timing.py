"""Timing helpers the benchmarks share (``scripts/bench_*.py``).

This host is noisy and moves its CPUs between cores, so every benchmark times
in one process, repeats each call, and sets its result beside a control of what
the machine allows right now: a bare GEMM of the same operands
(:func:`gemm_control`) or the 2-thread speedup of an embarrassingly parallel
kernel (:func:`parallel_speedup`).

The scripts run as ``python scripts/bench_X.py``, which puts this folder on
``sys.path``: they import it as ``from _timing import fastest``.
"""

from __future__ import annotations

import gc
import os
import resource
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True)
class Timing:
    """The repeated calls of one function.

    Attributes
    ----------
    times : tuple of float
        Seconds of each call, in call order, read on the clock given.
    kernel : tuple of float
        System (kernel) CPU seconds of each call: mostly the page faults of
        its fresh output arrays.
    out : object
        The last call's result with ``keep=True``, else None.
    """

    times: tuple[float, ...]
    kernel: tuple[float, ...]
    out: object = None

    @property
    def best(self) -> float:
        """The least time."""
        return min(self.times)

    @property
    def median(self) -> float:
        """The median time."""
        return float(np.median(self.times))

    @property
    def best_kernel(self) -> float:
        """The kernel time of the (first) fastest call."""
        return self.kernel[self.times.index(self.best)]


def interleaved(
    funcs: dict[str, Callable[[], object]],
    k: int,
    *,
    clock: Callable[[], float] = time.perf_counter,
    shuffle: bool = False,
    keep: bool = False,
) -> dict[str, Timing]:
    """Time ``k`` rounds of one call of each function, so background load hits all alike.

    Before each call the garbage is collected; each result is dropped before
    the next call (kept from the last round with ``keep``).

    Parameters
    ----------
    funcs : dict of str to callable
        The functions, called without arguments, in this order each round.
    k : int
        Rounds.
    clock : callable, default time.perf_counter
        The clock, e.g. ``time.process_time`` for this process's CPU time.
    shuffle : bool, default False
        Call them in a fresh (seeded) order each round: what one call leaves
        behind can slow the next.
    keep : bool, default False
        Keep each function's result of the last round in ``Timing.out``.

    Returns
    -------
    dict of str to Timing
        Each function's timings, keyed as ``funcs``.

    Notes
    -----
    Why shuffle (``scripts/bench_features.py``, n = 20000, d = 784, D = 4096): in
    a fixed order float32 "cos" after the float64 one took 0.72 s, 1.09-1.10x
    the float32 GEMM; in shuffled orders 0.675 s (1.02-1.06x). The kernel time
    of a call is mostly the page faults of its fresh output arrays: where the
    host compacts memory for huge pages a fault can stall, and a call whose
    kernel time is a large part of its time measured the host's memory
    management more than the operation.
    """
    times: dict[str, list[float]] = {key: [] for key in funcs}
    kernel: dict[str, list[float]] = {key: [] for key in funcs}
    kept: dict[str, object] = dict.fromkeys(funcs)
    order = list(funcs.items())
    rng = np.random.RandomState(0)
    for round_ in range(k):
        if shuffle:
            rng.shuffle(order)
        for key, func in order:
            gc.collect()
            sys_start = resource.getrusage(resource.RUSAGE_SELF).ru_stime
            start = clock()
            out = func()
            times[key].append(clock() - start)
            kernel[key].append(resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys_start)
            if keep and round_ == k - 1:
                kept[key] = out
            del out
    return {key: Timing(tuple(times[key]), tuple(kernel[key]), kept[key]) for key in funcs}


def fastest(
    func: Callable[[], object],
    k: int,
    *,
    clock: Callable[[], float] = time.perf_counter,
    keep: bool = False,
) -> Timing:
    """Time ``k`` calls of ``func``: ``.best``, ``.median`` and ``.times`` of the result.

    Parameters
    ----------
    func : callable
        Called without arguments.
    k : int
        Calls.
    clock : callable, default time.perf_counter
        The clock.
    keep : bool, default False
        Keep the last call's result in ``Timing.out``.

    Returns
    -------
    Timing
    """
    return interleaved({"": func}, k, clock=clock, keep=keep)[""]


def gemm_control(A: np.ndarray, B: np.ndarray, k: int) -> Timing:
    """The control of a dense method: a bare GEMM ``A @ B`` of the same operands, timed ``k`` times."""
    return fastest(lambda: A @ B, k)


@numba.njit(parallel=True, cache=True)
def _independent_work(parts: int, n: int) -> float:
    out = np.zeros(parts)
    for t in numba.prange(parts):
        s = 0.0
        for i in range(n // parts):
            s += np.sin(i * 1e-3)
        out[t] = s
    return out.sum()


def parallel_speedup(k: int, threads: int = 2) -> float:
    """The control of a parallel method: the speedup of an embarrassingly parallel kernel.

    Parameters
    ----------
    k : int
        Calls per thread count; their medians are compared.
    threads : int, default 2
        Threads against one.

    Returns
    -------
    float
        Median 1-thread time over median ``threads``-thread time: the most any
        ``threads``-thread speedup can show on this machine now. numba's thread
        count is restored afterwards.
    """
    times = {}
    for n_threads in (1, threads):
        numba.set_num_threads(n_threads)
        _independent_work(n_threads, 1000)  # compile outside the timing
        times[n_threads] = fastest(lambda n=n_threads: _independent_work(n, 20_000_000), k).median
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return times[1] / times[threads]


def peak_bytes(func: Callable[[], object]) -> int:
    """Peak memory numpy/python allocate during one call of ``func`` (tracemalloc), its output included."""
    gc.collect()
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def loglog_slope(x, y) -> float:
    """The least-squares slope of log y against log x (1: y grows linearly with x)."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def load_average(digits: int = 2) -> str:
    """The 1-minute load average: above the core count, other processes share the cores."""
    try:
        return f"{os.getloadavg()[0]:.{digits}f}"
    except (AttributeError, OSError):
        return "n/a"
