"""Hamid, Xiao, Gittens and DeCoste (2014), Compact Random Feature Maps (CRAFTMaps), ICML."""
