"""Feature maps: one family per module, all scikit-learn transformers.

Shared pieces: ``_base`` (validation, chunking), ``sampling`` (spectral
frequencies), ``_trig`` (fused cosine).
"""

from rfrepro.features.nystrom import ExactKernel, Nystroem
from rfrepro.features.rff import RandomFourierFeatures

__all__ = ["ExactKernel", "Nystroem", "RandomFourierFeatures"]
