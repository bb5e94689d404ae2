"""Benchmark of the linear SVM's lambda search against scikit-learn's.

``LinearSVM(lam="cv")`` (3-fold stratified CV over lam = 1e-1 .. 1e-6, grown
past a winning end, then a refit on every row; warm starts down the grid and
into the refit) against the same search run with scikit-learn's
``LinearSVC`` (liblinear): the same folds, the same lambdas (as C = 1 /
(lam m) for each fold's m), the same budget of 1000 passes per fit, each fit
started from zero (liblinear takes no starting point).
The data are the leaderboard's classification setting: 2000 training and
2000 test rows of the 3 x 3 checkerboard, z-scored, mapped by RKS (float32,
the median-rule sigma) to D columns, and by random binning (CSR).

For each case it prints the least time of ``--repeats`` fits of both (one
thread each), their ratio, the lambda each chose and its test error. At the
smallest lambdas most fits stop at the 1000-pass cap (``unconverged``), so
the two searches judge different iterates there: the test errors say which
search's choice and refit generalise better, not which solver is correct.

A second table times one pass of the dual coordinate descent itself against
liblinear's, at a fixed C = 1000 (no bias, the hinge loss) on problems that
neither solver finishes, so both run exactly ``passes`` passes: Sun et al.'s
shape (1000 rows of D = 2 features, where a pass is its bookkeeping: the
permutation draw, the tests, a dot and an update of two values), wider dense
rows, and CSR rows. It prints the median time per pass of ``--repeats``
alternated fits and their ratio.

A third table compares the primal Newton solver ``PrimalLinearSVM(lam=...)`` with
scikit-learn's ``LinearSVC(loss="squared_hinge", dual=False, fit_intercept=False)``
(liblinear's TRON) at the same C = 1 / (lam n) and the same ``tol`` (1e-4,
liblinear's stopping rule) on n >> D: n = 30000 rows of D = 2048 float64
random Fourier features (cos of a random projection of 20 Gaussian
coordinates, labels from a noisy linear rule on them; ``--quick``: 3000 rows
of D = 128). It prints the median
time of ``--repeats`` alternated fits of each (one thread each), their ratio
(ours / scikit-learn's), the relative gap of the two objectives
(ours - theirs) / theirs, and the control: the median time of one
Hessian-vector product's two passes over the rows (X^T (X v)).

Usage: ``python scripts/bench_svm.py [--quick] [--repeats N] [--only {search,pass,primal}]``.
"""

from __future__ import annotations

import argparse
import warnings

import numba
import numpy as np
import scipy.sparse as sp
from _timing import fastest, interleaved
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from rfrepro.data.synthetic import checkerboard
from rfrepro.features import RandomBinning, RandomFourierFeatures
from rfrepro.kernels import resolve_bandwidth
from rfrepro.models import LinearSVM, PrimalLinearSVM
from rfrepro.models.svm import CV_MAX_ITER, _liblinear

FULL_CASES = (("rks", 256), ("rks", 1024), ("rks", 4096), ("rb", 64))
QUICK_CASES = (("rks", 256), ("rb", 16))
#: (rows as "dense" or "csr", D, passes) for the time per pass; the first is Sun et al.'s shape
FULL_PASS_CASES = (("dense", 2, 20_000), ("dense", 64, 3000), ("csr", 64, 3000))
QUICK_PASS_CASES = (("dense", 2, 2000),)
#: (n, D, lam) of the primal table
FULL_PRIMAL_CASES = ((30_000, 2048, 1e-4),)
QUICK_PRIMAL_CASES = ((3000, 128, 1e-4),)


def features(kind: str, D: int, seed: int):
    X, y = checkerboard(2000, random_state=seed)
    Xt, yt = checkerboard(2000, random_state=1000 + seed)
    mu, sd = X.mean(0), X.std(0)
    X, Xt = (X - mu) / sd, (Xt - mu) / sd
    if kind == "rks":
        sigma = resolve_bandwidth(X, "median", kernel="gaussian", random_state=seed)
        m = RandomFourierFeatures(n_components=D, sigma=sigma, random_state=seed).fit(X)
        return m.transform(X).astype(np.float32), y, m.transform(Xt).astype(np.float32), yt
    m = RandomBinning(n_components=D, sigma=0.5, random_state=seed).fit(X)
    return m.transform(X), y, m.transform(Xt), yt


