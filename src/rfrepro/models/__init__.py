"""Models trained on feature maps (or on a precomputed exact kernel)."""

from rfrepro.models.ecoc import ECOCLeastSquares
from rfrepro.models.ridge import LeastSquaresClassifier, RidgeRegression
from rfrepro.models.svm import KernelSVM, LinearSVM

__all__ = ["KernelSVM", "LeastSquaresClassifier", "LinearSVM", "RidgeRegression"]
__all__ += ["ECOCLeastSquares"]

from rfrepro.models.cg_ridge import CGRidge  # noqa: E402
from rfrepro.models.rcd import ParallelRCD  # noqa: E402

__all__ += ["CGRidge", "ParallelRCD"]

from rfrepro.models.block_diag import BlockDiag  # noqa: E402
from rfrepro.models.kernel_ridge import ExactKernelRidge  # noqa: E402

__all__ += ["BlockDiag", "ExactKernelRidge"]

from rfrepro.models.primal_svm import PrimalLinearSVM  # noqa: E402

__all__ += ["PrimalLinearSVM"]
