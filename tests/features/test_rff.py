"""Tests of random Fourier features (Rahimi and Recht 2007) in both forms."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler

from rfrepro.features import _base
from rfrepro.features._trig import FLOAT32_ABS_ERROR
from rfrepro.features.orthogonal import OrthogonalRandomFeatures
from rfrepro.features.rff import VARIANTS, RandomFourierFeatures
from rfrepro.features.rff_selection import RFFSelection
from rfrepro.kernels import gaussian_kernel, laplacian_kernel

# bandwidths that put the kernel values of 5-d standard normal data in the bulk of (0, 1)
SIGMA = {"gaussian": 2.0, "laplacian": 5.0}
KERNEL_FUNCS = {"gaussian": gaussian_kernel, "laplacian": laplacian_kernel}


def _data(n: int = 60, d: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).standard_normal((n, d))


def _rff(n_out: int, kernel: str, variant: str, seed: int) -> RandomFourierFeatures:
    """A map with ``n_out`` output columns (cossin: n_out / 2 frequencies)."""
    n_freq = n_out if variant == "cos" else n_out // 2
    return RandomFourierFeatures(
        n_freq, kernel=kernel, sigma=SIGMA[kernel], variant=variant, random_state=seed
    )


# ---------------------------------------------------------------- convergence to the kernel


def _mean_rel_fro_errors(n: int, n_seeds: int, kernel: str, variant: str, dims) -> np.ndarray:
    X = _data(n)
    K = KERNEL_FUNCS[kernel](X, sigma=SIGMA[kernel])
    errs = np.empty((len(dims), n_seeds))
    for i, D in enumerate(dims):
        for s in range(n_seeds):
            Z = _rff(D, kernel, variant, seed=1000 * i + s).fit_transform(X)
            errs[i, s] = np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)
    return errs.mean(axis=1)


def _loglog_slope(dims, errs) -> float:
    return float(np.polyfit(np.log(dims), np.log(errs), 1)[0])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_kernel_error_falls_like_inverse_sqrt_D(kernel, variant):
    # E ||K - ZZ^T||_F^2 is exactly proportional to 1/D (a mean of D iid terms),
    # so the error itself falls with slope -1/2 on a log-log plot
    dims = 2 ** np.arange(6, 13)
    errs = _mean_rel_fro_errors(200, 3, kernel, variant, dims)
    slope = _loglog_slope(dims, errs)
    assert -0.6 < slope < -0.4, (slope, errs)
    assert errs[-1] < 0.06


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_kernel_error_slope_full_size(kernel, variant):
    dims = 2 ** np.arange(6, 13)
    errs = _mean_rel_fro_errors(400, 5, kernel, variant, dims)
    slope = _loglog_slope(dims, errs)
    assert -0.6 < slope < -0.4, (slope, errs)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_feature_products_are_unbiased(kernel, variant):
    X = _data(15)
    K = KERNEL_FUNCS[kernel](X, sigma=SIGMA[kernel])
    n_seeds = 300
    G = np.stack(
        [(lambda Z: Z @ Z.T)(_rff(64, kernel, variant, s).fit_transform(X)) for s in range(n_seeds)]
    )
    mean = G.mean(axis=0)
    stderr = G.std(axis=0, ddof=1) / np.sqrt(n_seeds)
    # entrywise within 5 standard errors (cossin's diagonal is exactly 1: stderr 0)
    assert np.all(np.abs(mean - K) <= 5.0 * stderr + 1e-12)
    single = np.abs(G[0] - K).max()
    assert np.abs(mean - K).max() < min(0.03, single / 5.0)


# ---------------------------------------------------------------- the map itself


def test_cos_variant_is_the_rks_formula():
    X = _data(30, 4)
    rff = RandomFourierFeatures(50, sigma=1.7, random_state=0).fit(X)
    W, b = rff.random_weights_, rff.random_offset_
    assert W.shape == (4, 50) and b.shape == (50,)
    assert np.all((b >= 0) & (b < 2 * np.pi))
    Z = rff.transform(X)
    assert Z.shape == (30, 50) and rff.n_features_out_ == 50
    np.testing.assert_allclose(Z, np.sqrt(2 / 50) * np.cos(X @ W + b), rtol=0, atol=1e-14)


def test_cossin_variant_is_cos_and_sin_pairs():
    X = _data(30, 4)
    rff = RandomFourierFeatures(50, sigma=1.7, variant="cossin", random_state=0).fit(X)
    assert not hasattr(rff, "random_offset_")
    Z = rff.transform(X)
    assert Z.shape == (30, 100) and rff.n_features_out_ == 100
    P = X @ rff.random_weights_
    expected = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(50)
    np.testing.assert_allclose(Z, expected, rtol=0, atol=1e-14)
    # each row has unit norm: z(x).z(x) = k(x, x) = 1 exactly
    np.testing.assert_allclose((Z * Z).sum(axis=1), 1.0, rtol=1e-13)


def test_cos_variant_equals_sklearn_rbf_sampler():
    # same spectral draw in the same order: N(0, 1/sigma^2) weights, then U[0, 2 pi) offsets
    X = _data(40, 6)
    sigma = 1.3
    ours = RandomFourierFeatures(128, sigma=sigma, random_state=7).fit_transform(X)
    ref = RBFSampler(gamma=1 / (2 * sigma**2), n_components=128, random_state=7).fit_transform(X)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_frequencies_follow_the_spectral_density(kernel):
    sigma = 2.5
    W = RandomFourierFeatures(20_000, kernel=kernel, sigma=sigma, random_state=0).fit(
        _data(5, 5)
    ).random_weights_
    if kernel == "gaussian":
        assert W.std() == pytest.approx(1 / sigma, rel=0.01)
        assert abs(W.mean()) < 0.01 / sigma
    else:
        # Cauchy(0, 1/sigma): |W| has median 1/sigma and quartiles tan(pi/8)/sigma, tan(3pi/8)/sigma
        q = np.quantile(np.abs(W), [0.25, 0.5, 0.75])
        expected = np.tan(np.pi * np.array([1, 2, 3]) / 8) / sigma
        np.testing.assert_allclose(q, expected, rtol=0.02)


# ---------------------------------------------------------------- seeds and dtypes


@pytest.mark.parametrize("variant", VARIANTS)
def test_transform_deterministic_under_seed(variant):
    X = _data(25, 3)
    Z1 = RandomFourierFeatures(40, variant=variant, random_state=3).fit_transform(X)
    Z2 = RandomFourierFeatures(40, variant=variant, random_state=3).fit_transform(X)
    Z3 = RandomFourierFeatures(40, variant=variant, random_state=4).fit_transform(X)
    np.testing.assert_array_equal(Z1, Z2)
    assert np.abs(Z1 - Z3).max() > 0.1


def test_transform_is_repeatable_after_fit():
    X = _data(25, 3)
    rff = RandomFourierFeatures(40, random_state=0).fit(X)
    np.testing.assert_array_equal(rff.transform(X), rff.transform(X))
    np.testing.assert_array_equal(rff.transform(X), rff.fit_transform(X))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_float32_stays_float32_and_is_close(kernel, variant):
    X = _data(50, 5)
    rff64 = _rff(256, kernel, variant, seed=0)
    rff32 = _rff(256, kernel, variant, seed=0)
    Z64 = rff64.fit_transform(X)
    Z32 = rff32.fit_transform(X.astype(np.float32))
    assert Z64.dtype == np.float64 and Z32.dtype == np.float32
    assert rff32.random_weights_.dtype == np.float32
    # the float32 map is the float64 map with its frequencies rounded to float32
    np.testing.assert_allclose(Z32, Z64, rtol=0, atol=1e-4 * np.abs(Z64).max())
    # float64 input through the float32-fitted map gives float64 out
    assert rff32.transform(X).dtype == np.float64


@pytest.mark.parametrize("variant", VARIANTS)
def test_float32_transform_is_the_formula_within_the_kernel_bound(variant):
    # the float32 kernels: at most FLOAT32_ABS_ERROR from the exact cos / sin of
    # the float32 projection, times the 1 / sqrt(D) scale
    X = (_data(200, 6) * 3).astype(np.float32)
    rff = RandomFourierFeatures(300, sigma=0.5, variant=variant, random_state=0).fit(X)
    Z = rff.transform(X)
    assert Z.dtype == np.float32
    P = (X @ rff.random_weights_).astype(np.float64)
    if variant == "cos":
        arg = (X @ rff.random_weights_ + rff.random_offset_).astype(np.float64)
        expected = np.sqrt(2 / 300) * np.cos(arg)
        scale = np.sqrt(2 / 300)
    else:
        expected = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(300)
        scale = np.sqrt(1 / 300)
    assert np.abs(P).max() > 20  # the reduction is exercised, not just the polynomial
    # + one float32 rounding of the scaled result
    bound = scale * (FLOAT32_ABS_ERROR + np.finfo(np.float32).eps)
    assert np.abs(Z - expected).max() <= bound


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("n_components", [0, -3, 2.5, "10", True])
def test_bad_n_components(n_components):
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(n_components).fit(_data(10, 2))


def test_numpy_integer_n_components_accepted():
    rff = RandomFourierFeatures(np.int64(12), random_state=0).fit(_data(10, 2))
    assert rff.transform(_data(3, 2)).shape == (3, 12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_rejected(bad):
    X = _data(10, 3)
    X[4, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        RandomFourierFeatures(8).fit(X)
    rff = RandomFourierFeatures(8).fit(_data(10, 3))
    with pytest.raises(ValueError, match="NaN|infinity"):
        rff.transform(X)


def test_transform_with_other_number_of_features():
    rff = RandomFourierFeatures(8, random_state=0).fit(_data(10, 3))
    with pytest.raises(ValueError, match="features"):
        rff.transform(_data(10, 4))


def test_bad_variant_lists_valid_ones():
    with pytest.raises(ValueError, match=r"'variant' .* among \{'cos', 'cossin'\}\. Got 'sincos'"):
        RandomFourierFeatures(8, variant="sincos").fit(_data(10, 3))


@pytest.mark.parametrize("kernel", ["polynomial", "rbf"])
def test_unknown_kernel_lists_valid_ones(kernel):
    with pytest.raises(ValueError, match=r"'kernel' .* among \{'gaussian', 'laplacian'\}\. Got"):
        RandomFourierFeatures(8, kernel=kernel).fit(_data(10, 3))


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.inf, np.nan])
def test_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        RandomFourierFeatures(8, sigma=sigma).fit(_data(10, 3))


def test_unknown_sigma_rule_lists_valid_ones():
    with pytest.raises(ValueError, match=r"'sigma' .* or a str among \{'median', 'mean'\}\. Got 'silverman'"):
        RandomFourierFeatures(8, sigma="silverman").fit(_data(10, 3))


@pytest.mark.parametrize("rule", ["median", "mean"])
@pytest.mark.parametrize("kernel, metric", [("gaussian", "euclidean"), ("laplacian", "cityblock")])
def test_sigma_rules_equal_numpy(rule, kernel, metric):
    X = _data(80, 4)
    iu = np.triu_indices(80, k=1)
    diff = X[:, None, :] - X[None, :, :]
    if metric == "euclidean":
        dist = np.sqrt((diff**2).sum(-1))[iu]
    else:
        dist = np.abs(diff).sum(-1)[iu]
    expected = np.median(dist) if rule == "median" else np.mean(dist)
    rff = RandomFourierFeatures(8, kernel=kernel, sigma=rule, random_state=0).fit(X)
    assert rff.sigma_ == pytest.approx(expected, rel=1e-12)
    # the rule's value is used to scale the frequencies
    ref = RandomFourierFeatures(8, kernel=kernel, sigma=expected, random_state=0).fit(X)
    np.testing.assert_allclose(rff.random_weights_, ref.random_weights_, rtol=1e-12)


def test_sigma_rule_on_identical_rows():
    with pytest.raises(ValueError, match="all equal"):
        RandomFourierFeatures(8, sigma="median").fit(np.ones((5, 2)))


# ---------------------------------------------------------------- row chunking


def _count_chunks(monkeypatch, rff, chunked: bool = True) -> list[int]:
    """The row counts of ``rff``'s transform chunks; ``chunked``: in chunks of TRANSFORM_CHUNK_VALUES values."""
    if chunked:  # RKS writes in place and transforms in one chunk unless told otherwise
        monkeypatch.setattr(type(rff), "_transform_chunk_values", _base.FeatureMap._transform_chunk_values)
    sizes: list[int] = []
    inner = type(rff)._transform_chunk

    def spy(self, X, out):
        sizes.append(X.shape[0])
        return inner(self, X, out)

    monkeypatch.setattr(type(rff), "_transform_chunk", spy)
    return sizes


