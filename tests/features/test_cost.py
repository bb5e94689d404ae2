"""Each feature map declares the flops and bytes of a transform (``cost(n, dtype)``)."""

import inspect

import numpy as np
import pytest

import rfrepro.features as features
from rfrepro.features import (
    SRHT,
    CompRFF,
    CraftMap,
    ExactKernel,
    Fastfood,
    LeverageRFF,
    Nystroem,
    RandomBinning,
    RandomFourierFeatures,
    RandomMaclaurin,
    RFFSelection,
    StructuredOrthogonalRandomFeatures,
    TensorSketch,
)
from rfrepro.features._base import FeatureMap
from rfrepro.features._cost import TRANSCENDENTAL_FLOPS

COS = TRANSCENDENTAL_FLOPS
X = np.random.RandomState(0).randn(60, 5)


def test_the_cosine_convention_is_the_polynomial_of_the_fused_cosine():
    from rfrepro.features._trig import _COS_COEF

    # range reduction 6, r * r 1, one multiply-add per Horner step, the scale 1
    assert COS == 6 + 1 + 2 * (len(_COS_COEF) - 1) + 1 == 40


@pytest.mark.parametrize("dtype, size", [(np.float64, 8), (np.float32, 4)])
def test_rks_cos_is_a_gemm_and_a_cosine_per_output(dtype, size):
    rff = RandomFourierFeatures(8, sigma=1.0, random_state=0).fit(X)
    # X (10 x 5) @ W (5 x 8); 80 cosines; read X, W, b; write 10 x 8
    assert rff.cost(10, dtype) == {"flops": 2 * 10 * 5 * 8 + COS * 80,
                                   "bytes": size * (10 * 5 + 5 * 8 + 8 + 10 * 8)}


def test_rks_cossin_has_twice_the_outputs_and_no_phases():
    rff = RandomFourierFeatures(8, variant="cossin", sigma=1.0, random_state=0).fit(X)
    assert rff.cost(10) == {"flops": 800 + COS * 160, "bytes": 8 * (50 + 40 + 160)}


def test_fastfood_counts_two_fwhts_per_whole_block():
    ff = Fastfood(12, sigma=1.0, random_state=0).fit(X)  # d = 5 -> d' = 8, 2 blocks
    per_block = 2 * 10 * 8 * 3 + 10 * (5 + 2 * 8)  # two FWHTs (8 log2 8 each), B, G Pi, S
    params = 3 * 2 * 8 * 8 + 2 * 8 * 8  # B, G, S in float64, Pi in int64
    assert ff.cost(10) == {"flops": 2 * per_block + COS * 120,
                           "bytes": 8 * (50 + 120 + 12) + params}


def test_sorf_counts_three_normalised_fwhts_per_block():
    sorf = StructuredOrthogonalRandomFeatures(8, sigma=1.0, random_state=0).fit(X)  # one block, d' = 8
    assert sorf.cost(10)["flops"] == 3 * 10 * 8 * 3 + 7 * 10 * 8 + COS * 80


def test_nystroem_is_a_kernel_block_then_a_square_gemm():
    ny = Nystroem(6, sigma=1.0, random_state=0).fit(X)
    flops = 2 * 10 * 5 * 6 + COS * 60 + 2 * 10 * 6 * 6
    # read X, the landmarks and K_mm^-1/2; write the output (the kernel block stays internal)
    assert ny.cost(10) == {"flops": flops, "bytes": 8 * (50 + 30 + 36 + 60)}


def test_exact_kernel_is_one_kernel_block_against_the_fitted_rows():
    ek = ExactKernel(sigma=1.0, cache_bytes=0).fit(X)
    assert ek.cost(10) == {"flops": 2 * 10 * 5 * 60 + COS * 600, "bytes": 8 * (50 + 300 + 600)}


def test_tensor_sketch_counts_sketches_ffts_and_products():
    ts = TensorSketch(16, degree=2, offset=1.0, random_state=0).fit(X)  # d' = 6 with the offset
    flops = 2 * 10 * 2 * 6 + 2.5 * 20 * 16 * 4 + 6 * 10 * 9 + 2.5 * 10 * 16 * 4
    assert ts.cost(10) == {"flops": flops, "bytes": 8 * (50 + 160) + 2 * 6 * 12}


