"""Prediction metrics recorded by every run."""

from __future__ import annotations

import numpy as np

from rfrepro.data.dataset import TASKS


def prediction_metrics(
    task: str, y_true: np.ndarray, y_pred: np.ndarray, *, bayes_error: float | None = None
) -> dict[str, float]:
    """Scores of ``y_pred`` against ``y_true``.

    Regression: ``rmse``, ``rel_rmse`` = ||y - y_hat|| / ||y|| (Chen et al.'s
    relative RMSE, Wu et al.'s relative error) and ``error`` = rel_rmse.
    Classification: ``accuracy``, ``error`` = 1 - accuracy and, when the Bayes
    error is known (generated data), ``excess_risk`` = error - bayes_error.
    """
    if task not in TASKS:
        raise ValueError(f"task={task!r}; valid tasks: {', '.join(TASKS)}")
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true {y_true.shape} and y_pred {y_pred.shape} differ in shape")
    if task == "regression":
        resid = y_true - y_pred
        rmse = float(np.sqrt(np.mean(resid**2)))
        rel = float(np.linalg.norm(resid) / np.linalg.norm(y_true))
        return {"rmse": rmse, "rel_rmse": rel, "error": rel}
    acc = float(np.mean(y_true == y_pred))
    out = {"accuracy": acc, "error": 1.0 - acc}
    if bayes_error is not None:
        out["excess_risk"] = out["error"] - float(bayes_error)
    return out
