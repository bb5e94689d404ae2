"""Generated datasets: no download needed (the embedded defaults)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state


def disk_annulus(
    n: int,
    *,
    inner_radius: float = 0.9,
    outer_radii: tuple[float, float] = (1.1, 2.0),
    flip_prob: float = 0.1,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sun, Gilbert and Tewari (2018) data: points in a disk or an annulus.

    With probability 1/2 a point is uniform in the disk of radius
    ``inner_radius`` (label -1 with probability 1 - flip_prob) and otherwise
    uniform in the annulus ``outer_radii`` (label +1 with probability
    1 - flip_prob). The unit circle is a Bayes classifier with error
    ``flip_prob``.
    """
    rng = check_random_state(random_state)
    outer = rng.random_sample(n) < 0.5
    lo2 = np.where(outer, outer_radii[0] ** 2, 0.0)
    hi2 = np.where(outer, outer_radii[1] ** 2, inner_radius**2)
    # uniform in an annulus: r^2 uniform between the squared radii
    r = np.sqrt(lo2 + (hi2 - lo2) * rng.random_sample(n))
    theta = rng.uniform(0.0, 2.0 * np.pi, n)
    X = np.column_stack([r * np.cos(theta), r * np.sin(theta)])
    y = np.where(outer, 1.0, -1.0)
    flip = rng.random_sample(n) < flip_prob
    y[flip] *= -1.0
    return X, y


def checkerboard(
    n: int, *, size: int = 3, low: float = 0.0, high: float = 1.0, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Schleif et al. (2016) checker data: uniform points on a size x size board.

    The label (+-1) alternates between neighbouring cells; the classes are
    separable, so a perfect classifier exists.
    """
    rng = check_random_state(random_state)
    X = rng.uniform(low, high, size=(n, 2))
    cells = np.floor((X - low) / (high - low) * size).clip(0, size - 1).astype(int)
    y = np.where((cells[:, 0] + cells[:, 1]) % 2 == 0, 1.0, -1.0)
    return X, y


GENERATORS = {"disk_annulus": disk_annulus, "checkerboard": checkerboard}
