"""Feature maps: one family per module, all scikit-learn transformers.

Shared pieces: ``_base`` (validation, chunking), ``sampling`` (spectral
frequencies), ``_trig`` (fused cosine), ``hadamard`` (fast Walsh-Hadamard
transform and SRHT).
"""

from rfrepro.features.leverage import LeverageRFF
from rfrepro.features.nystrom import ExactKernel, Nystroem
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.features.rff_selection import RFFSelection

__all__ = ["ExactKernel", "LeverageRFF", "Nystroem", "RFFSelection", "RandomFourierFeatures"]
