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

The choice is made once per (dataset, kernel, cv settings) — the same for
every method and seed, so methods are compared at equal hyper-parameters —
cached in ``<results>/cv/<hash>.json`` and recorded in each run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from rfrepro.features import RandomFourierFeatures
from rfrepro.metrics import prediction_metrics
from rfrepro.models import LeastSquaresClassifier, RidgeRegression
from rfrepro.results.store import atomic_write_text


def _score(task, y, yhat) -> float:
    m = prediction_metrics(task, y, yhat)
    return m["error"]


def cross_validate(X, y, task: str, sigma0: float, cv: dict) -> dict:
    """Grid search of (sigma, lambda) minimising the k-fold error of KRR / LS on RKS features."""
    rng = np.random.RandomState(int(cv.get("seed", 0)))
    n = X.shape[0]
    rows = np.arange(n)
    if n > int(cv.get("max_rows", 5000)):
        rows = np.sort(rng.choice(n, int(cv["max_rows"]), replace=False))
    X, y = X[rows], y[rows]
    folds = int(cv.get("folds", 3))
    splitter = (KFold(folds, shuffle=True, random_state=0) if task == "regression"
                else StratifiedKFold(folds, shuffle=True, random_state=0))
    lams = [float(v) for v in cv["lams"]]
    grid = []
    for factor in cv["sigma_factors"]:
        sigma = float(factor) * sigma0
        errs = np.zeros(len(lams))
        for tr, va in splitter.split(X, y):
            fmap = RandomFourierFeatures(int(cv.get("n_components", 512)), sigma=sigma, random_state=0)
            Ztr = fmap.fit_transform(X[tr])
            Zva = fmap.transform(X[va])
            for i, lam in enumerate(lams):
                model = RidgeRegression(lam) if task == "regression" else LeastSquaresClassifier(lam)
                errs[i] += _score(task, y[va], model.fit(Ztr, y[tr]).predict(Zva)) / folds
        grid += [{"sigma": sigma, "lam": lam, "cv_error": float(e)} for lam, e in zip(lams, errs)]
    best = min(grid, key=lambda g: g["cv_error"])
    return {"sigma": best["sigma"], "lam": best["lam"], "cv_error": best["cv_error"],
            "sigma_rule_value": sigma0, "rows": int(len(rows)), "grid": grid}


def choose(X, y, task: str, sigma0: float, cv: dict, key: dict, results_root) -> dict:
    """Cached :func:`cross_validate`: computed once per ``key`` under ``<results>/cv/``."""
    blob = json.dumps({"key": key, "cv": cv, "sigma0": sigma0}, sort_keys=True, default=str)
    path = Path(results_root) / "cv" / f"{hashlib.sha1(blob.encode()).hexdigest()[:16]}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        pass
    result = cross_validate(X, y, task, sigma0, cv)
    atomic_write_text(path, json.dumps(result, indent=1))
    return result
