"""Error-correcting output codes with least-squares code bits and one shared Hessian."""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import cho_solve
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from rfrepro.features._base import NONNEGATIVE_REAL, POSITIVE_INT, RANDOM_STATE, options
from rfrepro.models._cholesky import cho_factor_guarded
from rfrepro.models.ridge import _check_lam

CODES = ("random", "one_hot")


def random_dense_codes(n_classes: int, code_length: int, random_state=None, max_tries: int = 1000) -> np.ndarray:
    """A random dense +-1 code matrix (n_classes, code_length) with distinct rows and no constant column.

    Each entry is +1 or -1 with probability 1/2 (Allwein, Schapire and Singer
    2000); draws with repeated codewords or with a column that does not split
    the classes are redrawn.
    """
    rng = check_random_state(random_state)
    if n_classes < 2:
        raise ValueError(f"codes need at least 2 classes, got {n_classes}")
    if n_classes > 2 ** code_length:
        raise ValueError(f"code_length={code_length} cannot give {n_classes} distinct codewords")
    signs = np.array([-1.0, 1.0])
    for _ in range(max_tries):
        M = rng.choice(signs, size=(n_classes, code_length))
        for _ in range(max_tries):  # redraw the columns that do not split the classes
            constant = np.abs(M.sum(axis=0)) == n_classes
            if not constant.any():
                break
            M[:, constant] = rng.choice(signs, size=(n_classes, int(constant.sum())))
        if len(np.unique(M, axis=0)) == n_classes:
            return M
    raise ValueError(f"no valid random code of length {code_length} for {n_classes} classes in {max_tries} draws")


class ECOCLeastSquares(ClassifierMixin, BaseEstimator):
    """Multi-class classification by ECOC, each code bit a least-squares regression.

    Class i has the codeword M[i], a row of +-1 entries. All code bits are ridge regressions on the same
    features Z, so they share one Hessian: W = (Z^T Z + lam I)^-1 Z^T M[y],
    factored once (Cholesky) and solved for every bit at once, the
    single-pass learner of Hamid et al. (2014). A row x is assigned to the
    class whose codeword is nearest (Euclidean) to the real-valued outputs
    f(x) = W^T z(x); thresholding f first would make ties. With one-hot codes
    (M = 2 I - 1) this is one-vs-rest least squares.

    Parameters
    ----------
    lam : float
        Ridge term added to the Hessian Z^T Z (unnormalised squared loss).
    codes : {"random", "one_hot"} or array-like of shape (n_classes, code_length)
        The code matrix: random dense +-1 codes, one-vs-rest codes, or a
        given matrix (rows in the order of the sorted class labels).
    code_length : int or None
        Bits of the random codes; None means ceil(10 log2(n_classes)), the
        length Allwein et al. use for random dense codes.
    random_state : int, RandomState or None
        Draws the random codes.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    code_matrix_ : ndarray of shape (n_classes, code_length)
    coef_ : ndarray of shape (n_features, code_length)

    References
    ----------
    T. G. Dietterich and G. Bakiri. Solving multiclass learning problems via
    error-correcting output codes. JAIR 2, 1995.
    R. Hamid, Y. Xiao, A. Gittens and D. DeCoste. Compact random feature maps. ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(60, 4)
    >>> y = np.argmax(X[:, :3], axis=1)
    >>> clf = ECOCLeastSquares(lam=1e-3, random_state=0).fit(X, y)
    >>> clf.code_matrix_.shape
    (3, 16)
    >>> float(clf.score(X, y)) > 0.8
    True
    """

    #: nothing to record beyond the config
    recorded_attributes = ()

    _parameter_constraints: dict = {"lam": NONNEGATIVE_REAL, "codes": [*options(CODES), "array-like"],
        "code_length": [None, *POSITIVE_INT], "random_state": RANDOM_STATE}

    def __init__(self, lam: float = 1e-3, *, codes="random", code_length: int | None = None, random_state=None):
        self.lam = lam
        self.codes = codes
        self.code_length = code_length
        self.random_state = random_state

    def _code_matrix(self, k: int) -> np.ndarray:
        if isinstance(self.codes, str):
            if self.codes == "one_hot":
                return 2.0 * np.eye(k) - 1.0
            if self.codes != "random":
                raise ValueError(f"codes={self.codes!r}; valid values: {', '.join(CODES)} or a matrix")
            length = self.code_length
            if length is None:
                length = int(np.ceil(10 * np.log2(k)))
            elif isinstance(length, bool) or not isinstance(length, numbers.Integral) or length <= 0:
                raise ValueError(f"code_length must be a positive integer, got {length!r}")
            return random_dense_codes(k, int(length), self.random_state)
        M = np.asarray(self.codes, dtype=float)
        if M.ndim != 2 or M.shape[0] != k:
            raise ValueError(f"codes must have one row per class ({k}), got shape {M.shape}")
        if len(np.unique(M, axis=0)) != k:
            raise ValueError("codes must give every class a distinct codeword")
        return M

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        lam = _check_lam(self.lam)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"ECOCLeastSquares needs at least 2 classes in y, got {len(self.classes_)} class")
        self.code_matrix_ = self._code_matrix(len(self.classes_))
        Z = X.astype(np.float64, copy=False)
        hessian = Z.T @ Z
        hessian[np.diag_indices_from(hessian)] += lam
        rhs = Z.T @ self.code_matrix_[y_idx]
        try:
            self.coef_ = cho_solve(cho_factor_guarded(hessian), rhs, check_finite=False)
        except np.linalg.LinAlgError:  # lam = 0 and Z rank deficient: least norm solution
            self.coef_ = np.linalg.lstsq(hessian, rhs, rcond=None)[0]
        return self

    def code_outputs(self, X) -> np.ndarray:
        """The real-valued code-bit outputs f(x), shape (n_samples, code_length)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return X.astype(np.float64, copy=False) @ self.coef_

    def _scores(self, X) -> np.ndarray:
        F = self.code_outputs(X)
        M = self.code_matrix_
        # -||f - m||^2 + ||f||^2: ||f||^2 is the same for every class
        return 2.0 * F @ M.T - (M * M).sum(axis=1)

    def decision_function(self, X) -> np.ndarray:
        """Minus the squared distance of f(x) to each codeword (up to a per-row constant).

        Shape (n_samples, n_classes); for two classes the 1-D difference
        class 1 - class 0, as scikit-learn's binary classifiers return.
        """
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]
