"""Cross-validated sigma / lambda: the grid is widened until the choice is interior."""

from __future__ import annotations

import numpy as np
import pytest

from rfrepro.runner.cv import _edge, _extend, choose, cross_validate

CV = {"sigma_factors": [0.25, 0.5, 1.0], "lams": [1e-2, 1e-1, 1.0], "folds": 3, "n_components": 64,
      "max_rows": 400, "seed": 0}


def _smooth_problem(n: int = 300, seed: int = 0):
    """y = sin(x1) on x ~ N(0, 3^2 I_2): the best Gaussian bandwidth is a few units, far above 0.3."""
    rng = np.random.RandomState(seed)
    X = 3.0 * rng.randn(n, 2)
    y = np.sin(X[:, 0]) + 0.05 * rng.randn(n)
    return X, y


def test_extend_and_edge_follow_the_geometric_grid():
    assert _extend([0.25, 0.5, 1.0], +1) == pytest.approx(2.0)
    assert _extend([0.25, 0.5, 1.0], -1) == pytest.approx(0.125)
    assert _extend([1e-3, 1e-1], -1) == pytest.approx(1e-5)
    assert (_edge(0.25, [0.25, 1.0, 0.5]), _edge(0.5, [0.25, 0.5, 1.0]), _edge(1.0, [0.25, 0.5, 1.0])) == (-1, 0, 1)
    assert _edge(1.0, [1.0]) == 0   # a fixed value is not searched, so not widened


def test_grid_is_widened_until_the_sigma_choice_is_interior():
    X, y = _smooth_problem()
    # sigma0 = 0.3: the initial grid 0.075 .. 0.3 lies far below the optimum
    res = cross_validate(X, y, "regression", 0.3, CV)
    assert res["widened_sigma"] >= 2
    assert res["interior"]
    assert res["sigma_factor_min"] < res["sigma_factor"] < res["sigma_factor_max"]
    assert res["lam_min"] < res["lam"] < res["lam_max"]
    assert res["sigma"] == pytest.approx(res["sigma_factor"] * 0.3)
    # the choice is the grid's minimum, and the grid holds every scored point
    errs = {(g["sigma"], g["lam"]): g["cv_error"] for g in res["grid"]}
    assert min(errs.values()) == pytest.approx(res["cv_error"])
    assert len(errs) == (3 + res["widened_sigma"]) * (3 + res["widened_lam"])


def test_interior_choice_is_not_widened_and_cap_is_recorded():
    X, y = _smooth_problem()
    first = cross_validate(X, y, "regression", 0.3, CV)
    # centred on the optimum found above (its neighbours were scored there too): no widening
    again = cross_validate(X, y, "regression", first["sigma"],
                           {**CV, "sigma_factors": [0.5, 1.0, 2.0],
                            "lams": [first["lam"] / 10, first["lam"], first["lam"] * 10]})
    assert (again["widened_sigma"], again["widened_lam"], again["interior"]) == (0, 0, True)
    assert again["sigma_factor"] == 1.0 and again["sigma"] == pytest.approx(first["sigma"])
    # one extension allowed: 0.25 .. 2 x 0.3 still lies below the optimum, so the choice stays at the edge
    capped = cross_validate(X, y, "regression", 0.3, {**CV, "max_widen": 1})
    assert capped["widened_sigma"] == 1 and not capped["interior"]
    assert capped["sigma_factor"] == capped["sigma_factor_max"] == pytest.approx(2.0)


def test_choice_is_cached_per_key(tmp_path):
    X, y = _smooth_problem(120)
    a = choose(X, y, "regression", 1.0, CV, {"dataset": "toy"}, tmp_path)
    files = list((tmp_path / "cv").glob("*.json"))
    assert len(files) == 1
    assert choose(X + 100.0, y, "regression", 1.0, CV, {"dataset": "toy"}, tmp_path) == a


def test_choice_is_not_reused_for_other_data_bytes_or_other_code(tmp_path, monkeypatch):
    """The cache key holds the data fingerprint (run.py puts it in) and the code version."""
    import rfrepro.runner.cv as cv_module

    X, y = _smooth_problem(120)
    choose(X, y, "regression", 1.0, CV, {"dataset": "toy", "data": {"sha256": "a"}}, tmp_path)
    choose(X, y, "regression", 1.0, CV, {"dataset": "toy", "data": {"sha256": "b"}}, tmp_path)
    assert len(list((tmp_path / "cv").glob("*.json"))) == 2
    monkeypatch.setattr(cv_module, "code_version", lambda: "0+src.other")
    choose(X, y, "regression", 1.0, CV, {"dataset": "toy", "data": {"sha256": "a"}}, tmp_path)
    assert len(list((tmp_path / "cv").glob("*.json"))) == 3


def test_a_run_keys_its_choice_by_its_data_fingerprint(monkeypatch, tmp_path):
    """run.py passes the run's data fingerprint to the CV cache."""
    import rfrepro.runner.steps as run_module

    seen = []
    monkeypatch.setattr("rfrepro.runner.cv.choose", lambda *a, **k: seen.append(a[5]) or
                        {"sigma": 1.0, "lam": 0.1, "grid": []})
    from rfrepro.harness.run.config import compose

    cfg = compose(["experiment=chen2015/fig2", f"paths.results={tmp_path}"])
    assert cfg.cv.enabled
    X = np.random.RandomState(0).randn(50, 2)

    class _DS:
        y_train = np.ones(50)
        task = "regression"
        meta: dict = {}

    run_module.resolve_hyperparameters(cfg, _DS(), X, run_module.Timer(), {"sha256": "abc"})
    assert seen and seen[0]["data"] == {"sha256": "abc"}


def test_random_binning_holdout_search_finds_an_interior_sigma():
    # Wu et al.'s rule: RB's validation error at a fixed R, lambda fixed, sigma on 1e-2 .. 1e2 (factors of 1)
    X, y = _smooth_problem(n=600)
    cv = {"search": "random_binning", "n_components": 32, "sigma_factors": [0.01, 0.1, 1.0, 10.0, 100.0],
          "lams": [0.01], "folds": 5, "holdout": True, "max_rows": 600, "seed": 0}
    res = cross_validate(X, y, "regression", 1.0, cv)
    assert res["interior"] and res["widened_lam"] == 0 and res["lam"] == 0.01
    assert 0.1 <= res["sigma"] <= 10.0
    errs = {g["sigma"]: g["cv_error"] for g in res["grid"]}
    # both ends are worse than the choice: 0.01 puts every row in its own bin, 100 in one bin
    assert errs[0.01] > res["cv_error"] + 0.1 and errs[100.0] > res["cv_error"] + 0.1
    with pytest.raises(ValueError, match="cv.search='svm'"):
        cross_validate(X, y, "regression", 1.0, {**cv, "search": "svm"})
