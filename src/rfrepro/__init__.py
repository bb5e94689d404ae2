"""rfrepro: reproducible experiments for random-feature kernel methods.

Importing the package sets :data:`BLAS_IDLE_ENV` in the environment (a value
already there wins) before numpy loads its OpenBLAS, so every process that
runs runs (``python -m rfrepro``, ``python -m rfrepro.reproduce`` and the pool
workers they start, which inherit the environment) holds the machine only
while its BLAS works.
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"

#: OpenBLAS's idle threads spin, runnable, for 2^28 cycles (about 0.1 s) after every call before they
#: sleep. numpy and scipy each load their own OpenBLAS, so one library's idle threads spin while the
#: other's work, and both spin while numba or Python code runs: a run on 2 cores held 2.7 threads
#: runnable on average and took up to twice as long (docs/performance.md, scripts/bench_blas_idle.py).
#: 2^4 cycles: an idle thread sleeps at once. OpenBLAS reads the variable once, when it loads.
BLAS_IDLE_ENV = {"OPENBLAS_THREAD_TIMEOUT": "4"}

_preset = _os.environ.get("OPENBLAS_THREAD_TIMEOUT")
for _name, _value in BLAS_IDLE_ENV.items():
    _os.environ.setdefault(_name, _value)
#: the OPENBLAS_THREAD_TIMEOUT this process's OpenBLAS read when it loaded (None: its default, 2^28
#: cycles), as far as this import can tell: numpy loaded before rfrepro read the environment as it was then
OPENBLAS_THREAD_TIMEOUT = _preset if "numpy" in _sys.modules else _os.environ["OPENBLAS_THREAD_TIMEOUT"]
