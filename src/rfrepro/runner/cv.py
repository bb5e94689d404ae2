"""Choosing sigma and lambda by k-fold cross-validation on the training split.

Enabled by a ``cv`` block in the run config::

    cv:
      enabled: true
      sigma_factors: [0.25, 0.5, 1, 2, 4]   # x the kernel.sigma rule's value
      lams: [1e-4, 1e-2, 1]
      folds: 3
      n_components: 512                    # RKS cos features used for the search
      max_rows: 5000                       # CV on at most this many training rows
      seed: 0
      max_widen: 8                         # grid extensions allowed per parameter
      search: rks                          # or random_binning (below)
      holdout: false                       # true: score the first of the folds only

``search: random_binning`` scores random binning features (``n_components``
grids, the Laplacian kernel) with ridge solved by conjugate gradient
(:class:`~rfrepro.models.CGRidge`, ``tol`` and ``maxiter`` of the block,
defaults 1e-3 and 1000), as Wu et al. (2016) choose sigma by RB's error.
``holdout: true`` scores one validation split (the first of the ``folds``
splits: 1/folds of the rows held out) instead of all of them.

The grid must contain the optimum: while the best sigma factor (or lambda) is
the smallest or largest value of its grid, the grid is extended by one more
step in that direction (the ratio of the two outermost values on that side)
and the new points are scored, until the choice is interior or ``max_widen``
extensions were made. The result records the final grid ends, the number of
extensions and whether the choice is interior.

The choice is made once per (dataset, kernel, cv settings) — the same for
every method and seed, so methods are compared at equal hyper-parameters —
cached in ``<results>/cv/<hash>.json`` and recorded in each run.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from rfrepro.atomic import atomic_write_text
from rfrepro.data.splits import kfold_splitter
from rfrepro.features import RandomBinning, RandomFourierFeatures
from rfrepro.layout import ResultsLayout
from rfrepro.metrics import prediction_metrics
from rfrepro.models import CGRidge, LeastSquaresClassifier, RidgeRegression
from rfrepro.runner.identity import code_version

#: default number of grid extensions per parameter (sigma and lambda each)
MAX_WIDEN = 8


def _score(task, y, yhat) -> float:
    m = prediction_metrics(task, y, yhat)
    return m["error"]


def _extend(values: list[float], side: int) -> float:
    """The next value beyond the low (``side=-1``) or high (``+1``) end of a grid of >= 2 values, one geometric step out."""
    v = sorted(values)
    if side < 0:
        return v[0] / (v[1] / v[0])
    return v[-1] * (v[-1] / v[-2])


def _edge(value: float, values: list[float]) -> int:
    """-1 when ``value`` is the grid's smallest, +1 its largest, 0 when interior.

    A one-value grid is a fixed setting, not a search: never widened.
    """
    v = sorted(values)
    if len(v) < 2:
        return 0
    return -1 if value == v[0] else 1 if value == v[-1] else 0


class _Search:
    """k-fold errors of (sigma factor, lambda) pairs, each scored once and kept."""

    def __init__(self, X, y, task: str, sigma0: float, cv: dict):
        self.X, self.y, self.task, self.sigma0 = X, y, task, sigma0
        self.n_components = int(cv.get("n_components", 512))
        self.folds = int(cv.get("folds", 3))
        self.splits = list(kfold_splitter(task, self.folds, 0).split(X, y))
        if cv.get("holdout"):
            self.splits = self.splits[:1]
        self.search = str(cv.get("search", "rks"))
        if self.search not in ("rks", "random_binning"):
            raise ValueError(f"cv.search={self.search!r}; valid: rks, random_binning")
        self.cg = {"tol": float(cv.get("tol", 1e-3)), "maxiter": int(cv.get("maxiter", 1000))}
        self.errors: dict[tuple[float, float], float] = {}

    def _map(self, sigma: float):
        if self.search == "random_binning":
            return RandomBinning(self.n_components, sigma=sigma, random_state=0)
        return RandomFourierFeatures(self.n_components, sigma=sigma, random_state=0)

    def _model(self, lam: float):
        if self.search == "random_binning":
            return CGRidge(lam, task=self.task, **self.cg)
        return RidgeRegression(lam) if self.task == "regression" else LeastSquaresClassifier(lam)

    def score(self, factors, lams) -> None:
        """Score every (factor, lam) pair not scored yet (features drawn once per factor and fold)."""
        for factor in factors:
            todo = [lam for lam in lams if (factor, lam) not in self.errors]
            if not todo:
                continue
            errs = np.zeros(len(todo))
            for tr, va in self.splits:
                fmap = self._map(factor * self.sigma0)
                Ztr = fmap.fit_transform(self.X[tr])
                Zva = fmap.transform(self.X[va])
                for i, lam in enumerate(todo):
                    model = self._model(lam).fit(Ztr, self.y[tr])
                    errs[i] += _score(self.task, self.y[va], model.predict(Zva)) / len(self.splits)
            self.errors.update({(factor, lam): float(e) for lam, e in zip(todo, errs)})

    def best(self, factors, lams) -> tuple[float, float]:
        # ties go to the first pair in grid order, so the choice is deterministic
        return min(((f, lam) for f in sorted(factors) for lam in sorted(lams)), key=lambda p: self.errors[p])


def cross_validate(X, y, task: str, sigma0: float, cv: dict) -> dict:
    """Grid search of (sigma, lambda) minimising the k-fold error of KRR / LS on RKS features.

    The grid is widened until the choice is interior (see the module docstring).
    """
    rng = np.random.RandomState(int(cv.get("seed", 0)))
    n = X.shape[0]
    rows = np.arange(n)
    if n > int(cv.get("max_rows", 5000)):
        rows = np.sort(rng.choice(n, int(cv["max_rows"]), replace=False))
    search = _Search(X[rows], y[rows], task, sigma0, cv)
    factors = sorted(float(v) for v in cv["sigma_factors"])
    lams = sorted(float(v) for v in cv["lams"])
    max_widen = int(cv.get("max_widen", MAX_WIDEN))
    widened = {"sigma": 0, "lam": 0}
    while True:
        search.score(factors, lams)
        factor, lam = search.best(factors, lams)
        moves = {"sigma": _edge(factor, factors), "lam": _edge(lam, lams)}
        grown = False
        for name, grid in (("sigma", factors), ("lam", lams)):
            if moves[name] and widened[name] < max_widen:
                grid.append(_extend(grid, moves[name]))
                grid.sort()
                widened[name] += 1
                grown = True
        if not grown:
            break
    grid = [{"sigma": f * sigma0, "lam": lam, "cv_error": search.errors[(f, lam)]}
            for f in factors for lam in lams]
    return {"sigma": factor * sigma0, "lam": lam, "cv_error": search.errors[(factor, lam)],
            "sigma_rule_value": sigma0, "sigma_factor": factor, "rows": int(len(rows)),
            "sigma_factor_min": factors[0], "sigma_factor_max": factors[-1],
            "lam_min": lams[0], "lam_max": lams[-1],
            "widened_sigma": widened["sigma"], "widened_lam": widened["lam"],
            "interior": not (moves["sigma"] or moves["lam"]), "grid": grid}


def choose(X, y, task: str, sigma0: float, cv: dict, key: dict, results_root) -> dict:
    """Cached :func:`cross_validate`: computed once per ``key`` under ``<results>/cv/``.

    ``key`` names the data (the caller puts the dataset config and its data
    fingerprint in it); the code version is added here, so a choice is reused
    only for the same rows, the same bytes and the same code, as a record is.
    """
    # the search rule is part of the key: choices cached by an older rule are not reused
    blob = json.dumps({"key": key, "cv": cv, "sigma0": sigma0, "rule": "widen-until-interior",
                       "code": code_version()}, sort_keys=True, default=str)
    path = ResultsLayout(results_root).cv(hashlib.sha1(blob.encode()).hexdigest()[:16])
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        pass
    result = cross_validate(X, y, task, sigma0, cv)
    atomic_write_text(path, json.dumps(result, indent=1))
    return result
