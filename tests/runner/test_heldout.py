"""Held-out kernel errors and the final fit timed apart from the lambda search (the leaderboard's protocol)."""

import numpy as np
import pytest
from omegaconf import open_dict

from rfrepro.harness.run.config import compose
from rfrepro.kernels import kernel_matrix
from rfrepro.runner.steps import execute, final_model

BASE = ["dataset=disk_annulus", "dataset.n_train=600", "dataset.n_test=400", "method=nystrom",
        "method.n_components=600", "model=ls", "model.lam=cv", "eval.kernel_error=true",
        "eval.kernel_error_points=300"]


def _run(extra):
    return execute(compose(BASE + extra), {"generated": "disk_annulus"})


def test_nystrom_with_every_training_row_is_exact_on_training_rows_but_not_on_held_out_ones():
    # Nystrom on all 600 training rows reproduces their kernel to rounding; held-out rows show what it
    # does with points it was not fitted on, which is what prediction uses
    narrow = ["kernel.sigma=0.05"]  # a narrow kernel: a held-out row is far from the span of the training rows
    on_train = _run(narrow + ["eval.kernel_error_split=train"])["metrics"]
    held_out = _run(narrow + ["eval.kernel_error_split=test"])["metrics"]
    assert on_train["kerr_fro"] < 1e-6
    assert 0.1 < held_out["kerr_fro"] < 1
    # the train x test block is exact: with every training row a landmark, Z_train Z_test^T = K_nn K_nn^-1 K_nt
    assert held_out["kerr_cross_fro"] < 1e-6
    assert held_out["kerr_rows"] == 300 and "kerr_cross_fro" not in on_train
    # beside the held-out errors, the training rows' own block: the reading of a paper that measures there
    assert held_out["train_kerr_fro"] < 1e-6 and "train_kerr_fro" not in on_train


def test_training_row_errors_beside_held_out_ones_are_those_of_the_training_reading():
    from rfrepro.runner import steps

    rf = ["method=rks_cossin", "method.n_components=64"]
    on_train = _run(rf + ["eval.kernel_error_split=train"])["metrics"]
    assert len(steps._KREF_CACHE) == 1  # one run's blocks only
    held_out = _run(rf + ["eval.kernel_error_split=test"])["metrics"]
    assert len(steps._KREF_CACHE) == 3  # test, train and train x test blocks; the previous run's are gone
    # the same 300 training rows (eval.kernel_error_seed) and the same map: the same numbers
    for k in ("kerr_fro", "kerr_spec"):
        assert held_out[f"train_{k}"] == pytest.approx(on_train[k], rel=1e-10)
    assert held_out["kerr_fro"] != pytest.approx(held_out["train_kerr_fro"], rel=1e-3)  # other rows
    steps._KREF_CACHE.clear()  # built afresh, the blocks give the same errors as the reused ones
    again = _run(rf + ["eval.kernel_error_split=test"])["metrics"]
    for k in ("kerr_fro", "kerr_spec", "kerr_cross_fro", "kerr_cross_spec", "train_kerr_fro"):
        assert again[k] == pytest.approx(held_out[k], rel=1e-12)


def test_cross_block_error_matches_a_direct_computation():
    from rfrepro.metrics import KernelReference, cross_kernel_errors

    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((200, 3)), rng.standard_normal((50, 3))
    W = rng.standard_normal((3, 64))
    Z = lambda X: np.hstack([np.cos(X @ W), np.sin(X @ W)]) / 8.0  # noqa: E731 - 64 frequencies, sigma 1
    K = kernel_matrix("gaussian", A, B, sigma=1.0)
    got = cross_kernel_errors(KernelReference.from_block(K), Z(A), Z(B))
    E = K - Z(A) @ Z(B).T
    assert got["kerr_cross_fro"] == pytest.approx(np.linalg.norm(E) / np.linalg.norm(K), rel=1e-12)
    assert got["kerr_cross_spec"] == pytest.approx(np.linalg.norm(E, 2) / np.linalg.norm(K, 2), rel=1e-6)


def test_final_fit_is_timed_apart_and_equals_the_search_s_choice():
    rec = _run(["method=rks_cossin", "method.n_components=64", "eval.time_final_fit=true",
                "eval.time_repeats=3"])
    t = rec["timings"]
    assert t["final_fit_s"] > 0 and t["train_s"] > 0
    # the repetitions time the final fit (at the chosen lambda), not the search
    assert len(rec["timings_repeats"]["final_fit_s"]) == 3 and "train_s" not in rec["timings_repeats"]
    assert t["final_fit_s"] == min(rec["timings_repeats"]["final_fit_s"])


def test_final_model_refits_at_the_chosen_lambda_with_the_same_coefficients():
    from rfrepro.models import RidgeRegression

    rng = np.random.default_rng(1)
    Z, y = rng.standard_normal((300, 20)), rng.standard_normal(300)
    searched = RidgeRegression(lam="cv").fit(Z, y)
    final = final_model(searched)
    assert final.get_params()["lam"] == searched.lam_
    np.testing.assert_allclose(final.fit(Z, y).predict(Z), searched.predict(Z), rtol=1e-8, atol=1e-10)
    assert final_model(RidgeRegression(lam=0.1).fit(Z, y)) is None  # no search: train_s is its one fit


def test_a_test_split_is_required_for_held_out_errors():
    cfg = compose(BASE + ["eval.kernel_error_split=test"])
    with open_dict(cfg):
        cfg.dataset.n_test = 0
    with pytest.raises(ValueError):
        execute(cfg, {"generated": "disk_annulus"})
