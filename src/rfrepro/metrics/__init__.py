"""Metrics: kernel-approximation errors and prediction scores."""

from rfrepro.metrics.kernel import KernelReference, kernel_errors
from rfrepro.metrics.prediction import prediction_metrics

__all__ = ["KernelReference", "kernel_errors", "prediction_metrics"]
