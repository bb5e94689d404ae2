"""Feature maps: one family per module, all scikit-learn transformers.

Shared pieces: ``_base`` (validation, chunking), ``sampling`` (spectral
frequencies), ``_trig`` (fused cosine), ``hadamard`` (fast Walsh-Hadamard
transform and SRHT).
"""

from rfrepro.features.compositional import CompRFF
from rfrepro.features.craft import CraftMap
from rfrepro.features.fastfood import Fastfood
from rfrepro.features.hadamard import SRHT, fwht
from rfrepro.features.leverage import LeverageRFF
from rfrepro.features.maclaurin import RandomMaclaurin
from rfrepro.features.nystrom import ExactKernel, Nystroem
from rfrepro.features.orthogonal import OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures
from rfrepro.features.quasi import QuasiRandomFourierFeatures
from rfrepro.features.rff import RandomFourierFeatures
from rfrepro.features.rff_selection import RFFSelection
from rfrepro.features.tefm import TEFMG, TEFMS
from rfrepro.features.tensor_sketch import TensorSketch

__all__ = [
    "SRHT",
    "TEFMG",
    "TEFMS",
    "CompRFF",
    "CraftMap",
    "ExactKernel",
    "Fastfood",
    "LeverageRFF",
    "Nystroem",
    "OrthogonalRandomFeatures",
    "QuasiRandomFourierFeatures",
    "RFFSelection",
    "RandomMaclaurin",
    "RandomFourierFeatures",
    "StructuredOrthogonalRandomFeatures",
    "TensorSketch",
    "fwht",
]

from rfrepro.features.random_binning import RandomBinning  # noqa: E402

__all__ += ["RandomBinning"]
