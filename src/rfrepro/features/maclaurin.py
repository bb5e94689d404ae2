"""Random Maclaurin features for dot-product kernels (Kar and Karnick, 2012).

A dot-product kernel k(x, y) = f(<x, y>) = sum_n a_n <x, y>^n with a_n >= 0 is
estimated term by term: a feature draws a degree N with P[N = n] = 2^-(n+1)
(the paper's p = 2), N Rademacher vectors w_1..w_N, and is
sqrt(a_N / P[N]) prod_j <w_j, x>, so E[z(x) z(y)] = k(x, y). Here f is the
polynomial kernel (<x, y> + q)^r, a_n = C(r, n) q^(r-n).

The features are sorted by their degree, so the j-th factors of all features
of degree >= j form one contiguous block of columns: the transform is one
projection per factor position j = 1..max N (a GEMM with the dense Rademacher
vectors, or a fast Walsh-Hadamard transform with the structured ones) and an
elementwise product into that block, never a Python loop over features.
"""

from __future__ import annotations

from math import comb

import numpy as np
from sklearn.utils import check_random_state

from rfrepro.features import _cost
from rfrepro.features._base import (
    FINITE_NONNEGATIVE_REAL,
    POSITIVE_INT,
    RANDOM_STATE,
    FeatureMap,
    options,
)
from rfrepro.features.hadamard import SRHT

DRAWS = ("dense", "hadamard")


def maclaurin_coefficients(degree: int, offset: float) -> np.ndarray:
    """a_n = C(r, n) q^(r - n), n = 0..r: the Maclaurin series of (t + q)^r."""
    return np.array([comb(degree, n) * offset ** (degree - n) for n in range(degree + 1)], dtype=float)


