"""Tests of the prediction metrics."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.metrics import prediction_metrics


def test_regression_metrics_by_hand():
    y = np.array([1.0, -2.0, 3.0, 0.5])
    y_hat = np.array([1.5, -2.0, 2.0, 0.0])
    # residuals -0.5, 0, 1, 0.5: squares 0.25, 0, 1, 0.25 -> sum 1.5, mean 0.375
    # ||y||^2 = 1 + 4 + 9 + 0.25 = 14.25
    out = prediction_metrics("regression", y, y_hat)
    assert set(out) == {"rmse", "rel_rmse", "error"}
    assert out["rmse"] == pytest.approx(np.sqrt(0.375), rel=1e-15)
    assert out["rel_rmse"] == pytest.approx(np.sqrt(1.5 / 14.25), rel=1e-15)
    assert out["error"] == out["rel_rmse"]
    assert all(isinstance(v, float) for v in out.values())


def test_regression_perfect_prediction():
    y = np.arange(1.0, 6.0)
    out = prediction_metrics("regression", y, y.copy())
    assert out == {"rmse": 0.0, "rel_rmse": 0.0, "error": 0.0}


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_classification_metrics_by_hand(task):
    y = np.array([1, -1, 1, 1, -1, 1, -1, -1]) if task == "binary" else np.array(list("abcabcab"))
    y_hat = y.copy()
    y_hat[[1, 4, 6]] = y[[0, 0, 0]] if task == "binary" else np.array(["c", "a", "c"])
    # 3 of 8 wrong
    out = prediction_metrics(task, y, y_hat)
    assert set(out) == {"accuracy", "error"}
    assert out["accuracy"] == 5 / 8
    assert out["error"] == 3 / 8


def test_excess_risk():
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    y_hat = y.copy()
    y_hat[:2] *= -1  # error 0.2
    out = prediction_metrics("binary", y, y_hat, bayes_error=0.1)
    assert out["accuracy"] == pytest.approx(0.8)
    assert out["error"] == pytest.approx(0.2)
    assert out["excess_risk"] == pytest.approx(0.1)


def test_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        prediction_metrics("regression", np.zeros(4), np.zeros(5))
    with pytest.raises(ValueError, match="shape"):
        prediction_metrics("binary", np.zeros(4), np.zeros((4, 1)))


def test_unknown_task_rejected():
    # a misspelt task must not silently score regression outputs as classes
    with pytest.raises(ValueError, match="task"):
        prediction_metrics("regresion", np.array([1.0, 2.0]), np.array([1.1, 2.1]))
