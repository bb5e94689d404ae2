"""Schleif, Kaban and Tino (2016): Table 1 and Fig. 1 (small sets of random Fourier features)."""
