"""Peak resident memory of a run, sampled by a background thread."""

from __future__ import annotations

import os
import resource
import threading


def current_rss() -> int:
    """Resident set size of this process in bytes."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class PeakMemory:
    """Context manager recording the peak RSS while it is active.

    ``peak`` is the highest RSS seen (bytes), ``delta`` the peak above the RSS
    at entry: the memory the run itself needed, even in a reused worker.
    """

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.peak = 0
        self.start = 0

    def _poll(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, current_rss())

    def __enter__(self):
        self.start = self.peak = current_rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, current_rss())
        return False

    @property
    def delta(self) -> int:
        return max(0, self.peak - self.start)
