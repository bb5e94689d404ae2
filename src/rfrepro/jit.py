"""Compiled kernels in a threaded and a serial variant, each cached on disk under its own name.

A kernel whose loop over rows is a ``prange`` is compiled twice: threaded for
large inputs and serial for small ones (waking the thread pool costs more
than a few rows save). numba's on-disk cache names an entry by the
function's module, qualified name and first line, and keys it by the
signature and the CPU, not by the compile flags (numba issue #6845). So
``njit(parallel=True, cache=True)(body)`` and ``njit(cache=True)(body)``
share one entry: whichever variant compiled first in a fresh cache is loaded
for both from then on. A serial build served as the threaded one made the
float32 RKS cosine run on one core of two (``scripts/bench_features.py``).

Hand-written because numba has no option for it; :func:`threaded_and_serial`
compiles each variant from a copy of ``body`` with its own qualified name,
hence its own cache entry, and the same code and globals.

>>> from rfrepro.features import _trig
>>> _trig._cos_bias_par.py_func.__qualname__, _trig._cos_bias_ser.py_func.__qualname__
('_cos_bias_body__threaded', '_cos_bias_body__serial')
"""

from __future__ import annotations

import types
from collections.abc import Callable

from numba import njit

#: Suffixes of the two variants' qualified names (their cache entries' names).
THREADED_SUFFIX, SERIAL_SUFFIX = "__threaded", "__serial"


def _renamed(body: Callable, suffix: str) -> Callable:
    copy = types.FunctionType(body.__code__, body.__globals__, body.__name__ + suffix, body.__defaults__,
                              body.__closure__)
    copy.__qualname__ = body.__qualname__ + suffix
    copy.__module__ = body.__module__
    copy.__doc__ = body.__doc__
    return copy


def threaded_and_serial(body: Callable, **flags) -> tuple[Callable, Callable]:
    """``(njit(parallel=True, cache=True, **flags)(body), njit(cache=True, **flags)(body))``, cached apart."""
    return (njit(parallel=True, cache=True, **flags)(_renamed(body, THREADED_SUFFIX)),
            njit(cache=True, **flags)(_renamed(body, SERIAL_SUFFIX)))
