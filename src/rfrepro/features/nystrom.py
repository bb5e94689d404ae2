"""Nystrom feature map and the exact (empirical) kernel map."""

from __future__ import annotations

import hashlib
import warnings
from collections import OrderedDict

import numpy as np
from scipy.linalg import eigh
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from rfrepro.features import _cost
from rfrepro.features._base import (
    FINITE_NONNEGATIVE_REAL,
    NONNEGATIVE_INT,
    NONNEGATIVE_REAL,
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)
from rfrepro.features.sampling import SPECTRAL_KERNELS
from rfrepro.kernels import KERNELS, kernel_matrix


def _kernel_params(est) -> dict:
    """The keyword arguments of :func:`kernel_matrix` for a fitted map's kernel: a bandwidth or a degree and offset."""
    if est.kernel == "polynomial":
        return {"degree": est.degree, "offset": est.offset}
    return {"sigma": est.sigma_}


class Nystroem(FeatureMap):
    """Nystrom features z(x) = K_mm^{-1/2} k_m(x) on m landmarks drawn uniformly.

    Z Z^T = C W^+ C^T with C = K[:, L], W = K[L, L]; with every training point
    as a landmark it reproduces K exactly. Any kernel of :mod:`rfrepro.kernels`:
    the method needs only kernel values, not a spectral density.

    Parameters
    ----------
    n_components : int
        Number of landmarks = output columns (``n_components_counts = "columns"``);
        at most the number of rows.
    kernel : {"gaussian", "laplacian", "polynomial"}
    sigma : float or {"median", "mean"}
        Bandwidth of the Gaussian and Laplacian kernels (unused by the polynomial one).
    degree : int
        Degree r of the polynomial kernel (<x, y> + offset)^r.
    offset : float
        Offset q >= 0 of the polynomial kernel.
    random_state : int, RandomState or None

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in_)
        The landmarks.
    normalization_ : ndarray of shape (n_components, n_components)
        K_mm^{-1/2} (pseudo-inverse square root; eigenvalues below
        ``1e-10 * max`` are dropped).

    References
    ----------
    C. Williams and M. Seeger. Using the Nystrom method to speed up kernel machines. NIPS 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from rfrepro.kernels import kernel_matrix
    >>> X = np.random.RandomState(0).randn(50, 3)
    >>> ny = Nystroem(n_components=20, sigma=1.0, random_state=0).fit(X)
    >>> ny.transform(X).shape, ny.components_.shape
    ((50, 20), (20, 3))
    >>> Z = Nystroem(n_components=50, sigma=1.0, random_state=0).fit_transform(X)
    >>> bool(np.allclose(Z @ Z.T, kernel_matrix("gaussian", X, sigma=1.0)))  # every row a landmark
    True
    >>> U = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> Zp = Nystroem(n_components=50, kernel="polynomial", degree=7, offset=1.0, random_state=0).fit_transform(U)
    >>> bool(np.allclose(Zp @ Zp.T, kernel_matrix("polynomial", U, degree=7, offset=1.0)))
    True
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "kernel": options(KERNELS), "sigma": [None, *SIGMA],
        "degree": POSITIVE_INT, "offset": FINITE_NONNEGATIVE_REAL, "random_state": RANDOM_STATE}
    n_components_counts = "columns"

    def __init__(self, n_components: int = 100, *, kernel="gaussian", sigma=1.0, degree: int = 2,
                 offset: float = 1.0, random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.offset = offset
        self.random_state = random_state

    def _fit(self, X):
        m = int(self.n_components)
        if m > X.shape[0]:  # as scikit-learn's Nystroem: every row becomes a landmark, with a warning
            warnings.warn(f"n_components={m} landmarks but only {X.shape[0]} rows to draw them from: "
                          f"using all {X.shape[0]} rows (n_components_ = {X.shape[0]})", stacklevel=3)
            m = X.shape[0]
        self.n_components_ = m
        rng = check_random_state(self.random_state)
        if self.kernel in SPECTRAL_KERNELS:
            self.sigma_ = self._resolve_sigma(X, self.kernel)
        idx = np.sort(rng.choice(X.shape[0], m, replace=False))
        self.components_ = np.array(X[idx])
        W = kernel_matrix(self.kernel, self.components_.astype(np.float64), **_kernel_params(self))
        evals, evecs = eigh(W)
        keep = evals > 1e-10 * max(evals.max(), np.finfo(float).tiny)
        inv_sqrt = np.zeros_like(evals)
        inv_sqrt[keep] = 1.0 / np.sqrt(evals[keep])
        self.normalization_ = ((evecs * inv_sqrt) @ evecs.T).astype(X.dtype)
        self.n_features_out_ = m
        return self

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: the kernel block k(X, landmarks), then K_mm^-1/2."""
        m = self.normalization_.shape[0]
        return _cost.chain(_cost.kernel_block(n, m, self.n_features_in_, dtype),
                           _cost.dense_projection(n, m, self.n_features_out_, dtype),
                           n * m * _cost.itemsize(dtype))

    def _transform_chunk(self, X, out):
        C = kernel_matrix(self.kernel, X, self.components_.astype(X.dtype), **_kernel_params(self))
        np.matmul(C, self.normalization_.astype(X.dtype, copy=False), out=out)


