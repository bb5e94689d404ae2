"""The memory a run itself needs: its peak of traced allocations above its start.

``peak_bytes`` comes from :mod:`tracemalloc`, which numpy reports its array
buffers to: it is the run's own peak (allocations made before the run, in the
same worker, do not count), the same in a fresh or a reused process. It does
not see memory that compiled libraries allocate behind numpy's back (BLAS
work buffers, numba's runtime, liblinear's copies), so the process RSS above
its value at the start of the run is recorded beside it
(``rss_peak_above_start_bytes``, sampled every 10 ms) and ``method`` names
both.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import tracemalloc


def current_rss() -> int:
    """Resident set size of this process in bytes."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        # no /proc: the peak so far; ru_maxrss is in KiB on Linux, in bytes on macOS
        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


class PeakMemory:
    """Context manager measuring a block's peak traced allocations and RSS above its start."""

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.rss_peak = self.rss_start = 0
        self.traced_peak = 0

    def _poll(self):
        while not self._stop.wait(self.interval):
            self.rss_peak = max(self.rss_peak, current_rss())

    def __enter__(self):
        self._owns_trace = not tracemalloc.is_tracing()
        if self._owns_trace:
            tracemalloc.start(1)
        tracemalloc.reset_peak()
        self._traced_start = tracemalloc.get_traced_memory()[0]
        self.rss_start = self.rss_peak = current_rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.rss_peak = max(self.rss_peak, current_rss())
        self.traced_peak = max(0, tracemalloc.get_traced_memory()[1] - self._traced_start)
        if self._owns_trace:
            tracemalloc.stop()
        return False

    def report(self) -> dict:
        return {
            "peak_bytes": int(self.traced_peak),
            "rss_peak_above_start_bytes": int(max(0, self.rss_peak - self.rss_start)),
            "method": "tracemalloc peak above start (numpy + Python allocations); "
                      "RSS above start sampled every 10 ms",
        }