def test_random_binning_is_linear_in_n_d_and_grids_with_a_sparse_output():
    rb = RandomBinning(7, sigma=1.0, random_state=0).fit(X)
    c = rb.cost(10)
    assert c["flops"] == 4 * 10 * 5 * 7
    params = 5 * 7 * 5 * 8 + rb.bin_keys_.nbytes + rb.grid_starts_.nbytes
    assert c["bytes"] == 8 * 50 + params + 10 * 7 * (8 + 4) + 11 * 4


def test_composed_maps_add_the_down_projection_and_skip_the_intermediate():
    comp = CompRFF(4, random_state=0, sigma=1.0).fit(X)  # 16 RKS features -> 4
    inner = comp.rff_.cost(10)
    assert comp.cost(10) == {"flops": inner["flops"] + 2 * 10 * 16 * 4,
                             "bytes": inner["bytes"] - 8 * 10 * 16 + 8 * (16 * 4 + 10 * 4)}
    srht = CompRFF(4, projection="srht", random_state=0, sigma=1.0).fit(X)
    # SRHT of 16-vectors: 16 signs, a length-16 FWHT, 4 kept and scaled
    assert srht.srht_.cost(10)["flops"] == 10 * (16 + 4) + 10 * 16 * 4
    assert srht.cost(10)["flops"] == srht.rff_.cost(10)["flops"] + 10 * (16 + 4) + 10 * 16 * 4
    craft = CraftMap(TensorSketch(degree=2), n_components=4, n_up_components=16, random_state=0).fit(X)
    assert craft.cost(10)["flops"] == craft.up_.cost(10)["flops"] + 2 * 10 * 16 * 4


def test_leverage_weights_and_selection_frequencies_are_counted():
    unif = LeverageRFF(4, sigma=1.0, mu=1e-3, sampler="unif", random_state=0).fit(X)
    opt = LeverageRFF(4, sigma=1.0, mu=1e-3, oversampling=3, random_state=0).fit(X)
    assert opt.cost(10)["flops"] == unif.cost(10)["flops"] + 2 * 10 * 4
    sel = RFFSelection(max_components=20, chunk_size=5, n_landmarks=10, eps=-np.inf, random_state=0).fit(X)
    assert sel.cost(10)["flops"] == 2 * 10 * 5 * sel.n_selected_ + COS * 10 * 2 * sel.n_selected_


def test_maclaurin_counts_one_gemm_per_factor():
    rm = RandomMaclaurin(16, degree=2, random_state=0).fit(X)
    counts = [16 - int(s) for s in rm.starts_[:-1]]  # features of degree > j
    assert rm.cost(10)["flops"] == sum(2 * 10 * 5 * c + 10 * c for c in counts)


def test_srht_cost_reads_its_index_as_int64():
    s = SRHT(5, 3, random_state=0)
    assert s.cost(2) == {"flops": 2 * 8 + 2 * 8 * 3, "bytes": 8 * (10 + 8 + 6) + 3 * 8}


#: constructor arguments for maps that do not fit 60 x 5 rows with their defaults
SMALL = {
    "CraftMap": {"n_components": 8},
    "LeverageRFF": {"n_components": 4, "mu": 1e-3, "oversampling": 3},
    "RFFSelection": {"max_components": 20, "chunk_size": 5, "n_landmarks": 10, "eps": -np.inf},
    "Nystroem": {"n_components": 20},
    "TEFMG": {"n_components": 4},
    "TEFMS": {"n_components": 4},
}


def _exported_maps():
    return [cls for name in features.__all__
            if inspect.isclass(cls := getattr(features, name)) and issubclass(cls, FeatureMap)]


def test_the_package_exports_the_maps_it_should():
    assert len(_exported_maps()) >= 16  # the iteration below finds them (a guard against an empty list)


@pytest.mark.parametrize("cls", _exported_maps(), ids=lambda c: c.__name__)
def test_every_exported_map_declares_its_cost(cls):
    assert cls.cost is not FeatureMap.cost, f"{cls.__name__} does not declare cost(n, dtype)"
    params = dict(SMALL.get(cls.__name__, {}))
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    fmap = cls(**params).fit(X)
    c64, c32 = fmap.cost(100, np.float64), fmap.cost(100, np.float32)
    assert set(c64) == {"flops", "bytes"} and all(isinstance(v, int) for v in c64.values())
    assert c64["flops"] > 0 and c64["flops"] == c32["flops"]
    # at least the input read once; float32 moves fewer bytes than float64
    assert c64["bytes"] >= 100 * 5 * 8 and c32["bytes"] < c64["bytes"]
    # twice the rows, twice the work (up to the fixed parameters)
    assert fmap.cost(200)["flops"] == pytest.approx(2 * c64["flops"], rel=1e-9)
