"""Random Fourier features reweighted by ridge leverage scores (Bach 2017)."""

from __future__ import annotations

import math
import numbers
from numbers import Real

import numpy as np
from scipy.linalg import eigh
from sklearn.utils._param_validation import Interval

from rfrepro.features import _cost
from rfrepro.features._base import (
    CHUNK_VALUES,
    POSITIVE_INT,
    POSITIVE_REAL,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)
from rfrepro.features._trig import project_cos_sin_into
from rfrepro.features.sampling import SPECTRAL_KERNELS, sample_frequencies

SAMPLERS = ("opt", "unif")
_OPT_ATTRIBUTES = (
    "candidate_weights_",
    "leverage_scores_",
    "candidate_indices_",
    "subsample_indices_",
)


def _check_positive_real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def ridge_leverage_scores(Phi: np.ndarray, mu: float) -> np.ndarray:
    """Ridge leverage scores of the rows of ``Phi``: diag(Phi Phi^T (Phi Phi^T + mu I)^-1).

    With the thin SVD Phi = U S V^T the scores are sum_k U_ik^2 s_k^2 / (s_k^2 + mu),
    so they lie in [0, 1) and sum to the effective dimension tr(G (G + mu I)^-1),
    G = Phi^T Phi. U and s^2 come from ``eigh`` of the smaller of the two Gram
    matrices (n_rows x n_rows or n_cols x n_cols); no inverse is formed.

    Parameters
    ----------
    Phi : ndarray of shape (n_rows, n_cols)
    mu : float
        Ridge parameter, > 0.

    Returns
    -------
    scores : ndarray of shape (n_rows,), float64
    """
    mu = _check_positive_real(mu, "mu")
    Phi = np.asarray(Phi, dtype=np.float64)
    if Phi.ndim != 2:
        raise ValueError(f"Phi must be a 2-D array, got shape {Phi.shape}")
    n_rows, n_cols = Phi.shape
    # rounding can make eigenvalues of a PSD Gram matrix slightly negative: clip them
    if n_rows <= n_cols:
        evals, U = eigh(Phi @ Phi.T)
        evals = np.maximum(evals, 0.0)
        return (U * U) @ (evals / (evals + mu))
    # Phi V = U S, so (Phi V)_ik^2 = U_ik^2 s_k^2: working with Phi V avoids dividing by
    # s_k on the null space of Phi
    B = Phi @ _ridge_whitener(Phi.T @ Phi, mu)
    return np.einsum("ij,ij->i", B, B)


def _ridge_whitener(G: np.ndarray, mu: float) -> np.ndarray:
    """W = V diag(lambda + mu)^-1/2 of the Gram G = V diag(lambda) V^T, lambda clipped at 0.

    A row phi of the matrix whose Gram is G has the ridge leverage score
    ||W^T phi||^2 = sum_k (v_k^T phi)^2 / (lambda_k + mu). Rounding can make
    eigenvalues of a PSD Gram matrix slightly negative: they count as 0.
    """
    evals, V = eigh(G)
    return V * (1.0 / np.sqrt(np.maximum(evals, 0.0) + mu))


