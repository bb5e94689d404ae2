"""Wu, Chen, Yen and Yan (2016). Revisiting random binning features: fast convergence and strong parallelizability. KDD 2016."""
