"""How far apart two cores are right now: the round trip of one cache line between two threads.

Threads that write the same memory (the shared responses of parallel random
coordinate descent, Hogwild style) pay for every cache line that moves between
their cores. On a virtual machine the host decides where the virtual CPUs run,
and may move them while a study runs: on the 2-vCPU machine of our reference
runs, the round trip below measured 46-54 ns when the two vCPUs shared a cache
and 316-342 ns when they did not, switching between the two from one minute to
the next. Two-thread RCD fits of Wu et al.'s Fig. 6 (ijcnn1, R = 128) took
1.4-1.8 s in the first state and 4.0-4.3 s in the second, with the same
epochs, both threads busy all the time; one-thread fits do not care. A
third state lasted through one whole run of that study: 81-170 ns, and
2-thread fits as slow as one thread (see :data:`SHARED_CACHE_NS`). So a
speedup measured while the cores were far apart says more about the host than
about the code, and :func:`round_trip_ns` beside a timed run says which it was:
every run on two threads or more records it at its start and end
(``host_load.core_round_trip_ns``, :func:`run_round_trip`).

The load average (:mod:`rfrepro.harness.report.hostload`) cannot see this, nor can an
embarrassingly parallel control (its threads share nothing).

>>> ns = round_trip_ns(2000)
>>> ns is None or ns > 0
True
"""

from __future__ import annotations

import os
import time

#: a round trip at or below this means the two threads' cores share a cache. Three states were measured
#: here: 46-56 ns (a shared cache: 2-thread RB fits 1.6x as fast as one thread), 316-684 ns (no shared
#: cache: 2.5x slower than that), and, for a whole study, 81-170 ns with 2-thread fits no faster than one
#: thread (speedup 0.97). The bar is twice the shared value, so only the first state counts as shared
SHARED_CACHE_NS = 100.0

_kernel = None


def _compile():
    """The ping-pong kernel (numba, two threads), compiled on first use so importing this module stays cheap."""
    global _kernel
    if _kernel is None:
        import numba

        from rfrepro.models.rcd import _atomic_add

        @numba.njit(parallel=True, cache=True)
        def ping_pong(flag, n, max_spins):
            # flag[0]: the turn (even: thread 0 writes, odd: thread 1); flag[1]: set when a thread gave up
            for w in numba.prange(2):
                i = 0
                spins = 0
                while i < n and spins < max_spins:
                    v = _atomic_add(flag, 0, 0)
                    if v < 0:
                        break
                    if v == 2 * i + w:
                        _atomic_add(flag, 0, 1)
                        i += 1
                    else:
                        spins += 1
                if spins >= max_spins:  # the other thread is not running: no latency to measure
                    _atomic_add(flag, 1, 1)
                    _atomic_add(flag, 0, -(1 << 60))

        _kernel = ping_pong
    return _kernel


def round_trip_ns(n: int = 50_000, max_spins: int = 200_000_000) -> float | None:
    """Nanoseconds for one cache line to go from one thread's core to the other's and back.

    Two threads take turns incrementing one counter ``n`` times each (about
    2.5 ms at 50 ns, 17 ms at 340 ns for the default ``n``). None when the
    machine has one core or numba one thread, or when a thread waited more than
    ``max_spins`` reads for its turn (the other was not running: the host is busy).
    """
    import numba
    import numpy as np

    if (os.cpu_count() or 1) < 2 or numba.config.NUMBA_NUM_THREADS < 2:
        return None
    kernel = _compile()
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        kernel(np.zeros(2, dtype=np.int64), 10, max_spins)  # compile / load from cache, wake the threads
        flag = np.zeros(2, dtype=np.int64)
        t0 = time.perf_counter()
        kernel(flag, n, max_spins)
        elapsed = time.perf_counter() - t0
    finally:
        numba.set_num_threads(before)
    if flag[1]:
        return None
    return elapsed / n * 1e9


def run_round_trip(threads) -> float | None:
    """The round trip (ns, 1 decimal) for a run on ``threads`` threads: None below two (its threads share nothing)."""
    try:
        if threads is None or int(threads) < 2:
            return None
    except (TypeError, ValueError):
        return None
    ns = round_trip_ns()
    return None if ns is None else round(ns, 1)
