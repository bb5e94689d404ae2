"""The cache-line round-trip probe beside timed parallel runs (rfrepro.runner.cores)."""

import numba
import numpy as np
import pytest

from rfrepro.runner import cores

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")


@two_threads
def test_ping_pong_takes_turns():
    """Each thread increments the shared counter n times, in turn: it ends at 2 n, nobody gave up."""
    kernel = cores._compile()
    numba.set_num_threads(2)
    flag = np.zeros(2, dtype=np.int64)
    kernel(flag, 5000, 10**9)
    assert flag[0] == 10000 and flag[1] == 0


@two_threads
def test_ping_pong_gives_up_when_the_turn_never_comes():
    """A counter no thread can advance (it starts at a turn nobody wants) ends the probe, marked, not a hang."""
    kernel = cores._compile()
    numba.set_num_threads(2)
    flag = np.array([-1, 0], dtype=np.int64)  # negative: both threads stop at once
    kernel(flag, 10, 1000)
    assert flag[1] == 0
    flag = np.array([3, 0], dtype=np.int64)  # thread 0 wants 0, thread 1 wants 1: both wait
    kernel(flag, 10, 1000)
    assert flag[1] >= 1 and flag[0] < 0


@two_threads
def test_round_trip_is_a_time_per_turn():
    ns = cores.round_trip_ns(2000)
    assert ns is None or 1.0 < ns < 1e7  # at least a nanosecond, at most 10 ms per round trip


def test_round_trip_needs_two_cores(monkeypatch):
    monkeypatch.setattr(cores.os, "cpu_count", lambda: 1)
    assert cores.round_trip_ns(100) is None


@two_threads
def test_gave_up_reads_as_not_measured(monkeypatch):
    """When a thread gives up (the other was not running), the probe says so instead of a number."""
    real = cores._compile()

    def stuck(flag, n, max_spins):
        real(flag, n, max_spins)
        flag[1] = 1

    monkeypatch.setattr(cores, "_kernel", stuck)
    assert cores.round_trip_ns(100) is None