class ExactKernel(FeatureMap):
    """The exact kernel as an (empirical) map: transform(X) = K(X, X_fit).

    Used by the kernel models (kernel SVM, dual KRR) through a precomputed
    kernel, and as the reference for kernel-approximation errors. Its output
    is a kernel block, not a feature vector (``output_kind = "kernel"``).

    Blocks K(X, X_fit) of at most ``cache_bytes`` in all are kept per process
    (read-only) and returned again for the same rows, fitted rows and kernel:
    a sweep over the regularisation of a kernel SVM scores the same test rows
    against the same training rows once per lambda (Sun et al.'s 17 lambdas x
    10^5 test points). ``cache_bytes=0`` computes every block afresh, as a
    study that times the map needs.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(50, 3)
    >>> ek = ExactKernel(kernel="gaussian", sigma=1.0).fit(X[:40])
    >>> ek.transform(X[40:]).shape  # K(X_test, X_fit): one column per fitted row
    (10, 40)
    >>> ek.transform(X[:3])[:, :3].diagonal()  # k(x, x) = 1 for the Gaussian kernel
    array([1., 1., 1.])
    """

    output_kind = "kernel"

    _parameter_constraints: dict = {"kernel": options(KERNELS), "sigma": SIGMA, "degree": POSITIVE_INT,
        "offset": NONNEGATIVE_REAL, "cache_bytes": NONNEGATIVE_INT}

    def __init__(self, *, kernel="gaussian", sigma=1.0, degree: int = 2, offset: float = 1.0,
                 cache_bytes: int = 1 << 30):
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.offset = offset
        self.cache_bytes = cache_bytes

    # the sigma rules subsample rows above 2000 points: keep that draw fixed
    random_state = 0

    def _params(self) -> dict:
        return _kernel_params(self)

    def _fit(self, X):
        if self.kernel != "polynomial":
            self.sigma_ = self._resolve_sigma(X, self.kernel)
        self.X_fit_ = np.array(X)
        self.n_features_out_ = X.shape[0]
        return self

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of ``n`` rows of K(X, X_fit), computed afresh (a cached block costs nothing)."""
        return _cost.kernel_block(n, self.X_fit_.shape[0], self.n_features_in_, dtype)

    def _transform_chunk(self, X, out):
        out[...] = kernel_matrix(self.kernel, X, self.X_fit_.astype(X.dtype), **self._params())

    _cache: OrderedDict = OrderedDict()

    def transform(self, X):
        check_is_fitted(self)
        if self.cache_bytes <= 0:
            return super().transform(X)
        X = np.asarray(X)
        key = (hashlib.sha1(np.ascontiguousarray(X)).hexdigest(), X.shape, X.dtype.str,
               hashlib.sha1(np.ascontiguousarray(self.X_fit_)).hexdigest(), self.kernel,
               tuple(sorted(self._params().items())))
        hit = ExactKernel._cache.get(key)
        if hit is not None:
            ExactKernel._cache.move_to_end(key)
            return hit
        K = super().transform(X)
        if K.nbytes <= self.cache_bytes:
            K.setflags(write=False)
            ExactKernel._cache[key] = K
            while sum(v.nbytes for v in ExactKernel._cache.values()) > self.cache_bytes:
                ExactKernel._cache.popitem(last=False)
        return K