def candidate_leverage_scores(X_sub: np.ndarray, candidates: np.ndarray, mu: float) -> np.ndarray:
    """r_i of every candidate frequency w_i: the ridge leverage scores of its cos and sin rows of Phi, summed.

    Phi (2M x L) has the rows (LM)^-1/2 cos(w_i^T x_j) and (LM)^-1/2 sin(w_i^T x_j)
    over the L rows x_j of ``X_sub`` (:class:`LeverageRFF`, step 3). The scores
    are those of :func:`ridge_leverage_scores` (Phi), computed in blocks of
    candidates so that Phi is never held whole (at the leaderboard's 204800
    candidates on 500 rows it is 1.6 GB, and the products of the one-shot form
    held three such arrays): a first pass adds up G = Phi^T Phi (L x L) block by
    block; with G = V diag(lambda) V^T and W = V diag(lambda + mu)^-1/2 (lambda
    clipped at 0, as there), a row phi of Phi scores ||W^T phi||^2, the same sum
    sum_k (v_k^T phi)^2 / (lambda_k + mu), computed in a second pass that draws
    the block's features again (their cost is d / (2 L) of that pass's product).
    Where the candidates' side is the smaller one (2M <= L), Phi is built whole
    and scored by :func:`ridge_leverage_scores` itself.

    Parameters
    ----------
    X_sub : ndarray of shape (L, d), float64
    candidates : ndarray of shape (d, M)
        The candidate frequencies (columns).
    mu : float
        Ridge parameter, > 0.

    Returns
    -------
    scores : ndarray of shape (M,), float64

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> X, W = rng.randn(40, 3), rng.randn(3, 500)
    >>> Phi_t = np.hstack([np.cos(X @ W), np.sin(X @ W)]) / np.sqrt(40 * 500)
    >>> r = ridge_leverage_scores(Phi_t.T, 1e-3)
    >>> bool(np.allclose(candidate_leverage_scores(X, W, 1e-3), r[:500] + r[500:], rtol=1e-10))
    True
    """
    mu = _check_positive_real(mu, "mu")
    n_sub, n_cand = X_sub.shape[0], candidates.shape[1]
    scale = 1.0 / math.sqrt(n_sub * n_cand)
    if 2 * n_cand <= n_sub:
        Phi_t = np.empty((n_sub, 2 * n_cand))
        project_cos_sin_into(X_sub, candidates, Phi_t, scale)
        row_scores = ridge_leverage_scores(Phi_t.T, mu)
        return row_scores[:n_cand] + row_scores[n_cand:]
    step = max(1, CHUNK_VALUES // (2 * n_sub))
    starts = range(0, n_cand, step)
    buffer = np.empty((n_sub, 2 * min(step, n_cand)))

    def block(start: int) -> np.ndarray:  # Phi^T's columns of candidates start .. start + step
        width = min(step, n_cand - start)
        out = buffer[:, : 2 * width]
        project_cos_sin_into(X_sub, candidates[:, start : start + width], out, scale)
        return out

    G = np.zeros((n_sub, n_sub))
    for start in starts:
        F = block(start)
        G += F @ F.T
    W = _ridge_whitener(G, mu)
    scores = np.empty(n_cand)
    for start in starts:
        F = buffer if len(starts) == 1 else block(start)  # one block: its features are still there
        B = W.T @ F
        sq = np.einsum("ij,ij->j", B, B)
        width = F.shape[1] // 2
        scores[start : start + width] = sq[:width] + sq[width:]
    return scores


class LeverageRFF(FeatureMap):
    """Random Fourier features drawn by the reweighted feature selection.

    Output, 2 N features (N = ``n_components``):
    z(x) = N^-1/2 [ q_i cos(w_i^T x), q_i sin(w_i^T x) ]_{i=1..N}, with
    importance weights q_i = (M p_i)^-1/2, so E[z(x)^T z(y)] = k(x, y).

    ``sampler="opt"`` (Sun et al.'s "opt", after Bach):

    1. draw M = ``oversampling`` * N candidate frequencies from the kernel's
       spectral density;
    2. take L = ceil(``subsample_fraction`` * m) training rows at random
       (without replacement; at most ``max_subsample``);
    3. Phi (2M x L) has the entries M^-1/2 [cos(w_i^T x_j), sin(w_i^T x_j)] / sqrt(L),
       i.e. its columns are phi_M(x_j) / sqrt(L) as in the paper, so that
       Phi^T Phi is the candidates' kernel matrix divided by L;
    4. the leverage score r_i of candidate i is the sum of the ridge leverage
       scores (:func:`ridge_leverage_scores`) of its cos and sin rows; the r_i
       sum to the effective dimension tr(G (G + mu I)^-1), G = Phi^T Phi
       (:func:`candidate_leverage_scores`: in blocks of candidates, Phi never whole);
    5. draw N candidates with replacement with p_i = r_i / sum_j r_j.

    ``sampler="unif"`` draws N frequencies directly (all q_i = 1): the plain
    map N^-1/2 [cos(W^T x), sin(W^T x)], drawn exactly as
    ``RandomFourierFeatures(variant="cossin")`` with the same ``random_state``.

    Parameters
    ----------
    n_components : int
        Number of frequencies N (``n_components_counts = "frequencies"``); the
        output has 2 N columns.
    kernel : {"gaussian", "laplacian"}
        Shift-invariant kernel whose spectral density the frequencies follow.
    sigma : float or {"median", "mean"}
        Bandwidth, or a rule computed on the training rows ("mean": the average
        pairwise distance, Sun et al.'s choice).
    mu : float
        Ridge parameter of the leverage scores. The paper does not give it;
        the authors' code and our method configs use the model's lambda
        (``mu: ${model.lam}``). On the scale of lambda in
        lambda / 2 ||w||^2 + (1 / m) sum hinge, because Phi^T Phi is a kernel
        matrix divided by the number of its points.
    oversampling : int
        M / N, the number of candidates per output frequency (paper: 100).
    subsample_fraction : float in (0, 1]
        L / m (paper: 0.3).
    max_subsample : int or None
        Upper bound on L (None: no bound). The authors' code caps L at 500;
        the cost of the scores grows as min(L, 2M)^2 max(L, 2M).
    sampler : {"opt", "unif"}
    random_state : int, RandomState or None

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features_in_, n_components)
        The drawn frequencies (columns).
    importance_weights_ : ndarray of shape (n_components,)
        q_i = (M p_i)^-1/2 (all ones for ``"unif"``).
    candidate_weights_ : ndarray of shape (n_features_in_, M)
        The candidate frequencies (``"opt"`` only).
    leverage_scores_ : ndarray of shape (M,)
        r_i of every candidate (``"opt"`` only).
    candidate_indices_ : ndarray of shape (n_components,)
        Which candidates were drawn (``"opt"`` only).
    subsample_indices_ : ndarray of shape (L,)
        The training rows used for the scores (``"opt"`` only).
    sigma_ : float
    n_features_out_ : int
        2 * n_components.

    References
    ----------
    Y. Sun, A. Gilbert and A. Tewari. But how does it work in theory? Linear SVM
    with random features. NeurIPS 2018 (Section 3, reweighted feature selection).

    F. Bach. On the equivalence between kernel quadrature rules and random
    feature expansions. JMLR 18(21), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(50, 2)
    >>> rf = LeverageRFF(n_components=3, sigma=1.0, mu=1e-3, random_state=0).fit(X)
    >>> rf.transform(X).shape, rf.leverage_scores_.shape
    ((50, 6), (300,))
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA,
        "mu": POSITIVE_REAL, "oversampling": POSITIVE_INT,
        "subsample_fraction": [Interval(Real, 0, 1, closed="right")], "max_subsample": [None, *POSITIVE_INT],
        "sampler": options(SAMPLERS), "random_state": RANDOM_STATE}
    n_components_counts = "frequencies"

    def __init__(
        self,
        n_components: int = 10,
        *,
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        mu: float = 1e-3,
        oversampling: int = 100,
        subsample_fraction: float = 0.3,
        max_subsample: int | None = None,
        sampler: str = "opt",
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.mu = mu
        self.oversampling = oversampling
        self.subsample_fraction = subsample_fraction
        self.max_subsample = max_subsample
        self.sampler = sampler
        self.random_state = random_state

    def _fit(self, X):
        n_freq = int(self.n_components)
        # mu's finiteness is checked where the scores use it (candidate_leverage_scores)
        n_cand, mu = int(self.oversampling) * n_freq, float(self.mu)
        rng = self._rng_and_sigma(X, self.kernel)
        if self.sampler == "unif":
            # a refit after set_params(sampler="unif") must not keep the old "opt" state
            for name in _OPT_ATTRIBUTES:
                self.__dict__.pop(name, None)
            W = sample_frequencies(self.kernel, X.shape[1], n_freq, self.sigma_, rng)
            weights = np.ones(n_freq)
        else:
            W, weights = self._reweighted_selection(X, n_freq, n_cand, mu, rng)
        self.random_weights_ = np.ascontiguousarray(W, dtype=X.dtype)
        self.importance_weights_ = weights
        self.n_features_out_ = 2 * n_freq
        return self

    def _reweighted_selection(self, X, n_freq, n_cand, mu, rng):
        candidates = sample_frequencies(self.kernel, X.shape[1], n_cand, self.sigma_, rng)
        m = X.shape[0]
        n_sub = math.ceil(float(self.subsample_fraction) * m)
        if self.max_subsample is not None:
            n_sub = min(n_sub, int(self.max_subsample))
        rows = np.sort(rng.choice(m, n_sub, replace=False))
        # always in float64: the scores feed a probability vector
        scores = candidate_leverage_scores(np.asarray(X[rows], dtype=np.float64), candidates, mu)
        prob = scores / scores.sum()
        chosen = rng.choice(n_cand, size=n_freq, replace=True, p=prob)

        self.candidate_weights_ = candidates
        self.leverage_scores_ = scores
        self.candidate_indices_ = chosen
        self.subsample_indices_ = rows
        return candidates[:, chosen], 1.0 / np.sqrt(n_cand * prob[chosen])

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: the [cos, sin] map, then its weights q."""
        c = _cost.dense_fourier(n, self.n_features_in_, self.n_components, "cossin", dtype)
        if self.sampler == "unif":
            return c
        return _cost.cost(c["flops"] + 2 * n * self.n_components,
                          c["bytes"] + self.n_components * _cost.itemsize(dtype))

    def _transform_chunk(self, X, out):
        W = self.random_weights_.astype(X.dtype, copy=False)
        project_cos_sin_into(X, W, out, math.sqrt(1.0 / self.n_components))
        if self.sampler != "unif":
            q = self.importance_weights_.astype(X.dtype, copy=False)
            n_freq = q.shape[0]
            out[:, :n_freq] *= q
            out[:, n_freq:] *= q