@pytest.mark.parametrize("variant", VARIANTS)
def test_row_chunking_follows_chunk_values(monkeypatch, variant):
    # TRANSFORM_CHUNK_VALUES = 64 rows x 32 outputs: 300 rows go in chunks of 64 (also row_chunks' floor)
    X = _data(300, 5)
    rff = RandomFourierFeatures(32 if variant == "cos" else 16, variant=variant, random_state=0)
    rff.fit(X)
    monkeypatch.setattr(_base, "TRANSFORM_CHUNK_VALUES", 64 * 32)
    sizes = _count_chunks(monkeypatch, rff)
    Z = rff.transform(X)
    assert sizes == [64, 64, 64, 64, 44], "TRANSFORM_CHUNK_VALUES is not honoured by FeatureMap.transform"
    rows = np.vstack([rff.transform(X[i : i + 1]) for i in range(X.shape[0])])
    np.testing.assert_allclose(Z, rows, rtol=0, atol=1e-13)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("make", [
    lambda variant: RandomFourierFeatures(32, variant=variant, random_state=0),
    lambda variant: OrthogonalRandomFeatures(32, variant=variant, random_state=0),
    lambda variant: RFFSelection(32, chunk_size=4, variant=variant, random_state=0),
], ids=["rks", "orf", "rff_selection"])
def test_dense_projection_maps_transform_in_one_chunk(monkeypatch, variant, make):
    # RKS, ORF and RFF selection allocate nothing beyond their output (project_fourier_into): their rows are not
    # split, whatever TRANSFORM_CHUNK_VALUES says, and each row's features are those of cos(x W + b)
    X = _data(300, 5)
    rff = make(variant).fit(X)
    monkeypatch.setattr(_base, "TRANSFORM_CHUNK_VALUES", 64 * 32)
    sizes = _count_chunks(monkeypatch, rff, chunked=False)
    Z = rff.transform(X)
    assert sizes == [300]
    monkeypatch.undo()
    np.testing.assert_allclose(Z, np.vstack([rff.transform(X[i : i + 1]) for i in range(X.shape[0])]), rtol=0,
                               atol=1e-13)
    P = X @ rff.random_weights_
    D = P.shape[1]
    want = (np.sqrt(2 / D) * np.cos(P + rff.random_offset_) if variant == "cos"
            else np.sqrt(1 / D) * np.hstack([np.cos(P), np.sin(P)]))
    np.testing.assert_allclose(Z, want, rtol=0, atol=1e-13)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunked_transform_equals_row_by_row(monkeypatch, variant, dtype):
    # forces small chunks of the transform's own output
    X = _data(300, 5).astype(dtype)
    rff = RandomFourierFeatures(32, variant=variant, random_state=0).fit(X)
    n_out = rff.n_features_out_
    monkeypatch.setattr(_base, "TRANSFORM_CHUNK_VALUES", 64 * n_out)
    sizes = _count_chunks(monkeypatch, rff)
    Z = rff.transform(X)
    assert sizes == [64, 64, 64, 64, 44]
    rows = np.vstack([rff.transform(X[i : i + 1]) for i in range(X.shape[0])])
    assert Z.dtype == dtype
    tol = 1e-13 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(Z, rows, rtol=0, atol=tol)


