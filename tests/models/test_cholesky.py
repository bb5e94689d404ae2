"""The Cholesky guard: matrices of 1 GiB or more are factorised on one BLAS thread (OpenBLAS's threaded dpotrf
segfaulted from 1.9 GiB on), smaller ones as scipy does."""

import numpy as np
import pytest
from scipy.linalg import cho_factor
from threadpoolctl import threadpool_info, threadpool_limits

from rfrepro.models import _cholesky


def _spd(n, seed=0):
    A = np.random.RandomState(seed).randn(n, n)
    return A @ A.T + n * np.eye(n)


def test_small_matrices_factorise_as_scipy_does():
    A = _spd(50)
    c, lower = _cholesky.cho_factor_guarded(A.copy())
    ref, _ = cho_factor(A, lower=True)
    assert lower and np.allclose(np.tril(c), np.tril(ref), rtol=0, atol=1e-12)


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


@pytest.mark.parametrize("big", [False, True])
def test_large_matrices_are_factorised_on_one_blas_thread(monkeypatch, big):
    seen = []

    def spy(A, **kw):
        seen.append(_blas_threads())
        return cho_factor(A, **kw)

    monkeypatch.setattr(_cholesky, "cho_factor", spy)
    A = _spd(40)
    # the threshold is the matrix's bytes: pretend 1 GiB is this matrix's size (or one byte more)
    monkeypatch.setattr(_cholesky, "ONE_THREAD_BYTES", A.nbytes + (0 if big else 1))
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        c, _ = _cholesky.cho_factor_guarded(A.copy(), overwrite_a=True)
        assert _blas_threads() == before  # restored
    assert seen == [1 if big else before]
    assert np.allclose(np.tril(c) @ np.tril(c).T, A)


def test_the_threshold_lies_below_the_smallest_matrix_seen_to_crash():
    # order 16000 float64 crashed two-thread dpotrf; 1 GiB is order 11585
    assert _cholesky.ONE_THREAD_BYTES <= 16000 ** 2 * 8 / 1.5
