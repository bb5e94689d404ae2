"""Tests of the generated datasets (Sun et al. 2018 disk/annulus, Schleif et al. 2016 checker)."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.data.synthetic import GENERATORS, checkerboard, disk_annulus


def test_disk_annulus_bayes_accuracy():
    X, y = disk_annulus(100_000, random_state=0)
    bayes = np.where(np.linalg.norm(X, axis=1) > 1.0, 1.0, -1.0)
    # 10^5 draws: the standard error of the accuracy is 0.001
    assert np.mean(bayes == y) == pytest.approx(0.9, abs=0.005)


def test_disk_annulus_radii_and_balance():
    X, y = disk_annulus(40_000, random_state=1)
    assert X.shape == (40_000, 2) and y.shape == (40_000,)
    assert set(np.unique(y)) == {-1.0, 1.0}
    r = np.linalg.norm(X, axis=1)
    inner, outer = r <= 0.9 + 1e-12, (r >= 1.1 - 1e-12) & (r <= 2.0 + 1e-12)
    assert np.all(inner | outer)
    assert np.mean(outer) == pytest.approx(0.5, abs=0.01)
    assert np.mean(y == 1) == pytest.approx(0.5, abs=0.01)
    # points fill the regions: radii reach close to every boundary
    assert r[inner].max() > 0.89 and r[outer].min() < 1.11 and r[outer].max() > 1.99
    # uniform in area: half the disk's points lie within radius 0.9 / sqrt(2)
    assert np.mean(r[inner] < 0.9 / np.sqrt(2)) == pytest.approx(0.5, abs=0.02)
    # uniform in angle
    theta = np.arctan2(X[:, 1], X[:, 0])
    counts = np.histogram(theta, bins=8, range=(-np.pi, np.pi))[0]
    assert np.all(np.abs(counts / len(theta) - 1 / 8) < 0.01)


def test_disk_annulus_custom_radii_and_noise():
    X, y = disk_annulus(20_000, inner_radius=0.5, outer_radii=(1.5, 3.0), flip_prob=0.0, random_state=2)
    r = np.linalg.norm(X, axis=1)
    assert np.all(y[r <= 0.5 + 1e-12] == -1.0) and np.all(y[r >= 1.5 - 1e-12] == 1.0)
    assert r.max() <= 3.0 + 1e-12
    assert np.all((r <= 0.5 + 1e-12) | (r >= 1.5 - 1e-12))


def test_disk_annulus_seeded():
    a = disk_annulus(500, random_state=3)
    b = disk_annulus(500, random_state=3)
    c = disk_annulus(500, random_state=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], c[0])


def _cells(X, size, low=0.0, high=1.0):
    return np.floor((X - low) / (high - low) * size).clip(0, size - 1).astype(int)


@pytest.mark.parametrize("size", [2, 3, 4])
def test_checkerboard_labels_alternate_per_cell(size):
    X, y = checkerboard(5000, size=size, random_state=0)
    assert X.shape == (5000, 2) and np.all((X >= 0) & (X < 1))
    cells = _cells(X, size)
    label = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            in_cell = y[(cells[:, 0] == i) & (cells[:, 1] == j)]
            assert in_cell.size > 0 and np.all(in_cell == in_cell[0]), "a cell holds both labels"
            label[i, j] = in_cell[0]
    # neighbours differ, horizontally and vertically
    assert np.all(label[1:, :] == -label[:-1, :])
    assert np.all(label[:, 1:] == -label[:, :-1])
    assert label[0, 0] == 1.0
    assert np.mean(y == 1) == pytest.approx(np.mean(label == 1), abs=0.03)


def test_checkerboard_is_separable():
    # the classes are separable: the cell-parity rule classifies every point correctly,
    # also on a board that does not start at 0
    X, y = checkerboard(3000, size=3, low=-2.0, high=4.0, random_state=1)
    assert np.all((X >= -2.0) & (X < 4.0))
    cells = _cells(X, 3, low=-2.0, high=4.0)
    parity = np.where(cells.sum(axis=1) % 2 == 0, 1.0, -1.0)
    np.testing.assert_array_equal(y, parity)
    # both classes are present in comparable numbers (5 cells vs 4)
    assert np.mean(y == 1) == pytest.approx(5 / 9, abs=0.03)


def test_checkerboard_seeded():
    a = checkerboard(200, random_state=7)
    b = checkerboard(200, random_state=7)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_generators_registry():
    assert GENERATORS == {"disk_annulus": disk_annulus, "checkerboard": checkerboard}


def test_realised_bayes_error_of_disk_annulus_counts_the_flipped_labels():
    from rfrepro.data.synthetic import disk_annulus_bayes_rule, realised_bayes_error

    X, y = disk_annulus(50_000, random_state=5)
    by_hand = np.mean(np.where(np.linalg.norm(X, axis=1) > 1.0, 1.0, -1.0) != y)
    assert realised_bayes_error("disk_annulus", X, y) == by_hand
    # 5 * 10^4 draws: within 5 standard errors (0.0013 each) of the population value 0.1
    assert abs(by_hand - 0.1) < 0.007
    X0, y0 = disk_annulus(2000, flip_prob=0.0, random_state=6)
    assert realised_bayes_error("disk_annulus", X0, y0) == 0.0
    # custom radii: the rule's circle lies in the gap between the regions
    Xc, yc = disk_annulus(2000, inner_radius=1.2, outer_radii=(1.5, 3.0), flip_prob=0.0, random_state=7)
    assert realised_bayes_error("disk_annulus", Xc, yc, inner_radius=1.2, outer_radii=(1.5, 3.0)) == 0.0
    assert np.mean(disk_annulus_bayes_rule(Xc) != yc) > 0.05  # the unit circle is not in this gap


def test_realised_bayes_error_of_checkerboard_is_zero_and_unknown_generator_raises():
    from rfrepro.data.synthetic import realised_bayes_error

    X, y = checkerboard(3000, size=4, random_state=0)
    assert realised_bayes_error("checkerboard", X, y, size=4) == 0.0
    assert realised_bayes_error("checkerboard", X, -y, size=4) == 1.0
    with pytest.raises(ValueError, match="no Bayes rule"):
        realised_bayes_error("spirals", X, y)
