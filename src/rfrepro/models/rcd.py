"""Parallel randomized coordinate descent for L1-regularised problems (Wu et al. 2016, Algorithm 2).

min_w lam ||w||_1 + (1/N) sum_i L(z_i' w, y_i) with
L(s, y) = 1/2 (s - y)^2 (``loss="squared"``, the Lasso) or
L(s, y) = 1/2 max(0, 1 - y s)^2 (``loss="squared_hinge"``, an L1-regularised SVM).
Both losses have a Lipschitz derivative with constant beta = 1 (the 1/2 in
the squared hinge is what makes beta = 1 hold; the paper writes max(.)^2 and
beta = 1), so M_j = (1/N) sum_i z_ij^2 bounds the coordinate curvature and
Eq. (26) is a soft-threshold step.

With tau threads the step of Eq. (26) uses the curvature beta M_j (this
beta is Richtarik & Takac's, not the loss constant above),
beta = 1 + (omega - 1)(tau - 1) / (D - 1), where omega is the most non-zeros
in a row of Z (``step="eso"``, the default): the expected separable
overapproximation of Richtarik & Takac (2015, Theorem 19) behind the speedup
of Eq. (29). For RB features omega = R << D, so beta is close to 1 and tau
threads do tau times the work per epoch; for dense random Fourier features
omega = D, so beta = tau and the shorter steps cost as many more epochs: the
"almost no speedup" the paper predicts for RF. ``step="hogwild"`` keeps
beta = 1 for any thread count (Hsieh et al. 2015 run PASSCoDe that way).

Threads run Hogwild-style (Liu et al. 2014; Richtarik & Takac 2015): each
draws coordinates uniformly at random and updates w_j and the maintained
responses s_i = z_i' w of the rows in column j without locks. An epoch's D
draws come in fixed chunks, each with its own random stream, that idle threads
take in turn: the draws do not depend on the thread count (one and two threads
walk the same coordinates) and a thread slowed by another process does not
hold the epoch up. The response updates are plain adds (PASSCoDe-Wild, Hsieh
et al. 2015): atomic ones would cost as much as the rest of a step once the
next columns are prefetched. Two threads hitting the same row at once lose an
update, and lost mass biases every later step, so with more than one thread
the responses are recomputed exactly after the first epochs (large steps,
large losses) and every few epochs after. An epoch's random draws can miss
the coordinates still moving, so a quiet epoch only triggers a check: the
responses are recomputed exactly and the descent stops only if no single
coordinate step could still lower the objective by more than ``tol`` relative.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from rfrepro.features._base import (
    NONNEGATIVE_REAL,
    POSITIVE_INT,
    RANDOM_STATE,
    options,
)
from rfrepro.models._task import TASKS, TaskMixin

LOSSES = ("squared", "squared_hinge")
STEPS = ("eso", "hogwild")

# Hand-written: scikit-learn's coordinate descent (Lasso) is cyclic and serial
# and has no squared-hinge L1 solver; liblinear's is serial too. Algorithm 2's
# point is the parallel random-coordinate version, which none of them provides.


@intrinsic
def _atomic_add(typingctx, arr, idx, val):
    """``arr[idx] += val`` as one atomic read-modify-write; returns the old value (how threads take chunks).

    Hand-written: numba offers atomics only on CUDA; LLVM's ``atomicrmw`` is
    one instruction away.
    """
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]])
        op = "fadd" if isinstance(sig.args[0].dtype, types.Float) else "add"
        return builder.atomic_rmw(op, ptr, args[2], "monotonic")

    return arr.dtype(arr, types.intp, arr.dtype), codegen


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Start loading ``arr[idx]`` into cache (LLVM's prefetch hint); returns nothing."""
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return types.void(arr, types.intp), codegen


@numba.njit(cache=True, inline="always")
def _splitmix(x):
    """SplitMix64: a well-mixed 64-bit stream seed from a counter."""
    x += np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _xorshift(s):
    s ^= s >> np.uint64(12)
    s ^= s << np.uint64(25)
    s ^= s >> np.uint64(27)
    return s


