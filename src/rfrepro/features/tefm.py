"""Training-efficient feature maps (TEFM-G, TEFM-S) of Chen, Yang, King and Lyu (2015).

RKS features F (n x d) are compressed to l < d features by a fast
data-dependent subspace embedding: Y = (F^T F)^q F^T Theta for a random test
matrix Theta (n x l), Q the orthonormal basis of Y from a thin QR, and
z(x) = Q^T f(x). On the training rows Z = F Q, and Z Z^T = F Q Q^T F^T is the
best rank-l approximation of F F^T that the sketch finds.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from rfrepro.features import _cost
from rfrepro.features._base import (
    NONNEGATIVE_INT,
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    options,
    row_chunks,
)
from rfrepro.features.compositional import ProjectedRKS, _draw_seed
from rfrepro.features.hadamard import SRHT
from rfrepro.features.rff import VARIANTS
from rfrepro.features.sampling import SPECTRAL_KERNELS


def _orthonormal_basis(Y: np.ndarray) -> np.ndarray:
    """Q of the thin QR of Y (float64 whatever the dtype of Y: Q is reused for every transform)."""
    return scipy.linalg.qr(np.asarray(Y, dtype=np.float64), mode="economic")[0]


def _row_space_basis(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V, F V): an orthonormal basis V (d x r, float64) of the row space of F (n x d, n < d), r
    its numerical rank, and the training rows' coordinates in it (n x r, float64).

    TEFM at l >= n: the sketch Y = F^T Theta (d x l) then spans the row space
    of F whatever Theta is (with probability 1), so Q = orth(Y) is a basis of
    it followed by l - n columns that complete it arbitrarily (the QR of a
    rank-n matrix) and are zero, up to round-off, on every training row. Any
    basis of the row space gives the same training Gram F Q Q^T F^T = F F^T
    and, as the completion gets zero weight from a model trained on these
    rows, the same predictions of any rotation-invariant linear model (ridge,
    L2 SVM). Here it is V of F = U S V^T from the n x n Gram: F F^T = U S^2
    U^T, V = F^T U S^-1, dropping S^2 at or below n eps of the largest (the
    cut of scipy.linalg.pinvh). Two GEMMs and an n x n eigh instead of the
    Householder QR of a d x l matrix, which LAPACK runs far below the GEMM
    rate (at n = 2000, l = 4096, d = 16384: about 5 s against 40 s). The
    training rows' coordinates F V are U S (F F^T U = U S^2 on the kept
    pairs), so ``fit_transform`` needs no third n x d x r product.
    """
    F64 = np.asarray(F, dtype=np.float64)
    evals, evecs = scipy.linalg.eigh(F64 @ F64.T)
    keep = evals > max(evals[-1], 0.0) * F64.shape[0] * np.finfo(np.float64).eps
    evals, evecs = evals[keep][::-1], evecs[:, keep][:, ::-1]
    s = np.sqrt(evals)
    return F64.T @ (evecs / s), evecs * s


