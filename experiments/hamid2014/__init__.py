"""Hamid, Xiao, Gittens and DeCoste (2014). Compact random feature maps (CRAFTMaps). ICML 2014."""
