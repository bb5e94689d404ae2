"""Relative kernel-approximation errors ||K - Z Z^T|| / ||K|| without forming Z Z^T."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg.blas
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh


def _spectral_norm_sym(matvec, n: int, dtype=np.float64, seed: int = 0) -> float:
    """Largest |eigenvalue| of a symmetric operator given by its matvec (Lanczos)."""
    op = LinearOperator((n, n), matvec=matvec, dtype=dtype)
    v0 = np.random.RandomState(seed).standard_normal(n)
    if n <= 3:  # eigsh needs k < n; tiny problems go dense
        dense = np.column_stack([matvec(e) for e in np.eye(n)])
        return float(np.abs(np.linalg.eigvalsh((dense + dense.T) / 2)).max())
    val = eigsh(op, k=1, which="LM", v0=v0, tol=1e-8, return_eigenvectors=False)
    return float(abs(val[0]))


@dataclass
class KernelReference:
    """The exact kernel on a fixed sample with its norms, computed once and reused.

    ``K`` is the n x n exact kernel of the evaluation sample (or, by
    :meth:`from_block`, a rectangular block of it); ``fro`` and ``spec`` are its
    Frobenius and spectral norms.
    """

    K: np.ndarray
    fro: float
    spec: float

    @classmethod
    def from_matrix(cls, K: np.ndarray) -> KernelReference:
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be square, got shape {K.shape}")
        return cls(K, float(np.linalg.norm(K)), _spectral_norm_sym(lambda v: K @ v, K.shape[0]))

    @classmethod
    def from_block(cls, K: np.ndarray) -> KernelReference:
        """A rectangular block of the exact kernel (e.g. training rows x held-out rows), for
        :func:`cross_kernel_errors`."""
        K = np.asarray(K, dtype=np.float64)
        return cls(K, float(np.linalg.norm(K)), _spectral_norm_rect(K))


def _used_columns(Z) -> sp.csr_matrix:
    """``Z`` (sparse) without its empty columns: same Z Z^T, and no work or memory of size D.

    A random-binning Z of the evaluation rows has at most rows x R non-empty
    columns out of D, which may be millions.
    """
    Z = sp.csr_matrix(Z, dtype=np.float64)
    used, cols = np.unique(Z.indices, return_inverse=True)
    return sp.csr_matrix((Z.data, cols.ravel(), Z.indptr), shape=(Z.shape[0], used.size))


#: Largest residual K - Z Z^T (in values) that :func:`kernel_errors` holds whole: 2^24, 128 MB
#: in float64, n = 4096 rows. A dense Z's product then comes from BLAS's syrk (one triangle,
#: n^2 D flops, half a GEMM's), and the Lanczos iterations of the spectral norm read the
#: n^2 residual instead of K and Z twice (n^2 + 2 n D values each).
RESIDUAL_WHOLE_VALUES = 1 << 24

#: Rows of the residual formed at a time from a sparse Z or above the whole size (at most 2^22 values).
_RESIDUAL_BLOCK_VALUES = 1 << 22


def _dense_residual(K: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """K - Z Z^T, whole and symmetric: syrk's upper triangle, then the lower one copied from it."""
    n = K.shape[0]
    E = np.array(K, dtype=np.float64, order="F")
    if Z.shape[1]:
        scipy.linalg.blas.dsyrk(-1.0, np.ascontiguousarray(Z).T, beta=1.0, c=E, trans=1, lower=0,
                                overwrite_c=1)
    step = max(1, _RESIDUAL_BLOCK_VALUES // max(1, n))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        E[i0:i1, :i0] = E[:i0, i0:i1].T
        diagonal = E[i0:i1, i0:i1]
        E[i0:i1, i0:i1] = np.triu(diagonal) + np.triu(diagonal, 1).T
    return E


def kernel_errors(ref: KernelReference, Z) -> dict[str, float]:
    """Relative errors of the approximation Z Z^T of ``ref.K``.

    Returns ``kerr_fro`` = ||K - ZZ^T||_F / ||K||_F, ``kerr_spec`` =
    ||K - ZZ^T||_2 / ||K||_2 and ``nrms`` = RMS(K - ZZ^T) / RMS(K) (the
    normalised RMS reconstruction error of Hamid et al.; equal to kerr_fro by
    construction, kept under its paper's name). Cost O(n^2 D) time (O(n nnz)
    for a sparse ``Z``, which stays sparse). Up to
    :data:`RESIDUAL_WHOLE_VALUES` the residual is held whole (a dense Z's
    product from syrk) and the Lanczos iterations read it; above that it is
    formed in row blocks of at most 2^22 values for the Frobenius norm and the
    iterations apply K v - Z (Z^T v).
    """
    Z = _used_columns(Z) if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
    K = ref.K
    n = K.shape[0]
    if Z.shape[0] != n:
        raise ValueError(f"Z has {Z.shape[0]} rows but the reference kernel is {n} x {n}")
    # the residual itself: the expanded form ||K||^2 - 2 tr(Z^T K Z) + ||Z^T Z||^2
    # cancels catastrophically for accurate maps (errors below ~1e-8 are lost)
    whole = n * n <= RESIDUAL_WHOLE_VALUES
    if whole and not sp.issparse(Z):
        E = _dense_residual(K, Z)
        fro = np.sqrt(float(np.einsum("ij,ij->", E, E)))
    else:
        E = np.empty((n, n)) if whole else None
        ZT = Z.T.tocsr() if sp.issparse(Z) else Z.T
        sq = 0.0
        step = max(1, _RESIDUAL_BLOCK_VALUES // max(1, n))
        for start in range(0, n, step):
            block = Z[start : start + step] @ ZT
            rows = K[start : start + step] - (block.toarray() if sp.issparse(block) else block)
            sq += float(np.einsum("ij,ij->", rows, rows))
            if whole:
                E[start : start + step] = rows
        fro = np.sqrt(sq)
    if whole:
        spec = _spectral_norm_sym(lambda v: E @ v, n)
    else:
        spec = _spectral_norm_sym(lambda v: K @ v - Z @ (Z.T @ v), n)
    return {
        "kerr_fro": fro / ref.fro,
        "kerr_spec": spec / ref.spec,
        "nrms": fro / ref.fro,
    }


def kernel_spectra(ref: KernelReference, Z, k: int) -> dict[str, list[float]]:
    """The ``k`` largest eigenvalues of the exact K and of Z Z^T, in decreasing order.

    For a log-scree plot (Hamid et al. 2014, Fig. 2a). Z Z^T's nonzero
    eigenvalues are those of the D x D matrix Z^T Z, computed whichever is smaller.
    """
    import scipy.sparse as sp

    n = ref.K.shape[0]
    k = int(min(k, n))
    exact = np.linalg.eigvalsh(ref.K)[::-1][:k]
    if sp.issparse(Z):
        Z = Z.toarray() if Z.shape[1] <= n else Z
    if sp.issparse(Z):  # more columns than rows: the n x n Gram is the smaller matrix
        G = (Z @ Z.T).toarray()
    else:
        Z = np.asarray(Z, dtype=np.float64)
        G = Z.T @ Z if Z.shape[1] < n else Z @ Z.T
    approx = np.linalg.eigvalsh(G)[::-1][:k]
    approx = np.concatenate([approx, np.zeros(max(0, k - approx.size))])
    return {"spectrum_exact": exact.tolist(), "spectrum_approx": approx.tolist()}



def _spectral_norm_rect(A: np.ndarray) -> float:
    """||A||_2 of a rectangular A: the square root of the largest eigenvalue of the smaller Gram.

    The Gram is formed once (one BLAS product), so the Lanczos iterations
    multiply by a small square matrix; its largest eigenvalue is computed to
    its own relative precision, so the square root loses nothing there.
    """
    G = A.T @ A if A.shape[0] >= A.shape[1] else A @ A.T
    return float(np.sqrt(_spectral_norm_sym(lambda v: G @ v, G.shape[0])))


def cross_kernel_errors(ref: KernelReference, Z_rows, Z_cols) -> dict[str, float]:
    """Relative errors of the approximation ``Z_rows Z_cols^T`` of a rectangular block ``ref.K`` of the kernel.

    The train x test block is what a model's predictions use: for held-out
    columns its error says how well the map extends to points it was not
    fitted on. Returns ``kerr_cross_fro`` = ||K - Z_r Z_c^T||_F / ||K||_F and
    ``kerr_cross_spec`` = ||K - Z_r Z_c^T||_2 / ||K||_2. The residual is
    formed whole (rows x cols values); a sparse Z stays sparse until the product.
    """
    K = ref.K
    if (Z_rows.shape[0], Z_cols.shape[0]) != K.shape:
        raise ValueError(f"Z blocks give {Z_rows.shape[0]} x {Z_cols.shape[0]} but K is {K.shape[0]} x {K.shape[1]}")
    P = Z_rows @ Z_cols.T
    E = K - (P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64))
    return {"kerr_cross_fro": float(np.linalg.norm(E)) / ref.fro,
            "kerr_cross_spec": _spectral_norm_rect(E) / ref.spec}