def _gram_times(F: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """F^T (F Y), accumulated over row blocks so the n x l product F Y is never whole."""
    out = np.zeros((F.shape[1], Y.shape[1]), dtype=F.dtype)
    for rows in row_chunks(F.shape[0], max(F.shape[1], Y.shape[1])):
        out += F[rows].T @ (F[rows] @ Y)
    return out


class _TEFM(ProjectedRKS):
    """Shared fit of TEFM-G and TEFM-S; subclasses implement ``_sketch(F, l, rng)`` -> Y."""

    n_components_counts = "columns"

    def _fit_basis(self, X) -> tuple[np.ndarray, np.ndarray | None]:
        """Draw the RKS map and fit Q; return the training features F (n x d) and, when l >= n,
        their first ``rank_`` output columns F Q (else None)."""
        rng = check_random_state(self.random_state)
        n_up = self._fit_rks(X, rng).n_features_out_
        n_out = int(self.n_components)
        if n_out > n_up:
            raise ValueError(
                f"n_components={n_out} exceeds the {n_up} RKS features it is extracted from "
                f"(n_up_components={self.n_up_components}, variant={self.variant!r})"
            )
        F = self.rff_.transform(X)
        coords = None
        if n_out >= F.shape[0]:
            basis, coords = _row_space_basis(F)
            # Column-major: the basis is one contiguous block that the projection reads in
            # place, and the zero columns past it are never touched (nor their pages).
            self.components_ = np.zeros((F.shape[1], n_out), order="F")
            self.components_[:, : basis.shape[1]] = basis
            self.rank_ = basis.shape[1]
        else:
            self.components_ = _orthonormal_basis(self._sketch(F, n_out, rng))
            self.rank_ = n_out
        self.n_features_out_ = n_out
        return F, coords

    def _fit(self, X):
        self._fit_basis(X)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return F Q, reusing the training features F instead of recomputing them."""
        self._validate_params()  # as FeatureMap.fit, which this replaces
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        F, coords = self._fit_basis(X)
        out = np.empty((F.shape[0], self.n_features_out_), dtype=F.dtype)
        if coords is None:
            self._down(F, out)
        else:  # l >= n: F Q is known from the fit (U S, see _row_space_basis)
            out[:, : self.rank_] = coords
            out[:, self.rank_ :] = 0
        return out

    def _down_cost(self, n: int, dtype) -> dict:
        zeros = n * (self.n_features_out_ - self.rank_) * _cost.itemsize(dtype)  # the columns past rank_, written
        projection = _cost.dense_projection(n, self.rff_.n_features_out_, self.rank_, dtype)
        return _cost.cost(projection["flops"], projection["bytes"] + zeros)

    def _down(self, F, out):
        rank = self.rank_
        Q = self.components_[:, :rank].astype(F.dtype, copy=False)  # float64 rows: Q itself, no copy
        if rank == out.shape[1]:
            np.matmul(F, Q, out=out)
        else:  # the columns past rank_ are zero (l >= n: see _fit_basis)
            out[:, :rank] = F @ Q
            out[:, rank:] = 0

    def _sketch(self, F, n_out, rng):  # pragma: no cover - abstract
        raise NotImplementedError


class TEFMG(_TEFM):
    """TEFM-G (Algorithm 1): RKS features compressed with a Gaussian range finder.

    Y = (F^T F)^q F^T Theta with Theta ~ N(0, 1) of shape (n, l); Q from the
    thin QR of Y; z(x) = Q^T f(x) with the same RKS draw f.

    Parameters
    ----------
    n_components : int
        l, the number of output columns (``n_components_counts = "columns"``).
    n_up_components : int or None, default None
        Frequencies of the inner RKS map (its d features must be ``>= l``);
        None: d = 4 l, as in the paper's experiments.
    q : int, default 0
        Power iterations (0, 1 or 2 in the paper): they sharpen the decay of
        the singular values of F that the sketch sees.
    kernel : {"gaussian", "laplacian"}
    sigma : float or {"median", "mean"}
    variant : {"cossin", "cos"}, default "cossin"
        Form of the inner RKS features (Algorithm 1, step 1 allows either):
        ``"cossin"`` is Eq. (2), [cos(z'x), sin(z'x)], the form of the paper's
        analysis; ``"cos"`` is Eq. (3), cos(z'x + b). d = 4 l features either
        way (2 l frequencies for ``"cossin"``, 4 l for ``"cos"``).
    random_state : int, RandomState or None

    Attributes
    ----------
    rff_ : RandomFourierFeatures
        The RKS draw, reused for out-of-sample rows.
    components_ : ndarray of shape (d, n_components), float64
        Q, with orthonormal columns. With at least as many outputs as
        training rows (l >= n) the sketch spans the row space of F: its
        first ``rank_`` columns are a basis of that space and the rest are
        zero (``_row_space_basis``).
    rank_ : int
        The number of non-zero columns of Q: l, or the rank of F when l >= n.
    sigma_ : float
    n_features_out_ : int

    Notes
    -----
    Fitting holds the whole training feature matrix F (n x d values in the
    input dtype, e.g. 8000 x 2000 float64 = 128 MB) and Y (d x l). F^T Theta
    is accumulated over row blocks of F with Theta drawn block by block, so
    Theta is never whole. The q products with F^T F are done as F^T (F Y),
    never forming F^T F or F F^T, and Y is re-orthonormalised before each
    (Halko et al. 2011, Algorithm 4.4): the same subspace in exact arithmetic,
    but directions of small singular values are not lost to round-off.
    ``fit_transform`` returns F Q from the F it fitted on (at l >= n, U S
    from the fit's eigendecomposition, the same up to round-off); ``transform``
    recomputes f(x) in row blocks.

    References
    ----------
    X. Chen, H. Yang, I. King and M. R. Lyu. Training-efficient feature map for
    shift-invariant kernels. IJCAI 2015.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(20, 3)
    >>> TEFMG(n_components=4, q=1, random_state=0).fit_transform(X).shape
    (20, 4)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "n_up_components": [None, *POSITIVE_INT], "q": NONNEGATIVE_INT,
        "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA, "variant": options(VARIANTS),
        "random_state": RANDOM_STATE}

    def __init__(
        self,
        n_components: int = 100,
        *,
        n_up_components: int | None = None,
        q: int = 0,
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        variant: str = "cossin",
        random_state=None,
    ):
        self.n_components = n_components
        self.n_up_components = n_up_components
        self.q = q
        self.kernel = kernel
        self.sigma = sigma
        self.variant = variant
        self.random_state = random_state

    def _sketch(self, F, n_out, rng):
        Y = np.zeros((F.shape[1], n_out), dtype=F.dtype)
        for rows in row_chunks(F.shape[0], n_out):
            theta = rng.standard_normal((rows.stop - rows.start, n_out)).astype(F.dtype)
            Y += F[rows].T @ theta
        for _ in range(self.q):
            Y = _gram_times(F, _orthonormal_basis(Y).astype(F.dtype))
        return Y


class TEFMS(_TEFM):
    """TEFM-S (Algorithm 2): RKS features compressed with an SRHT range finder.

    Y = F^T Theta with Theta a subsampled randomized Hadamard transform over
    the n training rows (Tropp 2011; n zero-padded to a power of two) and
    q = 0; Q from the thin QR of Y; z(x) = Q^T f(x). Theta^T F is computed
    with the fast Walsh-Hadamard transform along the columns of F.

    Parameters
    ----------
    n_components : int
        l, the number of output columns (``n_components_counts = "columns"``).
    n_up_components : int or None, default None
        Frequencies of the inner RKS map (its d features must be ``>= l``);
        None: d = 4 l, as in the paper's experiments.
    kernel : {"gaussian", "laplacian"}
    sigma : float or {"median", "mean"}
    variant : {"cossin", "cos"}, default "cossin"
        Form of the inner RKS features (Algorithm 1, step 1 allows either):
        ``"cossin"`` is Eq. (2), [cos(z'x), sin(z'x)], the form of the paper's
        analysis; ``"cos"`` is Eq. (3), cos(z'x + b). d = 4 l features either
        way (2 l frequencies for ``"cossin"``, 4 l for ``"cos"``).
    random_state : int, RandomState or None

    Attributes
    ----------
    rff_ : RandomFourierFeatures
        The RKS draw, reused for out-of-sample rows.
    components_ : ndarray of shape (d, n_components), float64
        Q, with orthonormal columns. With at least as many outputs as
        training rows (l >= n) the sketch spans the row space of F: its
        first ``rank_`` columns are a basis of that space and the rest are
        zero (``_row_space_basis``).
    rank_ : int
        The number of non-zero columns of Q: l, or the rank of F when l >= n.
    sigma_ : float
    n_features_out_ : int

    Notes
    -----
    Fitting holds the whole training feature matrix F (n x d values in the
    input dtype) and Y (d x l). Theta^T F transforms blocks of columns of F,
    copied transposed so each transform runs on contiguous memory: one block
    (about 32 MB) is held beside F. ``fit_transform`` returns F Q from the F
    it fitted on (at l >= n, U S from the fit's eigendecomposition, the same
    up to round-off); ``transform`` recomputes f(x) in row blocks.

    References
    ----------
    X. Chen, H. Yang, I. King and M. R. Lyu. Training-efficient feature map for
    shift-invariant kernels. IJCAI 2015.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(20, 3)
    >>> TEFMS(n_components=4, random_state=0).fit_transform(X).shape
    (20, 4)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "n_up_components": [None, *POSITIVE_INT],
        "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA, "variant": options(VARIANTS),
        "random_state": RANDOM_STATE}

    def __init__(
        self,
        n_components: int = 100,
        *,
        n_up_components: int | None = None,
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        variant: str = "cossin",
        random_state=None,
    ):
        self.n_components = n_components
        self.n_up_components = n_up_components
        self.kernel = kernel
        self.sigma = sigma
        self.variant = variant
        self.random_state = random_state

    def _sketch(self, F, n_out, rng):
        theta = SRHT(F.shape[0], n_out, random_state=_draw_seed(rng))
        return theta.apply_columns(F).T