def test_fortran_ordered_input_gives_same_features():
    X = _data(200, 7)
    rff = RandomFourierFeatures(33, random_state=0).fit(X)
    np.testing.assert_allclose(rff.transform(np.asfortranarray(X)), rff.transform(X), atol=1e-14)


def test_laplacian_direct_formula():
    # the Laplacian map uses Cauchy frequencies and the same cos(Wx + b) formula
    X = _data(20, 3)
    rff = RandomFourierFeatures(30, kernel="laplacian", sigma=2.0, random_state=1).fit(X)
    W = np.random.RandomState(1).standard_cauchy((3, 30)) / 2.0
    np.testing.assert_allclose(rff.random_weights_, W, rtol=1e-15)
    Z = rff.transform(X)
    expected = np.sqrt(2 / 30) * np.cos(X @ W + rff.random_offset_)
    np.testing.assert_allclose(Z, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cls", [RandomFourierFeatures, OrthogonalRandomFeatures])
def test_rks_features_do_not_depend_on_the_thread_count(variant, dtype, cls):
    # row blocks, one per thread, each a one-thread GEMM (at large shapes a two-thread GEMM rounds
    # differently; at this one it does not, so this pins the row split and BLAS's restored limit)
    numba = pytest.importorskip("numba")
    from threadpoolctl import threadpool_info

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two numba threads")
    X = _data(301, 40).astype(dtype)  # 301 x 512 outputs: above PARALLEL_MIN_VALUES, blocks of 150 and 151 rows
    rff = cls(512 if variant == "cos" else 256, variant=variant, random_state=0).fit(X)
    blas_before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = rff.transform(X)
        numba.set_num_threads(2)
        two = rff.transform(X)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    assert [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] == blas_before