def ours(Z, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the refit at the smallest lambdas stops at the cap
        return LinearSVM(lam="cv", max_iter=CV_MAX_ITER).fit(Z, y)


def _svc(C: float):
    """scikit-learn's LinearSVC (liblinear) for the no-bias hinge-loss SVM, capped as our search's fits, tol 1e-4."""
    return _liblinear(C, "hinge", False, 1.0, CV_MAX_ITER, 1e-4)


def our_folds(Z, y):
    """The folds of our search: 3-fold stratified, shuffled with seed 0."""
    return list(StratifiedKFold(3, shuffle=True, random_state=0).split(Z, np.unique(y, return_inverse=True)[1]))


def sklearn_search(Z, y, lams, folds):
    """The same search with LinearSVC: our folds, C = 1 / (lam m_fold) per fold, the refit at C = 1 / (lam m)."""
    errors = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for lam in lams:
            err = 0.0
            for tr, va in folds:
                svc = _svc(1.0 / (lam * tr.size)).fit(Z[tr], y[tr])
                err += np.mean(svc.predict(Z[va]) != y[va])
            errors[lam] = err / len(folds)
        best = min(sorted(errors, reverse=True), key=lambda lam: errors[lam])  # ties to the larger lam
        final = _svc(1.0 / (best * Z.shape[0])).fit(Z, y)
    return best, final


def pass_problem(rows: str, D: int):
    """1000 rows of D Gaussian features labelled by the sign of x_0 x_1 (no linear separator); CSR: |x| < 1 zeroed."""
    rng = np.random.RandomState(0)
    X = rng.randn(1000, D)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    if rows == "csr":
        X[np.abs(X) < 1.0] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def seconds_per_pass(model, X, y) -> float:
    fit = fastest(lambda: model.fit(X, y), 1, keep=True)
    return fit.best / int(np.max(fit.out.n_iter_))


def per_pass(cases, repeats: int) -> None:
    print(f"\n{'rows':>5} {'D':>4} {'passes':>7} {'ours us':>8} {'liblinear us':>12} {'ratio':>6}  (per pass, median of {repeats})")
    C = 1000.0
    for rows, D, passes in cases:
        X, y = pass_problem(rows, D)
        svm, svc = LinearSVM(C=C, max_iter=passes, tol=1e-12), _liblinear(C, "hinge", False, 1.0, passes, 1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            LinearSVM(C=C, max_iter=2).fit(X, y)  # the compiled solver loaded for these types
            times = [(seconds_per_pass(svm, X, y), seconds_per_pass(svc, X, y)) for _ in range(repeats)]
        t_ours, t_skl = np.median(times, axis=0)
        print(f"{rows:>5} {D:>4} {passes:>7} {1e6 * t_ours:>8.2f} {1e6 * t_skl:>12.2f} {t_ours / t_skl:>6.2f}", flush=True)


def primal_problem(n: int, D: int, d: int = 20, seed: int = 0):
    """n rows of D random Fourier features of d Gaussian coordinates; labels: a noisy linear rule on them."""
    rng = np.random.RandomState(seed)
    X0 = rng.standard_normal((n, d))
    y = np.where(X0 @ rng.standard_normal(d) + 0.5 * np.sqrt(d) * rng.standard_normal(n) > 0, 1, -1)
    W = rng.standard_normal((d, D)) / np.sqrt(d)
    return np.sqrt(2.0 / D) * np.cos(X0 @ W + rng.uniform(0, 2 * np.pi, D)), y


def squared_hinge_objective(w: np.ndarray, X, y: np.ndarray, C: float) -> float:
    return float(0.5 * w @ w + C * np.sum(np.maximum(0.0, 1.0 - y * (X @ w)) ** 2))


def primal(cases, repeats: int) -> None:
    print(f"\n{'n':>6} {'D':>5} {'lam':>6} {'ours s':>7} {'sklearn s':>9} {'ratio':>6} {'obj gap':>9} "
          f"{'steps':>5} {'X^T X v ms':>10}  (medians of {repeats}, alternated, primal vs LinearSVC(dual=False))")
    for n, D, lam in cases:
        Z, y = primal_problem(n, D)
        C = 1.0 / (lam * n)
        ours = PrimalLinearSVM(lam=lam)
        svc = LinearSVC(loss="squared_hinge", dual=False, fit_intercept=False, C=C, tol=1e-4)
        PrimalLinearSVM(lam=lam).fit(Z[:200, :16], y[:200])  # imports and first calls outside the timings
        fits = {"ours": lambda Z=Z, y=y, m=ours: m.fit(Z, y), "sklearn": lambda Z=Z, y=y, m=svc: m.fit(Z, y)}
        times = interleaved(fits, repeats, keep=True)
        ones = np.ones(D)
        control = fastest(lambda Z=Z, v=ones: Z.T @ (Z @ v), 5).median
        f_ours = squared_hinge_objective(times["ours"].out.coef_.ravel(), Z, y, C)
        f_skl = squared_hinge_objective(times["sklearn"].out.coef_.ravel(), Z, y, C)
        t_ours, t_skl = times["ours"].median, times["sklearn"].median
        print(f"{n:>6} {D:>5} {lam:>6.0e} {t_ours:>7.2f} {t_skl:>9.2f} {t_ours / t_skl:>6.2f} "
              f"{(f_ours - f_skl) / f_skl:>9.1e} {times['ours'].out.n_iter_:>5} {1e3 * control:>10.1f}", flush=True)


def search_table(cases, repeats: int) -> None:
    print(f"{'map':>4} {'D':>5} {'cols':>6} {'ours s':>7} {'sklearn s':>9} {'ratio':>6}  "
          f"{'lam ours':>8} {'lam skl':>8}  {'err ours':>8} {'err skl':>8}  unconverged")
    for kind, D in cases:
        Z, y, Zt, yt = features(kind, D, seed=0)
        ours(Z[:60], y[:60])  # the compiled solver loaded for this input's types, outside the timings
        fit = fastest(lambda Z=Z, y=y: ours(Z, y), repeats, keep=True)
        t_ours, svm = fit.best, fit.out
        lams = sorted(svm.cv_errors_, reverse=True)  # the grid our search ended with, edges included
        folds = our_folds(Z, y)
        search = fastest(lambda Z=Z, y=y, lams=lams, folds=folds: sklearn_search(Z, y, lams, folds), repeats,
                         keep=True)
        t_skl, (lam_skl, final) = search.best, search.out
        err_ours = np.mean(svm.predict(Zt) != yt)
        err_skl = np.mean(final.predict(Zt) != yt)
        print(f"{kind:>4} {D:>5} {Z.shape[1]:>6} {t_ours:>7.2f} {t_skl:>9.2f} {t_ours / t_skl:>6.2f}  "
              f"{svm.lam_:>8.0e} {lam_skl:>8.0e}  {err_ours:>8.4f} {err_skl:>8.4f}  "
              f"{svm.cv_unconverged_} of {3 * len(lams)} search fits", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two small cases, one repeat")
    ap.add_argument("--repeats", type=int, default=None, help="fits per case, the least time kept (default 3; 1 quick)")
    ap.add_argument("--only", choices=("search", "pass", "primal"), default=None, help="one table (default: all three)")
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    numba.set_num_threads(1)
    tables = {args.only} if args.only else {"search", "pass", "primal"}
    with threadpool_limits(1):
        if "search" in tables:
            search_table(QUICK_CASES if args.quick else FULL_CASES, repeats)
        if "pass" in tables:
            per_pass(QUICK_PASS_CASES if args.quick else FULL_PASS_CASES, max(repeats, 3))
        if "primal" in tables:
            primal(QUICK_PRIMAL_CASES if args.quick else FULL_PRIMAL_CASES, max(repeats, 3))


if __name__ == "__main__":
    main()
