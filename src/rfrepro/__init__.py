"""rfrepro: reproducible experiments for random-feature kernel methods."""

__version__ = "0.1.0"
