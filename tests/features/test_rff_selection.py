"""Tests of RFF selection by the Nystrom-approximated Frobenius test (Schleif et al. 2016)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from rfrepro.data.synthetic import checkerboard
from rfrepro.features.rff_selection import RFFSelection
from rfrepro.kernels import gaussian_kernel
from rfrepro.metrics.nystrom import linear_kernel_nystrom_form


def _data(n: int = 400, d: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).standard_normal((n, d))


def _sel(**params) -> RFFSelection:
    defaults = dict(max_components=300, chunk_size=10, sigma=1.5, random_state=0)
    return RFFSelection(**{**defaults, **params})


def _pinv(W: np.ndarray) -> np.ndarray:
    return np.linalg.pinv(W, rcond=1e-10, hermitian=True)


# ---------------------------------------------------------------- the selection rule


@pytest.mark.parametrize("error_scale", ["relative", "none"])
def test_error_matches_dense_nystrom_distance(error_scale):
    """error_ is ||NyK^ - NyK||_F of the selected features, checked with n x n matrices."""
    X = _data()
    sel = _sel(error_scale=error_scale).fit(X)
    L = sel.landmarks_
    K = gaussian_kernel(X, sigma=sel.sigma_)
    nyk = K[:, L] @ _pinv(K[np.ix_(L, L)]) @ K[L]
    C, W = linear_kernel_nystrom_form(sel.transform(X), L)
    dense = np.linalg.norm(C @ _pinv(W) @ C.T - nyk)
    if error_scale == "relative":
        dense /= np.linalg.norm(nyk)
    assert sel.error_ == pytest.approx(dense, rel=1e-8)


def test_trace_is_consistent_with_the_rule():
    sel = _sel(max_components=2000).fit(_data())
    tr = sel.error_trace_
    acc = tr["accepted"]
    assert acc[0]  # E_old starts at +inf: the first chunk is always kept
    kept = tr["error"][acc]
    # every kept chunk lowered the error by at least eps
    assert np.all(np.diff(kept) <= -sel.eps)
    # each try is scored at the size of (selected set + chunk)
    np.testing.assert_array_equal(tr["n_components"][acc], 10 * np.arange(1, acc.sum() + 1))
    assert sel.n_selected_ == 10 * acc.sum()
    assert sel.error_ == kept[-1]
    # it stopped on iter_max failures in a row (D_max = 2000 is out of reach here)
    assert sel.n_selected_ < 2000
    assert not acc[-sel.iter_max :].any() and acc[-sel.iter_max - 1]


@pytest.mark.parametrize(("max_components", "chunk_size"), [(25, 10), (60, 20), (37, 1)])
def test_selected_count_bounded_and_multiple_of_chunk(max_components, chunk_size):
    sel = _sel(max_components=max_components, chunk_size=chunk_size, eps=-np.inf).fit(_data())
    # eps = -inf keeps every chunk: growth stops at the last chunk that fits
    assert sel.n_selected_ == (max_components // chunk_size) * chunk_size
    assert sel.n_selected_ <= max_components
    assert sel.n_selected_ % chunk_size == 0
    assert sel.random_weights_.shape == (3, sel.n_selected_)
    assert sel.random_offset_.shape == (sel.n_selected_,)


def test_selected_count_on_default_rule():
    for seed in range(3):
        sel = _sel(max_components=150, chunk_size=15, random_state=seed).fit(_data())
        assert 15 <= sel.n_selected_ <= 150
        assert sel.n_selected_ % 15 == 0


def test_deterministic_under_a_seed_and_varies_with_it():
    X = _data()
    a, b = _sel(random_state=7).fit(X), _sel(random_state=7).fit(X)
    assert a.n_selected_ == b.n_selected_
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)
    np.testing.assert_array_equal(a.random_weights_, b.random_weights_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = _sel(random_state=8).fit(X)
    assert not np.array_equal(a.landmarks_, c.landmarks_)
    n = min(a.n_selected_, c.n_selected_)
    assert not np.allclose(a.random_weights_[:, :n], c.random_weights_[:, :n])


def test_transform_is_the_rff_map_of_the_selected_frequencies():
    X = _data()
    sel = _sel().fit(X)
    Xnew = _data(50, seed=1)
    expected = np.sqrt(2.0 / sel.n_selected_) * np.cos(
        Xnew @ sel.random_weights_ + sel.random_offset_
    )
    np.testing.assert_allclose(sel.transform(Xnew), expected, atol=1e-12)
    assert sel.n_features_out_ == sel.n_selected_


def test_float32_preserved():
    X = _data().astype(np.float32)
    sel = _sel().fit(X)
    Z = sel.transform(X)
    assert Z.dtype == np.float32
    assert sel.random_weights_.dtype == np.float32
    ref = _sel().fit(X.astype(np.float64))
    assert sel.n_selected_ == ref.n_selected_
    np.testing.assert_allclose(Z, ref.transform(X.astype(np.float64)), atol=1e-5)


# ---------------------------------------------------------------- the paper's checker result


def test_checkerboard_small_set_classifies():
    """3 x 3 checkerboard on the unit square, 3000 training points, D_max = 5000.

    sigma = 0.15 (0.52 on z-scored data): the board's cells are 1/3 wide,
    and the median rule (0.51 here) is too wide to resolve them (about 95%).
    C = 100: with 3000 points liblinear's C = 1 regularises too strongly
    (98.5 to 99%); the paper had 8100 training points per fold.
    """
    X, y = checkerboard(4000, size=3, random_state=0)
    Xtr, ytr, Xte, yte = X[:3000], y[:3000], X[3000:], y[3000:]
    sel = RFFSelection(max_components=5000, chunk_size=10, sigma=0.15, random_state=0).fit(Xtr)
    # measured D* = 410 here (130 to 660 over seeds 0-5, each at >= 99.3%)
    assert sel.n_selected_ <= 5000 // 5
    svm = LinearSVC(C=100.0).fit(sel.transform(Xtr), ytr)
    assert svm.score(sel.transform(Xte), yte) >= 0.99


# ---------------------------------------------------------------- parameters and memory


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"max_components": 0}, "max_components"),
        ({"max_components": -5}, "max_components"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": 400}, "chunk_size"),  # more than max_components = 300
        ({"n_landmarks": 401}, "n_landmarks"),  # more than the 400 rows
        ({"n_landmarks": 0}, "n_landmarks"),
        ({"iter_max": 0}, "iter_max"),
        ({"eps": float("nan")}, "eps"),
        ({"error_scale": "squared"}, "error_scale"),
        ({"kernel": "polynomial"}, "kernel"),
        ({"sigma": -1.0}, "sigma"),
    ],
)
def test_bad_params_raise(params, name):
    with pytest.raises(ValueError, match=name):
        _sel(**params).fit(_data())


def test_fit_never_allocates_n_by_n():
    """n = 20000: the fit's peak stays O(n (m + chunk)), nowhere near n^2 float64 (3.2 GB)."""
    n, m, chunk = 20_000, 50, 10
    X, _ = checkerboard(n, random_state=0)
    sel = RFFSelection(
        max_components=200, chunk_size=chunk, n_landmarks=m, sigma=0.15, random_state=0
    )
    tracemalloc.start()
    try:
        sel.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sel.n_selected_ > 0
    assert peak < 10 * n * (m + chunk) * 8  # measured: 32 MB, 3.3 n (m + chunk) float64
    assert peak < n * n * 8 / 50
