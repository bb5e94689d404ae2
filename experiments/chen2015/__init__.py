"""Chen, Yang, King and Lyu (2015). Training-efficient feature map for shift-invariant kernels. IJCAI 2015."""
