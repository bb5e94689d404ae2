"""Tensor Sketch of the polynomial kernel (Pham and Pagh, 2013).

TS(x) = IFFT( prod_i FFT(C_i x') ), x' = [x, sqrt(q)], C_i independent count
sketches (hash h_i: [d + 1] -> [D], sign s_i), is the count sketch of the
tensor power x'^(r) with the hash sum_i h_i mod D and the sign prod_i s_i, so
E[<TS(x), TS(y)>] = (<x, y> + q)^r.

scikit-learn's PolynomialCountSketch computes the same map, but it builds the
count sketches with a Python loop over the input features and takes full
complex FFTs of an (n, r, D) array at once. Here the r count sketches of a
block of rows are one sparse product (each input coordinate has one bucket per
sketch), the FFTs are real (rfft / irfft, half the spectrum), and rows go in
blocks so the memory beyond the output stays bounded.
"""

from __future__ import annotations

import numpy as np
import scipy.fft
import scipy.sparse as sp
from sklearn.utils import check_random_state

from rfrepro.features import _cost
from rfrepro.features._base import (
    FINITE_NONNEGATIVE_REAL,
    POSITIVE_INT,
    RANDOM_STATE,
    FeatureMap,
    row_chunks,
)


class TensorSketch(FeatureMap):
    """Tensor Sketch features of the polynomial kernel (<x, y> + offset)^degree.

    Parameters
    ----------
    n_components : int
        Output dimension D = output columns (``n_components_counts = "columns"``;
        any positive integer; the FFT length).
    degree : int
        r, the polynomial degree (the number of count sketches).
    offset : float
        q >= 0; ``sqrt(q)`` is appended to every input row when q > 0.
    random_state : int, RandomState or None

    Attributes
    ----------
    index_hash_ : ndarray of shape (degree, d') of int
        h_i, the bucket of each (augmented) input coordinate in sketch i.
    bit_hash_ : ndarray of shape (degree, d') of +-1.0
        s_i, its sign.
    sketch_ : scipy.sparse.csr_matrix of shape (d', degree * D)
        The r count sketches side by side: ``x' @ sketch_`` gives [C_1 x', ..., C_r x'].
    n_features_out_ : int

    References
    ----------
    N. Pham and R. Pagh. Fast and scalable polynomial kernels via explicit
    feature maps. KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(4, 3)
    >>> TensorSketch(n_components=16, degree=3, random_state=0).fit_transform(X).shape
    (4, 16)
    """

    _parameter_constraints: dict = {"n_components": POSITIVE_INT, "degree": POSITIVE_INT, "offset": FINITE_NONNEGATIVE_REAL,
        "random_state": RANDOM_STATE}
    n_components_counts = "columns"

    def __init__(self, n_components: int = 100, *, degree: int = 2, offset: float = 1.0, random_state=None):
        self.n_components = n_components
        self.degree = degree
        self.offset = offset
        self.random_state = random_state

    def _fit(self, X):
        D, r, q = int(self.n_components), int(self.degree), float(self.offset)
        rng = check_random_state(self.random_state)
        d = X.shape[1] + (q > 0)
        self.index_hash_ = rng.randint(D, size=(r, d))
        self.bit_hash_ = rng.choice(np.array([-1.0, 1.0]), size=(r, d))
        self.n_features_out_ = D
        return self._fit_sketch()

    def _fit_sketch(self):
        """Build ``sketch_`` from the hashes (also after they are set by hand)."""
        (r, d), D = self.index_hash_.shape, self.n_features_out_
        cols = (self.index_hash_ + D * np.arange(r)[:, None]).T.ravel()
        rows = np.repeat(np.arange(d), r)
        self.sketch_ = sp.csr_matrix((self.bit_hash_.T.ravel(), (rows, cols)), shape=(d, r * D))
        self._cast = {}
        return self

    def _augment(self, X):
        if self.offset > 0:
            return np.hstack([X, np.full((X.shape[0], 1), np.sqrt(self.offset), dtype=X.dtype)])
        return X

    def cost(self, n: int, dtype=np.float64) -> dict:
        """Flops and bytes of transforming ``n`` rows: r count sketches, r real FFTs, r - 1 products, one inverse."""
        (r, d_aug), D = self.index_hash_.shape, self.n_features_out_
        size = _cost.itemsize(dtype)
        flops = (2 * n * r * d_aug + _cost.rfft(n * r, D) + 6 * n * (r - 1) * (D // 2 + 1)
                 + _cost.rfft(n, D))
        return _cost.cost(flops, size * (n * self.n_features_in_ + n * D) + r * d_aug * (size + 4))

    def _transform_chunk(self, X, out):
        D, r = self.n_features_out_, self.index_hash_.shape[0]
        if X.dtype not in self._cast:  # the sketch in the input's dtype, so float32 stays float32
            self._cast[X.dtype] = self.sketch_.astype(X.dtype).T.tocsr()
        sketch_t = self._cast[X.dtype]
        # the r sketches of a block are r times wider than the output: sub-chunk
        for rows in row_chunks(X.shape[0], r * D):
            block = self._augment(X[rows])
            C = np.asarray(sketch_t @ block.T).T.reshape(block.shape[0], r, D)
            spectrum = scipy.fft.rfft(C, axis=2)
            prod = spectrum[:, 0]
            for i in range(1, r):  # r is the degree (<= ~10), not a number of features
                prod *= spectrum[:, i]
            out[rows] = scipy.fft.irfft(prod, n=D, axis=1)
