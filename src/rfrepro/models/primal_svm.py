"""A primal linear SVM for many more rows than features: truncated Newton on the squared hinge.

With n rows of D features and n >> D, dual coordinate descent
(:class:`rfrepro.models.LinearSVM`) works on n dual variables, one row at a
time; the primal problem has only D unknowns and its Newton steps run as
matrix products on the rows. :class:`PrimalLinearSVM` solves liblinear's
``dual=False`` L2-regularised L2-loss (squared hinge) SVM without a bias,

    min_w 0.5 ||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^2,

by the modified finite Newton method of Keerthi and DeCoste (2005): at w,
the rows inside the margin (the active set A) make the objective a
quadratic with the generalised Hessian H = I + 2C X_A^T X_A; a Newton step
on it, then an exact line search on the piecewise quadratic along the step.
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral

import numpy as np
import scipy.linalg
import scipy.linalg.blas as blas
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from rfrepro.features._base import POSITIVE_INT, POSITIVE_REAL
from rfrepro.models.svm import (
    LIBLINEAR_TOL,
    SVM_LAM_GRID,
    LinearScores,
    _labels,
    _resolve_C,
    _scores,
)

#: ``solver="auto"`` may switch to the D x D Gram of the active rows on dense inputs up to this many columns.
GRAM_MAX_D = 4096

#: Multiply-adds of a Gram update (BLAS-3, compute-bound) that take as long as one row-by-column multiply-add
#: of a CG Hessian-vector product (two memory-bound float32 passes): the cost model of ``solver="auto"``.
GRAM_ROW_SPEED = 32

#: Bytes of the row blocks gathered (and, for float32, cast) for a Gram update or a float64 product.
_BLOCK_BYTES = 1 << 25

#: CG iterations per Newton step, at most (matrix-free solver).
CG_MAX_ITER = 500

#: Dense rows: with more than this fraction of the rows active, CG reads X itself (masked), else a float32 copy of the active rows.
DENSE_GATHER_MAX = 0.75


@functools.cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def _serial():
    """One BLAS thread, for the matrix-vector products and the Cholesky factorisation.

    Memory-bound products gain little from a second thread, and at these
    sizes OpenBLAS's threaded potrf and gemv can take many times the serial
    time when other processes share the cores; the Gram's rank-k updates
    (compute-bound) keep the caller's threads.
    """
    return _blas_controller().limit(limits=1, user_api="blas")


def _blocks(n_rows: int, D: int, itemsize: int):
    step = max(64, _BLOCK_BYTES // max(1, D * itemsize))
    for start in range(0, n_rows, step):
        yield start, min(start + step, n_rows)


def _matvec(X, v: np.ndarray) -> np.ndarray:
    """X @ v in float64 (a float32 dense X in float64 blocks, no full copy)."""
    with _serial():
        if sp.issparse(X) or X.dtype == np.float64:
            return np.asarray(X @ v, dtype=np.float64)
        out = np.empty(X.shape[0])
        for s, e in _blocks(X.shape[0], X.shape[1], 8):
            np.matmul(X[s:e].astype(np.float64), v, out=out[s:e])
        return out


def _rmatvec(X, u: np.ndarray) -> np.ndarray:
    """X^T @ u in float64 (a float32 dense X in float64 blocks)."""
    with _serial():
        if sp.issparse(X) or X.dtype == np.float64:
            return np.asarray(X.T @ u, dtype=np.float64)
        out = np.zeros(X.shape[1])
        for s, e in _blocks(X.shape[0], X.shape[1], 8):
            out += X[s:e].astype(np.float64).T @ u[s:e]
        return out


def gram(X, rows: np.ndarray | None = None, out: np.ndarray | None = None, alpha: float = 1.0) -> np.ndarray:
    """``out + alpha X[rows]^T X[rows]``, upper triangle only, D x D float64 Fortran order (a dense X).

    Rank-k updates (BLAS syrk) over blocks of the rows: slices of X for all
    rows, else gathered into one reused buffer. A float32 X is multiplied in
    float32 (the Gram only shapes the Newton step; the gradient is float64)
    and added to the float64 result.
    """
    n, D = X.shape
    if out is None:
        out = np.zeros((D, D), order="F")
    if rows is not None and rows.size == n:
        rows = None
    count = n if rows is None else rows.size
    syrk = blas.dsyrk if X.dtype == np.float64 else blas.ssyrk
    buf = None
    for s, e in _blocks(count, D, X.itemsize):
        if rows is None:
            block = X[s:e]
        else:
            if buf is None:
                buf = np.empty((min(e - s, count), D), dtype=X.dtype)
            block = np.take(X, rows[s:e], axis=0, out=buf[: e - s])
        if X.dtype == np.float64:
            out = syrk(alpha, block.T, beta=1.0, c=out, trans=0, lower=0, overwrite_c=1)
        else:
            out += alpha * syrk(1.0, block.T, trans=0, lower=0)
    return out


class _GramNewton:
    """Newton systems (I + 2C X_A^T X_A) d = -g solved exactly by Cholesky on the active rows' Gram.

    The Gram follows the active set A from step to step (and from fit to
    fit along a lambda path) by adding the rows that enter A and
    subtracting those that leave, or is rebuilt from the rows of A when
    that touches fewer rows.
    """

    def __init__(self, X):
        self.X = X
        self.active: np.ndarray | None = None
        self.G: np.ndarray | None = None

    def set_active(self, active: np.ndarray) -> None:
        changed = np.inf if self.active is None else np.count_nonzero(active != self.active)
        if changed < np.count_nonzero(active):
            enter, leave = np.flatnonzero(active & ~self.active), np.flatnonzero(self.active & ~active)
            if enter.size:
                self.G = gram(self.X, enter, self.G)
            if leave.size:
                self.G = gram(self.X, leave, self.G, alpha=-1.0)
        else:
            self.G = gram(self.X, np.flatnonzero(active))
        self.active = active.copy()

    def solve(self, g: np.ndarray, C: float, forcing: float) -> np.ndarray:  # noqa: ARG002 - exact
        H = 2.0 * C * self.G
        H[np.diag_indices_from(H)] += 1.0
        with _serial():
            factor = scipy.linalg.cho_factor(H, lower=False, overwrite_a=True, check_finite=False)
            return scipy.linalg.cho_solve(factor, -g, check_finite=False)


class _CGNewton:
    """Newton systems solved by diagonally preconditioned CG on H v = v + 2C X_A^T (X_A v).

    Each product is two passes over the active rows X_A: BLAS matrix-vector
    products on dense rows, gathered once per Newton step into a reused
    float32 buffer (the products only shape the step, so float32 halves
    their memory traffic; most rows active: X itself with the others'
    values zeroed), or sparse products on the CSR rows of A. Nothing of
    size D x D is formed.
    """

    def __init__(self, X):
        self.X = X
        self.buf: np.ndarray | None = None
        self.cg_iter = 0

    def set_active(self, active: np.ndarray) -> None:
        X = self.X
        rows = np.flatnonzero(active)
        self.mask = None
        if sp.issparse(X):
            self.Xa = X[rows]
            self.diag = np.bincount(self.Xa.indices, weights=self.Xa.data ** 2, minlength=X.shape[1])
            return
        if rows.size > DENSE_GATHER_MAX * X.shape[0]:
            self.Xa, self.mask = X, ~active
        else:
            if self.buf is None or self.buf.shape[0] < rows.size:
                self.buf = np.empty((rows.size, X.shape[1]), dtype=np.float32)
            self.Xa = self.buf[: rows.size]
            for s, e in _blocks(rows.size, X.shape[1], X.itemsize):
                self.Xa[s:e] = X[rows[s:e]]
        self.diag = np.zeros(X.shape[1])
        for s, e in _blocks(self.Xa.shape[0], X.shape[1], 8):
            block = self.Xa[s:e] if self.mask is None else self.Xa[s:e][active[s:e]]
            self.diag += np.einsum("ij,ij->j", block, block, dtype=np.float64)

    def _hv(self, v: np.ndarray, C: float) -> np.ndarray:
        Xa = self.Xa
        u = Xa @ v.astype(Xa.dtype, copy=False)
        if self.mask is not None:
            u[self.mask] = 0.0
        return v + 2.0 * C * np.asarray(Xa.T @ u, dtype=np.float64)

    def solve(self, g: np.ndarray, C: float, forcing: float) -> np.ndarray:
        precond = 1.0 / (1.0 + 2.0 * C * self.diag)
        d = np.zeros_like(g)
        r = -g
        z = precond * r
        p = z.copy()
        rz = r @ z
        stop = forcing * np.linalg.norm(g)
        for _ in range(CG_MAX_ITER):
            self.cg_iter += 1
            with _serial():
                Hp = self._hv(p, C)
            step = rz / (p @ Hp)
            d += step * p
            r -= step * Hp
            if np.linalg.norm(r) <= stop:
                break
            z = precond * r
            rz, rz_old = r @ z, rz
            p = z + (rz / rz_old) * p
        return d


class _AutoNewton:
    """CG steps until the Gram's exact steps would cost less, then the Gram (dense, D <= ``GRAM_MAX_D``).

    After each CG solve of k iterations on the a active rows, the next step
    switches to the Gram for good (this problem, and its later fits along a
    lambda path) if k a D ``GRAM_ROW_SPEED`` exceeds the Gram's a D^2 plus
    a Cholesky's D^3 / 3: the Gram's
    multiply-adds run at BLAS-3 speed, the products' at memory speed.
    Easy systems (few CG iterations: a large lambda) stay matrix-free;
    ill-conditioned ones (small lambda) get exact steps, and their Gram
    then changes by the few rows that cross the margin.
    """

    def __init__(self, X):
        self.cg, self.gram, self.active = _CGNewton(X), None, None

    def set_active(self, active: np.ndarray) -> None:
        self.active = active
        (self.cg if self.gram is None else self.gram).set_active(active)

    def solve(self, g: np.ndarray, C: float, forcing: float) -> np.ndarray:
        if self.gram is not None:
            return self.gram.solve(g, C, forcing)
        before = self.cg.cg_iter
        d = self.cg.solve(g, C, forcing)
        a, D = int(np.count_nonzero(self.active)), g.size
        if (self.cg.cg_iter - before) * a * D * GRAM_ROW_SPEED > a * D * D + D**3 / 3:
            self.gram = _GramNewton(self.cg.X)
            self.cg = None
        return d


def _line_search(wd: float, dd: float, z: np.ndarray, b: np.ndarray, C: float) -> float:
    """The exact minimiser t > 0 of 0.5 ||w + t d||^2 + C sum max(0, 1 - z_i - t b_i)^2.

    Its derivative is continuous, increasing and piecewise linear in t:
    Newton's method on it, kept inside the bracket of a sign change (else
    bisection), lands on the root once it is on the root's linear piece.
    """
    lo, hi, t = 0.0, np.inf, 1.0
    slope0 = abs(wd) + 2.0 * C * abs(np.dot(b, np.maximum(1.0 - z, 0.0)))
    for _ in range(100):
        r = 1.0 - z - t * b
        on = r > 0
        bo = b[on]
        dphi = wd + t * dd - 2.0 * C * np.dot(bo, r[on])
        if abs(dphi) <= 1e-13 * slope0:
            return t
        if dphi < 0:
            lo = t
        else:
            hi = t
        t_new = t - dphi / (dd + 2.0 * C * np.dot(bo, bo))
        if not lo < t_new < hi:
            t_new = 2.0 * lo if hi == np.inf else 0.5 * (lo + hi)
        if hi < np.inf and hi - lo <= 1e-15 * hi:
            return t_new
        t = t_new
    return t


def newton(X, y: np.ndarray, C: float, w: np.ndarray, tol: float, max_iter: int, hessian) -> tuple[np.ndarray, int]:
    """(w, Newton steps) of min 0.5 ||w||^2 + C sum max(0, 1 - y_i w.x_i)^2 from ``w`` (y in {-1, +1}).

    Stops when ||grad|| <= tol * max(min(#pos, #neg), 1) / n * ||grad at 0||
    (liblinear's rule for this problem) or after ``max_iter`` steps (then
    the steps equal ``max_iter``).
    """
    n = y.size
    n_pos = int(np.count_nonzero(y > 0))
    g0 = 2.0 * C * np.linalg.norm(_rmatvec(X, y))
    stop = tol * max(min(n_pos, n - n_pos), 1) / n * g0
    w = np.array(w, dtype=np.float64)
    z = y * _matvec(X, w) if np.any(w) else np.zeros(n)
    for step in range(max_iter + 1):
        active = z < 1.0
        u = np.where(active, y * (1.0 - z), 0.0)
        g = w - 2.0 * C * _rmatvec(X, u)
        gnorm = np.linalg.norm(g)
        if gnorm <= stop or step == max_iter:
            return w, step
        hessian.set_active(active)
        d = hessian.solve(g, C, min(0.1, np.sqrt(gnorm / max(g0, np.finfo(float).tiny))))
        b = y * _matvec(X, d)
        t = _line_search(float(w @ d), float(d @ d), z, b, C)
        w += t * d
        z += t * b
    return w, max_iter


class PrimalLinearSVM(LinearScores, ClassifierMixin, BaseEstimator):
    """Linear SVM on the squared hinge, solved in the primal by truncated Newton steps; no bias.

    liblinear's ``dual=False`` L2-loss SVM (scikit-learn's
    ``LinearSVC(loss="squared_hinge", dual=False, fit_intercept=False)``),
    one-vs-rest for more than two classes. Meant for many more rows than
    features (n >= 8 D, say), where the D primal unknowns are fewer than the
    n duals of :class:`rfrepro.models.LinearSVM`, and each Newton step is a
    few matrix products over the rows.

    Parameters
    ----------
    lam, C : float, or lam "cv"
        Exactly one: ``C`` directly, or ``lam`` giving C = 1 / (lam m) as
        for :class:`rfrepro.models.LinearSVM` (the squared hinge in place of
        the hinge). A number does one fit. ``lam="cv"`` picks lam from
        ``lam_grid`` by ``cv_folds``-fold stratified cross-validation
        (shuffled with seed 0; least mean misclassification rate, ties to
        the larger lam, as :class:`~rfrepro.models.LinearSVM`; the grid is
        not grown past its ends), each fold running down the grid from its
        largest lam, each fit starting from that fold's solution at the
        previous lam; then the final fit on all rows starts from the mean of
        the chosen lam's fold solutions. Both converge to the same optimum
        as a start from zero; a warm start only saves Newton steps.
        :meth:`at_chosen_lam` gives the estimator that refits at the chosen
        lam alone.
    lam_grid : sequence of float
        Candidates of ``lam="cv"`` (all > 0).
    cv_folds : int
        Folds of ``lam="cv"``.
    tol : float
        Stop when ||grad f(w)|| <= tol * max(min(n_pos, n_neg), 1) / n *
        ||grad f(0)|| for each one-vs-rest problem: liblinear's rule for this
        problem (its ``eps``; scikit-learn passes ``tol``, default 1e-4,
        as eps), so the same ``tol`` stops both at the same gradient norm.
    max_iter : int
        Newton steps per problem (``converged_`` says whether every problem
        stopped on ``tol`` first).
    solver : {"auto", "gram", "cg"}
        How each Newton system is solved. "gram": exactly, by a Cholesky
        factorisation of I + 2C X_A^T X_A, whose D x D Gram of the active
        rows is updated by the rows that enter or leave A (dense inputs
        only). "cg": conjugate gradients on Hessian-vector products, each
        two passes over the rows, to a residual of min(0.1, sqrt(||g|| /
        ||g_0||)) ||g|| (a truncated Newton step; at most ``CG_MAX_ITER``
        iterations); nothing of size D x D is formed, so CSR inputs with
        millions of columns work. "auto": "gram" for dense inputs with at
        most ``GRAM_MAX_D`` columns and at least as many rows, else "cg".

    Attributes
    ----------
    coef_ : ndarray of shape (1, D) for two classes, else (n_classes, D)
    intercept_ : ndarray of zeros, shape (1,) or (n_classes,)
    C_, lam_ : float
    n_iter_ : int
        Newton steps of the final fit (the most over one-vs-rest problems).
    converged_ : bool
    cv_errors_ : dict
        ``lam="cv"``: the mean validation error of each lam.
    cv_unconverged_ : int
        ``lam="cv"``: search fits that stopped at ``max_iter``.
    lam_at_edge_ : bool
        ``lam="cv"``: the choice is an end of a grid of two or more values.
    solver_ : str
        "gram" or "cg".

    Notes
    -----
    At w the objective's rows with margin y_i w.x_i < 1 form the active set
    A; the gradient is w - 2C X_A^T (y_A - X_A w) and the generalised
    Hessian I + 2C X_A^T X_A. Each step solves the Newton system (exactly or
    by truncated CG), then minimises the objective exactly along the
    direction: it is a piecewise quadratic in the step length, whose
    derivative's root a bracketed Newton iteration finds in O(n) per trial
    from the margins' rates of change X d (one pass over the rows). The
    margins are updated from X d, so a step reads the rows twice (X d and
    the gradient) plus its Hessian work. With exact steps the method ends
    once the active set stops changing (Keerthi and DeCoste), typically in
    a few steps. Margins and gradients are float64 (float32 rows in float64
    blocks); the Hessian's products and Gram may be float32, which only
    changes the steps, not the optimum. CSR rows are converted to float64
    once. Memory beyond the rows: a float32 copy of the active rows when
    at most ``DENSE_GATHER_MAX`` of them are active (dense), one D x D Gram
    per one-vs-rest problem that switched to it (kept along the search's
    path, one fold at a time), and each fold's training rows during the
    search.

    References
    ----------
    S. S. Keerthi and D. DeCoste. A modified finite Newton method for fast
    solution of large scale linear SVMs. JMLR 6, 2005.
    C.-J. Lin, R. C. Weng and S. S. Keerthi. Trust region Newton method for
    large-scale logistic regression. JMLR 9, 2008 (liblinear's TRON).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> svm = PrimalLinearSVM(C=1.0).fit(X, y)
    >>> svm.predict(X).tolist(), svm.coef_.round(3).tolist()
    ([1, 1, -1, -1], [[0.8, 0.8]])
    """

    #: recorded with each run: the C (and lam) used, the Newton steps and whether they stopped on tol
    recorded_attributes = ("C_", "lam_", "n_iter_", "converged_", "cv_unconverged_", "lam_at_edge_")

    input_kind = "features"

    _parameter_constraints: dict = {"lam": [None, *POSITIVE_REAL, StrOptions({"cv"})], "C": [None, *POSITIVE_REAL],
        "lam_grid": ["array-like"], "cv_folds": [Interval(Integral, 2, None, closed="left")],
        "tol": POSITIVE_REAL, "max_iter": POSITIVE_INT, "solver": [StrOptions({"auto", "gram", "cg"})]}

    def __init__(self, *, lam=None, C=None, lam_grid=SVM_LAM_GRID, cv_folds=3, tol=LIBLINEAR_TOL, max_iter=100,
                 solver="auto"):
        self.lam = lam
        self.C = C
        self.lam_grid = lam_grid
        self.cv_folds = cv_folds
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], order="C")
        if sp.issparse(X):
            X = X.astype(np.float64, copy=False)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"PrimalLinearSVM needs samples of at least 2 classes, got {self.classes_.tolist()}")
        dense_gram = not sp.issparse(X) and X.shape[1] <= GRAM_MAX_D
        if self.solver == "gram" and sp.issparse(X):
            raise ValueError("PrimalLinearSVM: solver='gram' needs dense features; use 'cg' or 'auto' for CSR")
        self.solver_ = "cg" if self.solver == "auto" and not dense_gram else self.solver
        lam, start = self.lam, None
        if isinstance(lam, str):
            if self.C is not None:
                raise ValueError(f"give exactly one of C and lam (got C={self.C!r}, lam='cv')")
            lam, start = self._cv_lam(X, codes)
        self.C_ = _resolve_C(self.C, lam, X.shape[0])
        self.lam_ = float(lam) if lam is not None else 1.0 / (self.C_ * X.shape[0])
        self.coef_, steps = self._solve(X, codes, self.C_, start)
        self.intercept_ = np.zeros(self.coef_.shape[0])
        self.n_iter_ = int(steps.max())
        self.converged_ = bool(np.all(steps < self.max_iter))
        if not self.converged_:
            warnings.warn(f"PrimalLinearSVM stopped after max_iter={self.max_iter} Newton steps before reaching "
                          f"tol={self.tol}", ConvergenceWarning, stacklevel=2)
        return self

    def at_chosen_lam(self) -> PrimalLinearSVM:
        """An unfitted copy with ``lam`` fixed at the fitted ``lam_`` (its ``fit`` is one fit, no search)."""
        check_is_fitted(self)
        return clone(self).set_params(lam=self.lam_, C=None)

    def _hessian(self, X):
        return {"gram": _GramNewton, "cg": _CGNewton, "auto": _AutoNewton}[self.solver_](X)

    def _solve(self, X, codes: np.ndarray, C: float, start: np.ndarray | None = None,
               hessians: list | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(coef, Newton steps per problem) on all rows of X; one problem for two classes, else one per class.

        ``start``: the (problems, D) starting weights (None: zeros).
        ``hessians``: the problems' Newton-system solvers, reused (a list
        filled on the first call), so a Gram follows its active set from
        one fit to the next along a lambda path.
        """
        problems = 1 if self.classes_.size == 2 else self.classes_.size
        coef = np.zeros((problems, X.shape[1])) if start is None else np.array(start, dtype=np.float64)
        steps = np.zeros(problems, dtype=int)
        for k in range(problems):
            y = np.where(codes == (1 if problems == 1 else k), 1.0, -1.0)
            if hessians is not None and len(hessians) <= k:
                hessians.append(self._hessian(X))
            hessian = hessians[k] if hessians is not None else self._hessian(X)
            coef[k], steps[k] = newton(X, y, C, coef[k], float(self.tol), int(self.max_iter), hessian)
        return coef, steps

    def _cv_lam(self, X, codes: np.ndarray) -> tuple[float, np.ndarray]:
        """(chosen lam, start of the final fit) of the ``cv_folds``-fold search."""
        grid = np.asarray(self.lam_grid, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
            raise ValueError(f"lam_grid must hold finite numbers > 0, got {self.lam_grid!r}")
        lams = np.unique(grid)[::-1].tolist()  # largest first
        folds = list(StratifiedKFold(int(self.cv_folds), shuffle=True, random_state=0).split(X, codes))
        errors = dict.fromkeys(lams, 0.0)
        solutions: dict[float, list] = {lam: [] for lam in lams}
        self.cv_unconverged_ = 0
        for tr, va in folds:  # one fold's rows at a time, down the grid
            Xtr = X[tr]
            hessians: list = []
            w = None
            for lam in lams:
                w, steps = self._solve(Xtr, codes[tr], 1.0 / (lam * tr.size), w, hessians)
                self.cv_unconverged_ += int(np.sum(steps >= self.max_iter))
                solutions[lam].append(w.copy())
                pred = _labels(_scores(X, w, np.zeros(w.shape[0]), va), np.arange(self.classes_.size))
                errors[lam] += float(np.mean(pred != codes[va]))
            del Xtr, hessians
        errors = {lam: err / len(folds) for lam, err in errors.items()}
        best = int(np.argmin([errors[lam] for lam in lams]))  # decreasing lams: ties to the larger
        self.cv_errors_ = errors
        self.lam_at_edge_ = len(lams) > 1 and best in (0, len(lams) - 1)
        chosen = float(lams[best])
        return chosen, np.mean(solutions[chosen], axis=0)
