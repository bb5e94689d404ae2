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


def disk_annulus_bayes_rule(
    X: np.ndarray, *, inner_radius: float = 0.9, outer_radii: tuple[float, float] = (1.1, 2.0), **_
) -> np.ndarray:
    """The Bayes classifier of :func:`disk_annulus`: +1 outside the circle between the regions.

    Any circle in the gap is Bayes-optimal; the one midway (the unit circle
    for the paper's radii) is used.
    """
    radius = 0.5 * (inner_radius + outer_radii[0])
    return np.where(np.linalg.norm(X, axis=1) > radius, 1.0, -1.0)


def checkerboard_bayes_rule(X: np.ndarray, *, size: int = 3, low: float = 0.0, high: float = 1.0, **_) -> np.ndarray:
    """The Bayes classifier of :func:`checkerboard` (its own labelling rule: error 0)."""
    cells = np.floor((X - low) / (high - low) * size).clip(0, size - 1).astype(int)
    return np.where((cells[:, 0] + cells[:, 1]) % 2 == 0, 1.0, -1.0)


def realised_bayes_error(name: str, X: np.ndarray, y: np.ndarray, **params) -> float:
    """Share of the labels ``y`` of a drawn sample that the Bayes classifier gets wrong.

    The population Bayes error (0.1 for Sun et al.'s data) is what the
    papers subtract; a finite test set has its own realised value (for 10^5
    points, 0.1 +- 0.001), which a reader needs to see whether an excess
    risk near zero is below the noise of the test set.
    """
    if name not in BAYES_RULES:
        raise ValueError(f"no Bayes rule for generator {name!r}; known: {', '.join(BAYES_RULES)}")
    return float(np.mean(BAYES_RULES[name](X, **params) != y))


GENERATORS = {"disk_annulus": disk_annulus, "checkerboard": checkerboard}
BAYES_RULES = {"disk_annulus": disk_annulus_bayes_rule, "checkerboard": checkerboard_bayes_rule}
