"""Small sets of random Fourier features chosen by a Nystrom-approximated Frobenius test."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from rfrepro.features import _cost
from rfrepro.features._base import (
    POSITIVE_INT,
    RANDOM_STATE,
    SIGMA,
    FeatureMap,
    options,
)
from rfrepro.features._trig import cos_bias_inplace, cos_sin_into
from rfrepro.features.rff import VARIANTS, DenseFourierTransform
from rfrepro.features.sampling import SPECTRAL_KERNELS, sample_frequencies, sample_offsets
from rfrepro.kernels import kernel_matrix
from rfrepro.metrics.nystrom import nystrom_distance_from_grams, pinv_sqrt_factor

#: dtype of the selection trace: candidate size, its error, whether it was kept
TRACE_DTYPE = np.dtype([("n_components", np.int64), ("error", np.float64), ("accepted", bool)])

ERROR_SCALES = ("raw", "relative")

#: columns of X W computed in one product: that many frequencies' worth of chunks (``_draw_batch``)
LOOKAHEAD_COLUMNS = 64


class RFFSelection(DenseFourierTransform, FeatureMap):
    """Random Fourier features grown chunk by chunk while they improve the kernel (Algorithm 1).

    The exact kernel K is replaced by its Nystrom approximation on
    ``n_landmarks`` rows drawn uniformly, NyK = C W^+ C^T with C = K[:, L],
    W = K[L, L]. Features are then grown in chunks of ``chunk_size`` random
    frequencies: each chunk H is tried by forming the Nystrom approximation,
    on the same landmarks, of the linear kernel Z Z^T of (selected frequencies
    + H), k frequencies in all, and its Frobenius distance E_new to NyK
    (computed in O(n m^2), see
    :func:`rfrepro.metrics.nystrom.nystrom_frobenius_distance`). The chunk is
    kept when E_old - E_new >= eps, otherwise it is discarded and counts as a
    failed try; the search stops after ``iter_max`` failed tries in a row, or
    when no further chunk fits under ``max_components``. Z is the paper's map
    sqrt(1 / k) [cos(W^T x), sin(W^T x)] (``variant="cossin"``, 2 k columns)
    or sqrt(2 / k) cos(W^T x + b) (``variant="cos"``, k columns); ``transform``
    applies it to the D* selected frequencies.

    Parameters
    ----------
    max_components : int
        D_max, the largest number of random frequencies (an upper bound on
        D*; the paper's D counts frequencies, its map has 2 D outputs). The map
        has no ``n_components``: ``max_components`` and ``n_selected_`` count
        frequencies (``n_components_counts = "frequencies"``).
    chunk_size : int
        Frequencies drawn and tested together (the paper's n); at most
        ``max_components``. D* is a multiple of it.
    n_landmarks : int
        Nystrom landmarks m (50 in the paper); at most the number of rows.
    eps : float
        Least decrease of the error for a chunk to be kept (1e-3 in the paper).
        ``-inf`` keeps every chunk (grows to ``max_components``; used to time
        the worst case).
    iter_max : int
        Failed tries in a row after which the search stops (5 in the paper).
    error_scale : {"raw", "relative"}
        ``"raw"`` (the paper's rule) compares the Frobenius distance itself
        with ``eps``; ``"relative"`` divides it by ||NyK||_F, so ``eps`` is a
        relative improvement whatever n (see Notes).
    variant : {"cossin", "cos"}
        The feature map: ``"cossin"`` is the paper's sqrt(1 / D) [cos, sin]
        (Section 2), ``"cos"`` the one-column-per-frequency sqrt(2 / D) cos(W^T x + b).
    kernel : {"gaussian", "laplacian"}
        Shift-invariant kernel approximated (the paper uses the Gaussian).
    sigma : float or {"median", "mean"}
        Bandwidth, or a rule to compute it from the training rows.
    random_state : int, RandomState or None
        Draws the landmarks, then the chunks in order (discarded chunks too).

    Attributes
    ----------
    n_selected_ : int
        D*, the number of selected frequencies (``n_features_out_`` is
        2 D* for ``"cossin"``, D* for ``"cos"``).
    random_weights_ : ndarray of shape (n_features_in_, n_selected_)
    random_offset_ : ndarray of shape (n_selected_,) (``"cos"`` only)
    landmarks_ : ndarray of int of shape (n_landmarks,)
        Indices of the landmark rows of the training data.
    sigma_ : float
    error_ : float
        Error of the selected set (the last accepted E_new).
    error_trace_ : structured ndarray of shape (n_tries,)
        One entry per tried chunk: ``n_components`` (size of the candidate
        set), ``error`` (its E_new, scaled as ``error_scale`` says) and
        ``accepted``.
    n_features_out_ : int

    Notes
    -----
    Interpretations of Algorithm 1 of the paper:

    - The candidate kernel is that of the selected features plus the new chunk
      (the pseudo-code's "construct NyK^ based on H"), rescaled to the
      candidate frequency count k, so that Z Z^T estimates K at every size.
    - E_old starts at +inf, so the first chunk is always kept and E_old becomes
      its error; afterwards E_old is the error of the current selected set.
    - The pseudo-code breaks on a failure once ``try > iterMax``, i.e. at the
      7th failure in a row for iterMax = 5; the text says the search stops
      when iterMax = 5 random selections bring no improvement. We follow the
      text: ``iter_max`` failures in a row stop it.
    - The pseudo-code loops while #F < D_max and may end above D_max when
      D_max is not a multiple of the chunk size; here a chunk is only tried
      when it fits, so D* <= D_max always.
    - The paper's error is the raw ||NyK^ - NyK||_F (Eq. 7) with an absolute
      eps = 1e-3 (the default ``error_scale="raw"``). That norm grows like n,
      so the same eps is a relative improvement n times smaller on n times
      more data, and at the paper's data sizes the test is nearly
      E_new < E_old. ``"relative"`` (distance / ||NyK||_F) makes eps an
      n-free threshold. With either, the search mostly ends by chance: once
      the expected gain of a chunk is small, a random chunk worsens the error
      about as often as not, and ``iter_max`` such chunks in a row stop it.

    Nothing of size n x n is formed, and the n x D features of the selected
    set are not kept either: the unscaled features R enter only through
    G = R R_L^T (n x m) and the m x m products C^T G and G^T G, which a chunk
    updates in O(n m chunk_size) and which the c / k rescaling of all features
    multiplies by a scalar. Memory O(n (m + chunk_size + 64)), time
    O(n (d + m) chunk_size) per tried chunk.

    References
    ----------
    F.-M. Schleif, A. Kaban and P. Tino. Finding small sets of random Fourier
    features for shift-invariant kernel approximation, 2016 (Algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(300, 2)
    >>> sel = RFFSelection(max_components=200, chunk_size=10, sigma=1.0, random_state=0).fit(X)
    >>> sel.transform(X).shape == (300, 2 * sel.n_selected_)
    True
    """

    #: recorded with each run: D* (frequencies), its column count and its error
    recorded_attributes = ("n_selected_", "n_features_out_", "error_")
    #: max_components and n_selected_ count frequencies (``cossin``: two columns each)
    n_components_counts = "frequencies"

    _parameter_constraints: dict = {"max_components": POSITIVE_INT, "chunk_size": POSITIVE_INT, "n_landmarks": POSITIVE_INT,
        "eps": [Interval(Real, None, None, closed="both")],  # -inf: never stop early
        "iter_max": POSITIVE_INT, "error_scale": options(ERROR_SCALES),
        "variant": options(VARIANTS), "kernel": options(SPECTRAL_KERNELS), "sigma": SIGMA,
        "random_state": RANDOM_STATE}

    def __init__(
        self,
        max_components: int = 1000,
        *,
        chunk_size: int = 10,
        n_landmarks: int = 50,
        eps: float = 1e-3,
        iter_max: int = 5,
        error_scale: str = "raw",
        variant: str = "cossin",
        kernel: str = "gaussian",
        sigma: float | str = 1.0,
        random_state=None,
    ):
        self.max_components = max_components
        self.chunk_size = chunk_size
        self.n_landmarks = n_landmarks
        self.eps = eps
        self.iter_max = iter_max
        self.error_scale = error_scale
        self.variant = variant
        self.kernel = kernel
        self.sigma = sigma
        self.random_state = random_state

    def _check_params(self, n_rows: int) -> tuple[int, int, int, float, int]:
        """What the declared constraints cannot say: chunk_size against max_components, landmarks against rows."""
        d_max, chunk, m = int(self.max_components), int(self.chunk_size), int(self.n_landmarks)
        if chunk > d_max:
            raise ValueError(f"chunk_size={chunk} exceeds max_components={d_max}")
        if m > n_rows:  # as scikit-learn's Nystroem: every row becomes a landmark, with a warning
            warnings.warn(f"n_landmarks={m} exceeds the number of rows, n_samples = {n_rows}: "
                          f"using all {n_rows} rows as landmarks", stacklevel=4)
            m = n_rows
        return d_max, chunk, m, float(self.eps), int(self.iter_max)

    def _fit(self, X):
        d_max, chunk, m, eps, iter_max = self._check_params(X.shape[0])
        rng = self._rng_and_sigma(X, self.kernel)
        # float64 throughout the fit: the error is a difference of nearly equal terms
        X64 = X.astype(np.float64, copy=False)
        L = np.sort(rng.choice(X.shape[0], m, replace=False))

        # G = R R_L^T of the unscaled features R of the selected set (n x m) sits beside
        # C = K[:, L] in one array, so a chunk meets both in a single GEMM pass
        GC = np.zeros((X.shape[0], 2 * m))
        G, C = GC[:, :m], GC[:, m:]
        # Nystrom form of the exact kernel, computed once: C (n x m), W = C[L]
        C[...] = kernel_matrix(self.kernel, X64, X64[L], sigma=self.sigma_)
        T_ref = pinv_sqrt_factor(C[L])
        CtC = C.T @ C
        scale = 1.0
        if self.error_scale == "relative":
            scale = 1.0 / np.linalg.norm(T_ref.T @ CtC @ T_ref)  # = 1 / ||NyK||_F

        GtG = np.zeros((m, m))
        CtG = np.zeros((m, m))
        cossin = self.variant == "cossin"
        # Z Z^T = (c / k) R R^T for k frequencies: c = 1 for [cos, sin], 2 for cos(. + b)
        c = 1.0 if cossin else 2.0
        weights, offsets, trace = [], [], []
        k, e_old, failures = 0, np.inf, 0
        batch: list = []  # chunks drawn ahead, with their projections X W_h
        while k + chunk <= d_max and failures < iter_max:
            if not batch:
                ahead = min(max(1, LOOKAHEAD_COLUMNS // chunk), (d_max - k) // chunk)
                batch = self._draw_batch(X64, chunk, ahead, rng)
            W_h, b_h, P = batch.pop(0)
            if cossin:
                H = np.empty((X.shape[0], 2 * chunk))
                cos_sin_into(P, H, 1.0)
            else:
                H = P
                cos_bias_inplace(H, b_h, 1.0)
            H_L = H[L]
            HtGC = H.T @ GC
            # candidate G' = G + H H_L^T, through its m x m products only
            HtG_HL = H_L @ HtGC[:, :m]
            GtG_new = GtG + HtG_HL + HtG_HL.T + H_L @ (H.T @ H) @ H_L.T
            CtG_new = CtG + HtGC[:, m:].T @ H_L.T
            GL_new = G[L] + H_L @ H_L.T
            # Z Z^T = (c / k') R R^T: C2 = s G', W2 = s G'_L
            s = c / (k + chunk)
            e_new = scale * nystrom_distance_from_grams(
                T_ref, pinv_sqrt_factor(s * GL_new), CtC, s * s * GtG_new, s * CtG_new
            )
            accepted = e_old - e_new >= eps
            trace.append((k + chunk, e_new, accepted))
            if accepted:
                G += H @ H_L.T
                GtG, CtG = GtG_new, CtG_new
                weights.append(W_h)
                if not cossin:
                    offsets.append(b_h)
                k += chunk
                e_old, failures = e_new, 0
            else:
                failures += 1

        self.landmarks_ = L
        self.n_selected_ = k
        self.n_features_out_ = 2 * k if cossin else k
        self.error_ = float(e_old)
        self.error_trace_ = np.array(trace, dtype=TRACE_DTYPE)
        self.random_weights_ = np.ascontiguousarray(np.hstack(weights), dtype=X.dtype)
        if not cossin:
            self.random_offset_ = np.concatenate(offsets).astype(X.dtype)
        return self

    def _draw_batch(self, X64, chunk: int, count: int, rng) -> list:
        """``count`` chunks drawn in order (frequencies, then offsets for ``"cos"``), projected together.

        The draws are the ones chunk-by-chunk sampling makes, in the same
        order; only X W is computed for ``count`` chunks in one product, so
        the n x d data is read once per batch rather than once per chunk
        (on MNIST-sized data that product was 90% of a try). Chunks drawn
        after the search stops are never used.
        """
        draws = []
        for _ in range(count):
            W_h = sample_frequencies(self.kernel, X64.shape[1], chunk, self.sigma_, rng)
            draws.append((W_h, None if self.variant == "cossin" else sample_offsets(chunk, rng)))
        P = X64 @ np.hstack([w for w, _ in draws])
        return [(w, b, np.ascontiguousarray(P[:, i * chunk:(i + 1) * chunk])) for i, (w, b) in enumerate(draws)]

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: RKS with the ``n_selected_`` kept frequencies."""
        return _cost.dense_fourier(n, self.n_features_in_, self.n_selected_, self.variant, dtype)
