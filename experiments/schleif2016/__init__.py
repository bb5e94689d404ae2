"""Schleif, Kaban and Tino (2016). Finding small sets of random Fourier features for shift-invariant kernel approximation."""
