"""Metrics: kernel-approximation errors and prediction scores."""

from rfrepro.metrics.kernel import (
    KernelReference,
    cross_kernel_errors,
    kernel_errors,
    kernel_spectra,
)
from rfrepro.metrics.nystrom import linear_kernel_nystrom_form, nystrom_frobenius_distance
from rfrepro.metrics.prediction import prediction_metrics

__all__ = [
    "KernelReference",
    "cross_kernel_errors",
    "kernel_errors",
    "kernel_spectra",
    "linear_kernel_nystrom_form",
    "nystrom_frobenius_distance",
    "prediction_metrics",
]
