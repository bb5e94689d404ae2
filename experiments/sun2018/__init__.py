"""Sun, Gilbert and Tewari (2018). But how does it work in theory? Linear SVM with random features. NeurIPS 2018."""
