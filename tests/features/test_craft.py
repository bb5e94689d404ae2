"""CRAFTMaps: an orthogonal down-projection keeps the up-projected kernel; JL projections stay unbiased."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features import CraftMap, RandomMaclaurin, TensorSketch
from rfrepro.kernels import polynomial_kernel


def _sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.mark.parametrize("up", [TensorSketch(degree=3), RandomMaclaurin(degree=3, h01=True)])
def test_orthogonal_down_projection_reproduces_the_up_projected_kernel(up):
    X = _sphere(30, 6)
    craft = CraftMap(up, n_components=64, n_up_components=64, projection="srht", random_state=0).fit(X)
    F = craft.up_.transform(X)
    Z = craft.transform(X)
    np.testing.assert_allclose(Z @ Z.T, F @ F.T, rtol=1e-10, atol=1e-10)
    assert not np.allclose(Z, F)   # a rotation, not the identity


@pytest.mark.parametrize("projection", ["gaussian", "srht"])
def test_kernel_estimate_is_unbiased(projection):
    X = _sphere(4, 6)
    K = polynomial_kernel(X, degree=3, offset=1.0)
    iu = np.triu_indices(4)
    draws = 300
    est = np.array([(Z @ Z.T)[iu] for Z in (
        CraftMap(TensorSketch(degree=3), n_components=16, n_up_components=64, projection=projection,
                 random_state=s).fit_transform(X) for s in range(draws))])
    z = np.abs(est.mean(0) - K[iu]) / (est.std(0, ddof=1) / np.sqrt(draws))
    assert z.max() < 3.0 + 0.5 * np.sqrt(2 * np.log(iu[0].size))


def test_craft_beats_the_plain_map_at_equal_output_dimension():
    # the paper's point (Fig. 4): RM with D = 4E features projected to E beats RM with E
    X = _sphere(300, 20, seed=1)
    K = polynomial_kernel(X, degree=5, offset=1.0)

    def err(m):
        return np.mean([np.linalg.norm((Z := m.set_params(random_state=s).fit_transform(X)) @ Z.T - K)
                        for s in range(3)]) / np.linalg.norm(K)

    plain = err(RandomMaclaurin(256, degree=5))
    craft = err(CraftMap(RandomMaclaurin(degree=5), n_components=256, n_up_components=4096, projection="srht"))
    assert craft < 0.8 * plain


def test_up_projection_is_cloned_and_sized():
    up = TensorSketch(n_components=7, degree=2)
    craft = CraftMap(up, n_components=10, random_state=0).fit(_sphere(5, 3))
    assert craft.up_.n_components == 40 and up.n_components == 7 and not hasattr(up, "sketch_")
    assert craft.n_up_components_ == 40


def test_deterministic_and_float32():
    X = _sphere(10, 6)
    make = lambda s: CraftMap(TensorSketch(degree=3), n_components=16, projection="srht", random_state=s)  # noqa: E731
    a = make(3).fit_transform(X)
    np.testing.assert_array_equal(a, make(3).fit_transform(X))
    assert not np.allclose(a, make(4).fit_transform(X))
    Z32 = make(3).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, a, rtol=1e-3, atol=1e-4)


def test_bad_projection_raises():
    with pytest.raises(ValueError, match="projection"):
        CraftMap(projection="pca").fit(_sphere(3, 2))


@parametrize_with_checks([
    CraftMap(TensorSketch(degree=2), n_components=8, random_state=0),
    CraftMap(RandomMaclaurin(degree=2), n_components=8, projection="srht", random_state=0),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
