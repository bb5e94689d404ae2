"""Frobenius distance between two Nystrom-form kernels in time linear in n.

A Nystrom form is A = C W^+ C^T with C (n x m) and W (m x m) symmetric PSD.
The distance ||A1 - A2||_F is computed from m x m quantities only:

    ||A1 - A2||_F^2 = tr(A1 A1) + tr(A2 A2) - 2 tr(A1 A2),
    tr(A1 A2) = tr(W1^+ (C1^T C2) W2^+ (C2^T C1)),

so the cost is O(n (m1 + m2)^2) for the three Gram blocks C_i^T C_j plus
O(m^3), and no n x n matrix is ever formed. This is the identity behind
Eq. (7) of Schleif, Kaban and Tino (2016), whose printed form is garbled.
"""

from __future__ import annotations

import numpy as np

#: Default relative cutoff of the pseudo-inverses: eigenvalues of W below
#: ``rcond * max eigenvalue`` count as zero (as in ``features.nystrom``).
RCOND = 1e-10


def pinv_sqrt_factor(W: np.ndarray, rcond: float = RCOND) -> np.ndarray:
    """Return T (m x r) with T T^T = W^+ for a symmetric PSD matrix W.

    From the eigendecomposition W = V diag(lam) V^T: T = V_r diag(lam_r)^{-1/2},
    keeping the r eigenvalues above ``rcond * max(lam)``. Dropping the small
    (and the negative, round-off) eigenvalues is what makes the pseudo-inverse
    robust: the Gaussian kernel on close landmarks has eigenvalues down to
    machine precision, whose inverses would only amplify rounding errors.

    Parameters
    ----------
    W : ndarray of shape (m, m)
        Symmetric positive semi-definite; only its lower triangle is read.
    rcond : float
        Relative eigenvalue cutoff.

    Returns
    -------
    T : ndarray of shape (m, r), float64
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square matrix, got shape {W.shape}")
    evals, evecs = np.linalg.eigh(W)
    top = max(float(evals[-1]) if evals.size else 0.0, np.finfo(np.float64).tiny)
    keep = evals > rcond * top
    return evecs[:, keep] / np.sqrt(evals[keep])


def nystrom_distance_from_grams(
    T1: np.ndarray, T2: np.ndarray, G11: np.ndarray, G22: np.ndarray, G12: np.ndarray
) -> float:
    """||C1 T1 T1^T C1^T - C2 T2 T2^T C2^T||_F from the Gram blocks G_ij = C_i^T C_j.

    With the Nystrom features F_i = C_i T_i (so A_i = F_i F_i^T),
    ||A1 - A2||_F^2 = ||F1^T F1||_F^2 + ||F2^T F2||_F^2 - 2 ||F1^T F2||_F^2.
    Each term is a sum of squares of an r1 x r2 matrix, which avoids the large
    entries of W^+ W^+ products. Callers that update the Gram blocks
    incrementally (the RFF selection) use this directly.

    Parameters
    ----------
    T1, T2 : ndarray of shape (m1, r1), (m2, r2)
        Pseudo-inverse square-root factors from :func:`pinv_sqrt_factor`.
    G11, G22, G12 : ndarray of shape (m1, m1), (m2, m2), (m1, m2)
        C1^T C1, C2^T C2 and C1^T C2.

    Returns
    -------
    float
    """
    s11 = np.linalg.norm(T1.T @ G11 @ T1) ** 2
    s22 = np.linalg.norm(T2.T @ G22 @ T2) ** 2
    s12 = np.linalg.norm(T1.T @ G12 @ T2) ** 2
    # the three terms nearly cancel when A1 ~ A2: round-off may leave a tiny negative
    return float(np.sqrt(max(s11 + s22 - 2.0 * s12, 0.0)))


def _check_form(C: np.ndarray, W: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    C = np.asarray(C, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    if C.ndim != 2:
        raise ValueError(f"C{name} must be 2-D (n x m), got shape {C.shape}")
    if W.shape != (C.shape[1], C.shape[1]):
        raise ValueError(
            f"W{name} must have shape {(C.shape[1], C.shape[1])} to match C{name}, got {W.shape}"
        )
    return C, W


def nystrom_frobenius_distance(
    C1: np.ndarray, W1: np.ndarray, C2: np.ndarray, W2: np.ndarray, *, rcond: float = RCOND
) -> float:
    """Frobenius distance ||C1 W1^+ C1^T - C2 W2^+ C2^T||_F without an n x n matrix.

    Cost O(n (m1 + m2)^2 + m1^3 + m2^3) time and O((m1 + m2)^2) memory beyond
    the inputs; computed in float64 whatever the input dtype, because the
    squared distance is a difference of nearly equal terms: its absolute error
    is about machine epsilon times ||A||_F^2, so distances far below
    sqrt(epsilon) ||A||_F (about 1e-8 ||A||_F) are not resolved (the distance of
    a form to itself comes out as a few 1e-9 ||A||_F rather than 0).

    Parameters
    ----------
    C1 : ndarray of shape (n, m1)
    W1 : ndarray of shape (m1, m1)
        Symmetric PSD.
    C2 : ndarray of shape (n, m2)
    W2 : ndarray of shape (m2, m2)
        Symmetric PSD.
    rcond : float
        Relative eigenvalue cutoff of the pseudo-inverses W^+: eigenvalues
        below ``rcond`` times the largest are treated as zero.

    Returns
    -------
    float

    References
    ----------
    F.-M. Schleif, A. Kaban and P. Tino. Finding small sets of random Fourier
    features for shift-invariant kernel approximation, 2016, Eq. (7).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.random.RandomState(0).randn(100, 8)
    >>> C1, W1 = linear_kernel_nystrom_form(Z, np.arange(10))
    >>> C2, W2 = linear_kernel_nystrom_form(Z[:, :4], np.arange(10))
    >>> dense = C1 @ np.linalg.pinv(W1) @ C1.T - C2 @ np.linalg.pinv(W2) @ C2.T
    >>> bool(np.isclose(nystrom_frobenius_distance(C1, W1, C2, W2), np.linalg.norm(dense)))
    True
    """
    C1, W1 = _check_form(C1, W1, "1")
    C2, W2 = _check_form(C2, W2, "2")
    if C1.shape[0] != C2.shape[0]:
        raise ValueError(f"C1 has {C1.shape[0]} rows but C2 has {C2.shape[0]}")
    return nystrom_distance_from_grams(
        pinv_sqrt_factor(W1, rcond),
        pinv_sqrt_factor(W2, rcond),
        C1.T @ C1,
        C2.T @ C2,
        C1.T @ C2,
    )


def linear_kernel_nystrom_form(
    Z: np.ndarray, landmarks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Nystrom form (C, W) of the linear kernel Z Z^T on the given landmark rows.

    C = Z Z_L^T (n x m) and W = Z_L Z_L^T (m x m), so C W^+ C^T = Z P Z^T with P
    the projection onto the span of the landmarks' feature vectors; it equals
    Z Z^T when Z_L has rank D (in particular needs D <= m). O(n m D), no n x n.

    Parameters
    ----------
    Z : ndarray of shape (n, D)
        Feature matrix.
    landmarks : array of int of shape (m,)
        Row indices of the landmarks.

    Returns
    -------
    C : ndarray of shape (n, m)
    W : ndarray of shape (m, m)
    """
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise ValueError(f"Z must be 2-D (n x D), got shape {Z.shape}")
    landmarks = np.asarray(landmarks)
    if landmarks.ndim != 1 or not np.issubdtype(landmarks.dtype, np.integer):
        raise ValueError("landmarks must be a 1-D array of row indices")
    ZL = Z[landmarks]
    return Z @ ZL.T, ZL @ ZL.T
