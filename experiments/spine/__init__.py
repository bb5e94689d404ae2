"""Not a paper: the harness's own checks on real data (kernel approximation error against D)."""