@numba.njit(cache=True, inline="always")
def _draw(s, D):
    """An integer in [0, D) from xorshift state ``s``: xorshift64*'s high 32 bits scaled by D (Lemire's multiply-shift).

    A multiply and a shift, where a 64-bit modulo took 40% of a dual
    coordinate descent pass on rows of two features; its bias, at most
    D / 2^32 per value, is far below what a permutation or a draw needs.
    """
    return np.int64((((s * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(32)) * np.uint64(D)) >> np.uint64(32))


@numba.njit(cache=True, inline="always")
def _coordinate_gradient(indptr, indices, data, y, resp, hinge, j):
    """d/dw_j of the mean loss at the current responses."""
    g = 0.0
    for p in range(indptr[j], indptr[j + 1]):
        i = indices[p]
        if hinge:
            margin = 1.0 - y[i] * resp[i]
            if margin > 0.0:
                g -= y[i] * margin * data[p]
        else:
            g += (resp[i] - y[i]) * data[p]
    return g / y.shape[0]


@numba.njit(cache=True, inline="always")
def _soft_threshold_step(wj, g, mj, lam):
    """The new w_j of Eq. (26): the minimiser of g t + mj t^2 / 2 + lam |wj + t|, plus wj."""
    v = wj - g / mj
    thr = lam / mj
    return v - thr if v > thr else (v + thr if v < -thr else 0.0)


@numba.njit(cache=True, inline="always")
def _prox_step(indptr, indices, data, y, resp, w, curv, lam, hinge, j):
    """The soft-threshold step of Eq. (26) on coordinate j: its new value from the current responses."""
    g = _coordinate_gradient(indptr, indices, data, y, resp, hinge, j)
    return _soft_threshold_step(w[j], g, curv[j], lam)


#: with threads, the responses are recomputed after each of the first this many epochs and every
#: this many after: one matvec costs about a fifth of an epoch, and the lost mass (from the
#: largest steps, early on) cost the plain Hogwild run a tenth more epochs
_RESYNC_EVERY = 4


def _chunk_size(D: int) -> int:
    """Draws per chunk: a function of D alone, so the draws do not depend on the thread count.

    Small enough that an epoch has tens of chunks to balance over the threads,
    large enough that taking one (an atomic add) costs nothing beside its steps.
    """
    return max(1, min(1024, D // 64))


@numba.njit(parallel=True, cache=True)
def _epoch(indptr, indices, data, y, resp, w, curv, lam, hinge, seed, epoch, chunk, next_chunk, n_workers):
    """Epoch ``epoch``'s D random coordinate steps, in chunks of ``chunk`` draws taken by ``n_workers`` threads.

    Chunk c draws from its own stream, a function of (seed, epoch, c) only;
    ``next_chunk[0]`` (zero on entry) hands out the chunks. With one worker
    the chunks run in order, so a seed fixes the result.
    """
    D = w.shape[0]
    n_chunks = (D + chunk - 1) // chunk
    base = _splitmix(seed + np.uint64(epoch))
    for _worker in numba.prange(n_workers):
        c = _atomic_add(next_chunk, 0, 1)
        while c < n_chunks:
            s = _splitmix(base + np.uint64(c)) | np.uint64(1)  # xorshift needs a nonzero state
            n = min(chunk, D - c * chunk)
            # the draws run two ahead of the steps: the next column's entries and the offsets of
            # the one after are on their way from memory while this step works (a step is
            # otherwise a chain of cache misses: offsets, entries, w_j)
            s = _xorshift(s)
            j1 = j2 = _draw(s, D)
            if n > 1:
                s = _xorshift(s)
                j2 = _draw(s, D)
            _prefetch(indptr, j2)
            for k in range(n):
                j = j1
                j1 = j2
                if k + 2 < n:
                    s = _xorshift(s)
                    j2 = _draw(s, D)
                    _prefetch(indptr, j2)
                    _prefetch(w, j2)
                    _prefetch(curv, j2)
                if k + 1 < n:
                    _prefetch(indices, indptr[j1])
                    _prefetch(data, indptr[j1])
                if indptr[j + 1] == indptr[j] or curv[j] == 0.0:
                    continue
                new = _prox_step(indptr, indices, data, y, resp, w, curv, lam, hinge, j)
                step = new - w[j]
                if step != 0.0:
                    w[j] = new
                    for p in range(indptr[j], indptr[j + 1]):
                        resp[indices[p]] += step * data[p]
            c = _atomic_add(next_chunk, 0, 1)


@numba.njit(cache=True)
def _objective(y, resp, w, lam, hinge):
    # serial: O(N + D) once per epoch, where a parallel reduction would add a barrier
    # that waits on whichever thread another process has just descheduled
    loss = 0.0
    for i in range(y.shape[0]):
        r = (1.0 - y[i] * resp[i]) if hinge else (resp[i] - y[i])
        if not hinge or r > 0.0:
            loss += 0.5 * r * r
    l1 = 0.0
    for j in range(w.shape[0]):
        l1 += abs(w[j])
    return loss / y.shape[0] + lam * l1


@numba.njit(parallel=True, cache=True)
def _responses(indptr, indices, data, w, out):
    """``out = Z w`` from Z's CSR arrays, rows split across the threads."""
    for i in numba.prange(out.shape[0]):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * w[indices[p]]
        out[i] = acc


@numba.njit(parallel=True, cache=True)
def _column_curvature(indptr, data, N, out):
    """M_j = (1/N) sum_i z_ij^2, the coordinate curvature bound (the losses' constant is 1)."""
    for j in numba.prange(out.shape[0]):
        acc = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            acc += data[p] * data[p]
        out[j] = acc / N


@numba.njit(parallel=True, cache=True)
def _largest_step_gain(indptr, indices, data, y, resp, w, curv, lam, hinge):
    """The largest objective decrease of a single coordinate step from ``w``.

    Along coordinate j the objective is at most its model
    F(w) + g_j t + M_j t^2 / 2 + lam (|w_j + t| - |w_j|) (M_j bounds the
    coordinate curvature); the step of Eq. (26) minimises the model and this
    returns the model's largest decrease over j. For the squared loss the
    model is exact, so no step along any coordinate lowers the objective by
    more; for the squared hinge it is the decrease Eq. (26)'s step guarantees.
    It is zero exactly at an optimum. Columns are split across the threads, as
    in the epochs: a serial check would cap the speedup the solver can show (Amdahl).
    """
    D = w.shape[0]
    gains = np.zeros(D)
    for j in numba.prange(D):
        if indptr[j + 1] > indptr[j] and curv[j] > 0.0:
            g = _coordinate_gradient(indptr, indices, data, y, resp, hinge, j)
            new = _soft_threshold_step(w[j], g, curv[j], lam)
            t = new - w[j]
            gains[j] = -(g * t + curv[j] * t * t / 2) + lam * (abs(w[j]) - abs(new))
    return gains.max() if D > 0 else 0.0


def eso_beta(Z, threads: int) -> float:
    """beta = 1 + (omega - 1)(tau - 1) / (D - 1) for ``threads`` = tau (Richtarik & Takac 2015, Theorem 19).

    omega is the most non-zeros in a row of ``Z`` (each row's loss depends on
    that many coordinates): R for R grids of random binning, D for dense
    features. Eq. (29)'s speedup tau / beta follows.

    >>> import numpy as np, scipy.sparse as sp
    >>> eso_beta(sp.csr_matrix(np.ones((4, 8))), 2)   # dense: omega = D, beta = tau
    2.0
    >>> rb = sp.csr_matrix((np.ones(4), [0, 3, 5, 7], [0, 1, 2, 3, 4]), shape=(4, 8))  # one non-zero a row
    >>> eso_beta(rb, 2), eso_beta(rb, 1)
    (1.0, 1.0)
    """
    Z = sp.csr_matrix(Z)
    D = Z.shape[1]
    if threads <= 1 or D <= 1 or Z.shape[0] == 0:
        return 1.0
    omega = int(np.diff(Z.indptr).max())
    return 1.0 + (omega - 1) * (threads - 1) / (D - 1)


class ParallelRCD(TaskMixin, BaseEstimator):
    """L1-regularised least squares or squared-hinge SVM by parallel randomized coordinate descent.

    Parameters
    ----------
    lam : float
        Weight of ||w||_1 against the mean loss (scikit-learn's Lasso ``alpha``
        for ``loss="squared"``).
    loss : {"squared", "squared_hinge"}
    task : {"regression", "binary", "multiclass", "classification"}
        Classification fits +-1 targets one-vs-all and predicts labels.
    n_threads : int
        Threads updating coordinates concurrently (capped by numba's
        thread count); part of a run's identity (Fig. 6 varies it).
    tol : float
        Stop when an epoch (D coordinate steps) lowers the objective by less
        than ``tol`` relative and, on exactly recomputed responses, no single
        coordinate step lowers it by more than ``tol`` relative (for the
        squared hinge: by more than its curvature bound guarantees).
    max_epochs : int
    step : {"eso", "hogwild"}
        ``"eso"``: with tau threads, steps of Eq. (26) with curvature beta M_j,
        beta = 1 + (omega - 1)(tau - 1) / (D - 1) (omega: the most non-zeros in
        a row), the step Eq. (29)'s speedup is proved for. ``"hogwild"``:
        beta = 1 whatever the threads. One thread: beta = 1 either way.
    random_state : int, RandomState or None
        Seeds the coordinate draws. With one thread it fixes the result; with
        more it fixes which coordinates each epoch draws (the same as with one
        thread), not the order in which the threads apply them, so the
        solution agrees to the stopping rule, not bit for bit.

    Attributes
    ----------
    coef_ : ndarray of shape (D, k)
    n_iter_ : int
        Epochs run (the most over target columns).
    step_beta_ : float
        The beta the coordinate steps used (1 with one thread or ``step="hogwild"``).
    converged_ : bool
    objective_ : float
        Final objective, from exactly recomputed responses (the sum over columns).
    nonzero_fraction_ : float
        Share of non-zero coefficients.

    References
    ----------
    L. Wu, J. Chen, I. E.-H. Yen and R. Yan. Revisiting random binning features: fast
    convergence and strong parallelizability. KDD 2016 (Algorithm 2).
    P. Richtarik and M. Takac. Parallel coordinate descent methods for big data
    optimization. Mathematical Programming, 2015.
    C.-J. Hsieh, H.-F. Yu and I. S. Dhillon. PASSCoDe: parallel asynchronous stochastic
    dual co-ordinate descent. ICML 2015 (atomic updates of the shared vector).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.randn(200, 10); y = Z[:, 0] - 2 * Z[:, 1]
    >>> m = ParallelRCD(lam=0.01, tol=1e-10, random_state=0).fit(Z, y)
    >>> np.round(m.coef_[:2, 0], 2)
    array([ 0.99, -1.99])
    """

    recorded_attributes = ("n_iter_", "converged_", "objective_", "nonzero_fraction_", "step_beta_")

    _parameter_constraints: dict = {"lam": NONNEGATIVE_REAL, "loss": options(LOSSES), "task": options(TASKS),
        "n_threads": POSITIVE_INT, "tol": NONNEGATIVE_REAL, "max_epochs": POSITIVE_INT, "step": options(STEPS),
        "random_state": RANDOM_STATE}

    def __init__(self, lam: float = 1e-3, *, loss: str = "squared", task: str = "regression",
                 n_threads: int = 1, tol: float = 1e-6, max_epochs: int = 1000, step: str = "eso",
                 random_state=None):
        self.lam = lam
        self.loss = loss
        self.task = task
        self.n_threads = n_threads
        self.tol = tol
        self.max_epochs = max_epochs
        self.step = step
        self.random_state = random_state

    def fit(self, X, y):
        self._validate_params()  # the declared _parameter_constraints, one line naming the parameter
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=not self._is_classifier())
        if self.loss == "squared_hinge" and not self._is_classifier():
            raise ValueError("loss='squared_hinge' needs a classification task")
        lam = float(self.lam)
        if not np.isfinite(lam):  # the declared constraint says >= 0 and lets inf through
            raise ValueError(f"lam must be a finite number >= 0, got {self.lam!r}")
        threads, max_epochs = int(self.n_threads), int(self.max_epochs)
        T = self._encode(y)
        rng = check_random_state(self.random_state)
        hinge = self.loss == "squared_hinge"
        # column access (CSC) for the coordinate steps, row access (CSR) for the exact responses:
        # one conversion from whichever the input is (it runs on one thread, before the descent)
        if sp.issparse(X) and X.format == "csc":
            Z = sp.csc_matrix(X, dtype=np.float64)
            Zr = Z.tocsr()
        else:
            Zr = sp.csr_matrix(X, dtype=np.float64)
            Z = Zr.tocsc()
        N, D = Z.shape
        previous = numba.get_num_threads()
        workers = min(threads, numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(workers)
        beta = eso_beta(Zr, workers) if self.step == "eso" else 1.0
        try:
            # BLAS's own threads off for the descent: OpenBLAS's idle workers spin for a while after
            # any BLAS call, on the cores the descent's threads need (with 2 BLAS threads on 2 cores,
            # about one 2-thread fit in three took 1.6x as long)
            with threadpool_limits(1, user_api="blas"):
                curv = np.empty(D)
                _column_curvature(Z.indptr, Z.data, N, curv)
                self.coef_ = np.zeros((D, T.shape[1]))
                epochs, ok, obj = [], [], 0.0
                for k in range(T.shape[1]):
                    seed = np.uint64(rng.randint(0, 2**62))
                    e, conv, f = self._solve(Z, Zr, np.ascontiguousarray(T[:, k]), self.coef_[:, k], curv, beta,
                                             lam, hinge, seed, workers, max_epochs)
                    epochs.append(e)
                    ok.append(conv)
                    obj += f
        finally:
            numba.set_num_threads(previous)
        self.step_beta_ = float(beta)
        self.n_iter_ = int(max(epochs))
        self.converged_ = bool(all(ok))
        self.objective_ = float(obj)
        self.nonzero_fraction_ = float(np.mean(self.coef_ != 0))
        return self

    def _solve(self, Z, Zr, y, w_out, curv, beta, lam, hinge, seed, workers, max_epochs):
        w = np.zeros(Z.shape[1])
        # the steps' curvature (beta M_j); the stopping check keeps the true bound M_j
        step_curv = curv * beta if beta != 1.0 else curv
        resp = np.zeros(Z.shape[0])
        chunk = _chunk_size(Z.shape[1])
        next_chunk = np.zeros(1, dtype=np.int64)
        last = _objective(y, resp, w, lam, hinge)
        converged = False
        epoch = 0
        while epoch < max_epochs:
            next_chunk[0] = 0
            _epoch(Z.indptr, Z.indices, Z.data, y, resp, w, step_curv, lam, hinge, seed, epoch, chunk, next_chunk,
                   workers)
            epoch += 1
            if workers > 1 and (epoch <= _RESYNC_EVERY or epoch % _RESYNC_EVERY == 0):
                _responses(Zr.indptr, Zr.indices, Zr.data, w, resp)  # drop the mass lost to races
            f = _objective(y, resp, w, lam, hinge)
            if last - f <= self.tol * abs(f):
                # A quiet epoch is only a hint: its random draws may have missed the coordinates
                # still moving, and races may have lost response updates. Confirm on exact responses.
                _responses(Zr.indptr, Zr.indices, Zr.data, w, resp)
                f = _objective(y, resp, w, lam, hinge)
                gain = _largest_step_gain(Z.indptr, Z.indices, Z.data, y, resp, w, curv, lam, hinge)
                if gain <= self.tol * abs(f):
                    converged = True
                    break
            last = f
        w_out[:] = w
        _responses(Zr.indptr, Zr.indices, Zr.data, w, resp)
        return epoch, converged, _objective(y, resp, w, lam, hinge)

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        return np.asarray(X @ self.coef_)