class RandomMaclaurin(FeatureMap):
    """Random Maclaurin features of the polynomial kernel (<x, y> + offset)^degree.

    Each random feature draws a degree N with P[N = n] = 2^-(n+1) and N
    Rademacher vectors, and is sqrt(a_N 2^(N+1) / m) prod_j <w_j, x> (m random
    features); features whose N exceeds ``degree`` have a_N = 0 and are zero,
    as in the paper's Algorithm 1. E[z(x)^T z(y)] = (<x, y> + offset)^degree.

    With ``h01=True`` (the H0/1 heuristic of Kar and Karnick) the n = 0 and
    n = 1 terms are put in exactly, a constant sqrt(a_0) and sqrt(a_1) x
    (d + 1 columns), and the other ``n_components - d - 1`` features draw
    N >= 2 with P[N = n] = 2^-(n-1). This needs ``n_components > d + 1``.

    Parameters
    ----------
    n_components : int
        Output dimension D: the number of output columns (``n_components_counts
        = "columns"``), the d + 1 exact ones of ``h01=True`` included.
    degree : int
        r, the polynomial degree.
    offset : float
        q >= 0.
    h01 : bool, default False
        Use the H0/1 heuristic.
    draws : {"dense", "hadamard"}
        ``"dense"``: i.i.d. Rademacher vectors, applied by a GEMM.
        ``"hadamard"``: the j-th factors of all features are distinct rows of
        one Walsh-Hadamard matrix times an independent random sign diagonal
        (each is a Rademacher vector; the factors of one feature are
        independent), applied by the fast transform in O(d' log d') per row.
    random_state : int, RandomState or None

    Attributes
    ----------
    degrees_ : ndarray of shape (m,) of int
        N of each random feature, ascending.
    coef_ : ndarray of shape (m,)
        sqrt(a_N / (P[N] m)) of each random feature.
    starts_ : ndarray of shape (max N + 1,) of int
        ``starts_[j - 1]``: first random column whose degree is >= j.
    weights_ : list of ndarray of shape (m_j, d) of int8 (``"dense"``)
        The Rademacher vectors of factor position j, one row per feature.
    srhts_ : list of SRHT (``"hadamard"``)
    n_features_out_ : int

    References
    ----------
    P. Kar and H. Karnick. Random feature maps for dot product kernels. AISTATS 2012.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(4, 3)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> rm = RandomMaclaurin(n_components=64, degree=3, random_state=0).fit(X)
    >>> rm.transform(X).shape
    (4, 64)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "degree": POSITIVE_INT, "offset": FINITE_NONNEGATIVE_REAL,
        "h01": ["boolean"], "draws": options(DRAWS), "random_state": RANDOM_STATE}
    n_components_counts = "columns"

    def __init__(
        self,
        n_components: int = 100,
        *,
        degree: int = 2,
        offset: float = 1.0,
        h01: bool = False,
        draws: str = "dense",
        random_state=None,
    ):
        self.n_components = n_components
        self.degree = degree
        self.offset = offset
        self.h01 = h01
        self.draws = draws
        self.random_state = random_state

    def _fit(self, X):
        n_out, r, q = int(self.n_components), int(self.degree), float(self.offset)
        rng = check_random_state(self.random_state)
        d = X.shape[1]
        a = maclaurin_coefficients(r, q)
        if self.h01:
            self.n_exact_ = d + 1
            if n_out <= self.n_exact_:
                raise ValueError(
                    f"h01=True puts the d + 1 = {d + 1} exact terms in the output: "
                    f"n_components must exceed it, got {n_out}"
                )
            m = n_out - self.n_exact_
            N = rng.geometric(0.5, size=m) + 1          # P[N = n] = 2^-(n-1), n >= 2
            prob = 0.5 ** (N - 1.0)
        else:
            self.n_exact_ = 0
            m = n_out
            N = rng.geometric(0.5, size=m) - 1          # P[N = n] = 2^-(n+1), n >= 0
            prob = 0.5 ** (N + 1.0)
        coef = np.sqrt(np.where(N <= r, a[np.minimum(N, r)], 0.0) / (prob * m))
        # a zero feature needs no factors: give it degree 0 so nothing is drawn for it
        N = np.where(coef > 0, N, 0)
        order = np.argsort(N, kind="stable")
        self.degrees_, self.coef_ = N[order], coef[order]
        self.exact_coef_ = np.sqrt(a[:2])
        top = int(self.degrees_.max(initial=0))
        self.starts_ = np.searchsorted(self.degrees_, np.arange(1, top + 2))
        counts = m - self.starts_[:-1]                   # features with degree >= j
        if self.draws == "dense":
            self.weights_ = [
                rng.choice(np.array([-1, 1], dtype=np.int8), size=(int(c), d)) for c in counts
            ]
            self.srhts_ = None
        else:
            seeds = rng.randint(np.iinfo(np.int32).max, size=len(counts))
            self.srhts_ = [SRHT(d, int(c), random_state=int(s)) for c, s in zip(counts, seeds)]
            self.weights_ = None
        self._cast = {}
        self.n_features_out_ = n_out
        return self

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: per factor j, <w, x> of the c_j features of
        degree > j (a GEMM, or an SRHT and its rescaling) and the product into the output."""
        d, size, k = self.n_features_in_, _cost.itemsize(dtype), self.n_exact_
        counts = [self.n_features_out_ - k - int(s) for s in self.starts_[:-1]]
        flops, params = n * k, (self.n_features_out_ - k) * size
        for j, c in enumerate(counts):
            if self.srhts_ is None:
                flops += _cost.gemm(n, d, c) + n * c
                params += c * d * size
            else:
                srht = self.srhts_[j]
                flops += srht.cost(n, dtype)["flops"] + 2 * n * c
                params += srht.n_padded_ * size + srht.index_.nbytes
        return _cost.cost(flops, size * (n * d + n * self.n_features_out_) + params)

    def _factor(self, j: int, X: np.ndarray) -> np.ndarray:
        """<w, x> for the j-th factors (j from 0) of every feature of degree > j."""
        if self.srhts_ is not None:
            srht = self.srhts_[j]
            # SRHT scales by 1/sqrt(m_j); the Rademacher rows are the unscaled H D
            return srht.apply(X) * X.dtype.type(1.0 / srht.scale_)
        key = (j, X.dtype)
        if key not in self._cast:  # cast the int8 draws once per dtype, not once per chunk
            self._cast[key] = np.ascontiguousarray(self.weights_[j].T, dtype=X.dtype)
        return X @ self._cast[key]

    def _transform_chunk(self, X, out):
        k = self.n_exact_
        if k:
            out[:, 0] = self.exact_coef_[0]
            np.multiply(X, X.dtype.type(self.exact_coef_[1]), out=out[:, 1:k])
        rand = out[:, k:]
        rand[:] = self.coef_.astype(X.dtype)
        for j in range(len(self.starts_) - 1):
            rand[:, self.starts_[j]:] *= self._factor(j, X)
