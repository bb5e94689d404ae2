"""Models trained on feature maps (or on a precomputed exact kernel)."""

from rfrepro.models.ecoc import ECOCLeastSquares
from rfrepro.models.ridge import LeastSquaresClassifier, RidgeRegression
from rfrepro.models.svm import KernelSVM, LinearSVM

__all__ = ["KernelSVM", "LeastSquaresClassifier", "LinearSVM", "RidgeRegression"]
__all__ += ["ECOCLeastSquares"]
