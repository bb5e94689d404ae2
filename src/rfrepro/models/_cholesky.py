"""Cholesky factorisation that steps around OpenBLAS's threaded ``dpotrf`` crash on large matrices.

On this project's reference machine (2 cores, the OpenBLAS builds that numpy
and scipy ship: 0.3.30 and 0.3.31) ``dpotrf`` with two threads segfaulted in
every fresh process tried on SPD float64 matrices of order 16000, 16384 and
16512 (1.9 to 2.0 GiB; one order-16512 factorisation inside a loaded sweep got
through), while orders 8192, 12000, 13000 and 14500 factorise; one thread
factorises all of them. Upstream reports of the same kind: OpenMathLib/OpenBLAS
issues 352 and 2562 (threaded dpotrf on large matrices). A segfault kills the
worker and loses the run, so from 1 GiB on (order 11585), about half the
smallest size seen to crash, the factorisation runs with BLAS held to one
thread: slower (about 1.7x on 2 cores) but never lost. Hand-written because no
library offers the guard.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor
from threadpoolctl import threadpool_limits

#: bytes at and above which the factorisation runs on one BLAS thread
ONE_THREAD_BYTES = 2**30


def cho_factor_guarded(A: np.ndarray, *, overwrite_a: bool = False):
    """``scipy.linalg.cho_factor(A, lower=True)`` (no finite check), on one BLAS thread from 1 GiB on.

    >>> A = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> c, lower = cho_factor_guarded(A)
    >>> bool(np.allclose(np.tril(c) @ np.tril(c).T, A)), lower
    (True, True)
    """
    if A.nbytes < ONE_THREAD_BYTES:
        return cho_factor(A, lower=True, overwrite_a=overwrite_a, check_finite=False)
    with threadpool_limits(1, user_api="blas"):
        return cho_factor(A, lower=True, overwrite_a=overwrite_a, check_finite=False)
