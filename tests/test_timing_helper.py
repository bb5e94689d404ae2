"""scripts/_timing.py, the benchmarks' shared timing helper, on a fake clock: its numbers, not timings."""

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def timing():
    spec = importlib.util.spec_from_file_location("_timing", ROOT / "scripts" / "_timing.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_timing"] = mod  # its dataclass looks its module up there
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop("_timing", None)


def fake_clock(durations):
    """A clock read twice per call: each call lasts the next of ``durations`` seconds."""
    readings = itertools.chain.from_iterable((0.0, float(d)) for d in durations)
    return lambda: next(readings)


def counter():
    """A function returning 1, 2, 3, ... on successive calls."""
    calls = itertools.count(1)
    return lambda: next(calls)


def test_fastest_returns_the_least_and_the_median_of_the_calls(timing):
    t = timing.fastest(counter(), 5, clock=fake_clock([3, 1, 2, 5, 4]))
    assert t.times == (3.0, 1.0, 2.0, 5.0, 4.0)
    assert t.best == 1.0
    assert t.median == 3.0
    assert len(t.kernel) == 5
    assert t.out is None  # results are dropped unless kept


def test_fastest_median_of_an_even_count_and_the_kept_result(timing):
    t = timing.fastest(counter(), 4, clock=fake_clock([4, 1, 2, 8]), keep=True)
    assert (t.best, t.median) == (1.0, 3.0)
    assert t.out == 4  # the last call's result


def test_best_kernel_is_that_of_the_first_fastest_call(timing):
    t = timing.Timing(times=(2.0, 1.0, 1.0, 3.0), kernel=(0.5, 0.25, 0.125, 0.0))
    assert t.best_kernel == 0.25


def test_interleaved_calls_one_of_each_per_round_in_order(timing):
    calls = []
    funcs = {key: (lambda key=key: calls.append(key) or key) for key in "abc"}
    # rounds of a, b, c: a lasts 1, 2, 3; b 10, 20, 30; c 5, 1, 9
    t = timing.interleaved(funcs, 3, clock=fake_clock([1, 10, 5, 2, 20, 1, 3, 30, 9]), keep=True)
    assert calls == list("abc") * 3
    assert {k: v.times for k, v in t.items()} == {
        "a": (1.0, 2.0, 3.0), "b": (10.0, 20.0, 30.0), "c": (5.0, 1.0, 9.0)}
    assert (t["c"].best, t["c"].median) == (1.0, 5.0)
    assert {k: v.out for k, v in t.items()} == {"a": "a", "b": "b", "c": "c"}


def test_interleaved_shuffles_each_round_with_a_seeded_order(timing):
    calls = []
    funcs = {key: (lambda key=key: calls.append(key)) for key in "abcd"}
    timing.interleaved(funcs, 4, clock=fake_clock(range(1, 17)), shuffle=True)
    rounds = [calls[i:i + 4] for i in range(0, 16, 4)]
    order, expected, rng = list("abcd"), [], np.random.RandomState(0)
    for _ in range(4):
        rng.shuffle(order)
        expected.append(list(order))
    assert rounds == expected
    again = []
    funcs = {key: (lambda key=key: again.append(key)) for key in "abcd"}
    timing.interleaved(funcs, 4, clock=fake_clock(range(1, 17)), shuffle=True)
    assert again == calls  # the same order on every run


def test_gemm_control_times_the_product_k_times(timing):
    A = np.ones((3, 4))
    t = timing.gemm_control(A, A.T, 3)
    assert len(t.times) == 3 and t.best <= t.median


def test_peak_bytes_counts_what_the_call_allocates(timing):
    assert timing.peak_bytes(lambda: bytearray(4_000_000)) >= 4_000_000
    assert timing.peak_bytes(lambda: None) < 100_000


def test_loglog_slope(timing):
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert timing.loglog_slope(x, 3 * x**2) == pytest.approx(2.0, abs=1e-12)
    assert timing.loglog_slope(x, 5 * x) == pytest.approx(1.0, abs=1e-12)


def test_load_average(timing, monkeypatch):
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (1.256, 0.0, 0.0))
    assert timing.load_average() == "1.26"
    assert timing.load_average(1) == "1.3"

    def unavailable():
        raise OSError

    monkeypatch.setattr(timing.os, "getloadavg", unavailable)
    assert timing.load_average() == "n/a"
