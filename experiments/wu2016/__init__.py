"""Wu, Chen, Yen and Yan (2016): random binning features, CG ridge, parallel coordinate descent."""
