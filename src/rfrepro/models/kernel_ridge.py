"""Exact kernel ridge regression on the raw inputs, refused beyond a memory budget."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features._base import NONNEGATIVE_REAL, POSITIVE_REAL, SIGMA, options
from rfrepro.kernels import KERNELS, kernel_matrix
from rfrepro.models._cholesky import cho_factor_guarded
from rfrepro.models._task import TASKS, TaskMixin
from rfrepro.models.ridge import _check_lam

#: kernel values formed at a time when predicting (rows x training rows), 128 MiB in float64
_PREDICT_BLOCK_VALUES = 1 << 24


class MemoryBudgetExceeded(MemoryError):
    """A computation refused before it starts: it needs more memory than ``max_memory_gb``.

    A run refused so is recorded as not run (status ``refused``), not as failed:
    nothing went wrong, the machine was not asked for what it cannot give.
    """


def check_memory_budget(n_bytes: float, max_memory_gb: float | None, what: str) -> None:
    """Raise MemoryBudgetExceeded naming the memory ``what`` needs and the budget, when it does not fit."""
    if max_memory_gb is None:
        return
    budget = float(max_memory_gb) * 2**30
    if n_bytes > budget:
        raise MemoryBudgetExceeded(f"{what} needs {n_bytes / 2**30:.1f} GB, over the budget max_memory_gb = "
                          f"{float(max_memory_gb):g} GB")


def solve_kernel_ridge(K: np.ndarray, T: np.ndarray, lam: float) -> np.ndarray:
    """(K + lam I)^-1 T by Cholesky, overwriting K (the only n x n matrix held)."""
    K[np.diag_indices_from(K)] += lam
    return cho_solve(cho_factor_guarded(K, overwrite_a=True), T, check_finite=False)


def kernel_scores(kernel: str, params: dict, X: np.ndarray, centers: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """k(X, centers) @ coef, in row blocks so the kernel block stays bounded."""
    out = np.empty((X.shape[0], coef.shape[1]))
    step = max(1, _PREDICT_BLOCK_VALUES // max(1, centers.shape[0]))
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        out[rows] = kernel_matrix(kernel, X[rows], centers, **params) @ coef
    return out


class ExactKernelRidge(TaskMixin, BaseEstimator):
    """Kernel ridge regression with the exact kernel: (K + lam I) a = y - b, f(x) = k(x)' a + b.

    Has the same objective as ridge on any features Z with Z Z^T = K
    (:class:`~rfrepro.models.CGRidge` with the same ``lam``). Holding K
    takes 8 n^2 bytes: a training set for which that exceeds
    ``max_memory_gb`` is refused with a MemoryError before anything is
    allocated.

    Parameters
    ----------
    lam : float
    kernel : {"gaussian", "laplacian"}
    sigma : float
        Bandwidth (resolved by the caller).
    task : {"regression", "binary", "multiclass", "classification"}
    fit_intercept : bool
    max_memory_gb : float or None
        Memory budget for the kernel matrix; None for no limit.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n, k)
    intercept_ : ndarray of shape (k,)
    kernel_bytes_ : int
        Bytes of the kernel matrix held while training (the memory estimate).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(50, 2); y = X.sum(axis=1)
    >>> m = ExactKernelRidge(lam=1e-6, kernel="laplacian", sigma=1.0).fit(X, y)
    >>> bool(np.allclose(m.predict(X), y, atol=1e-3)), m.kernel_bytes_
    (True, 20000)
    >>> ExactKernelRidge(max_memory_gb=1e-6).fit(X, y)
    Traceback (most recent call last):
    ...
    rfrepro.models.kernel_ridge.MemoryBudgetExceeded: exact kernel of 50 training rows needs 0.0 GB, over the budget max_memory_gb = 1e-06 GB
    """

    recorded_attributes = ("kernel_bytes_",)

    _parameter_constraints: dict = {"lam": NONNEGATIVE_REAL, "kernel": options(["gaussian", "laplacian"]), "sigma": SIGMA,
        "task": options(TASKS), "fit_intercept": ["boolean"], "max_memory_gb": [None, *POSITIVE_REAL]}

    def __init__(self, lam: float = 0.01, *, kernel: str = "laplacian", sigma: float = 1.0,
                 task: str = "regression", fit_intercept: bool = True, max_memory_gb: float | None = 4.0):
        self.lam = lam
        self.kernel = kernel
        self.sigma = sigma
        self.task = task
        self.fit_intercept = fit_intercept
        self.max_memory_gb = max_memory_gb

    def _kernel_params(self) -> dict:
        if self.kernel not in KERNELS or self.kernel == "polynomial":
            raise ValueError(f"kernel={self.kernel!r}; valid kernels: gaussian, laplacian")
        return {"sigma": float(self.sigma)}

    def fit(self, X, y):
        params = self._kernel_params()
        lam = _check_lam(self.lam)
        n = np.shape(X)[0]
        check_memory_budget(8.0 * n * n, self.max_memory_gb, f"exact kernel of {n} training rows")
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], multi_output=True,
                             y_numeric=not self._is_classifier())
        T = self._encode(y)
        self.intercept_ = T.mean(axis=0) if self.fit_intercept else np.zeros(T.shape[1])
        self.X_fit_ = np.asarray(X, dtype=np.float64)
        K = kernel_matrix(self.kernel, self.X_fit_, **params).astype(np.float64, copy=False)
        self.kernel_bytes_ = int(K.nbytes)
        self.dual_coef_ = solve_kernel_ridge(K, T - self.intercept_, lam)
        return self

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return kernel_scores(self.kernel, self._kernel_params(), np.asarray(X, dtype=np.float64), self.X_fit_,
                             self.dual_coef_) + self.intercept_
