"""Run configs are checked declaratively before anything runs; valid configs are never refused."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import rfrepro.features as features
import rfrepro.models as models
from rfrepro.harness.catalog import options
from rfrepro.harness.run.config import compose, compose_cached
from rfrepro.harness.run.grid import expand
from rfrepro.harness.run.validate import RUN_CONSTRAINTS, check_run_config

ESTIMATORS = [getattr(mod, name) for mod in (features, models) for name in mod.__all__
              if inspect.isclass(getattr(mod, name)) and hasattr(getattr(mod, name), "get_params")]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_estimator_declares_a_constraint_for_each_parameter(cls):
    from sklearn.utils._param_validation import validate_parameter_constraints

    est = cls()
    assert set(cls._parameter_constraints) == set(est.get_params(deep=False))
    validate_parameter_constraints(cls._parameter_constraints, est.get_params(deep=False), cls.__name__)


@pytest.mark.parametrize("study", options("experiment"))
def test_every_arm_of_every_study_passes(study):
    first = {}
    for job in expand(study, smoke=True):
        first.setdefault(job.arm, job)
    for job in first.values():
        check_run_config(compose_cached(job.overrides))


#: the kernel a feature map needs when the default (Gaussian) is not one it approximates
_KERNEL_FOR = {"random_binning": ["kernel.name=laplacian"],
               **{m: ["kernel.name=polynomial", "+kernel.degree=2", "+kernel.offset=1.0"]
                  for m in ("craft_rm", "craft_ts", "random_maclaurin", "tensor_sketch")}}


@pytest.mark.parametrize("method", options("method"))
def test_every_method_config_passes_with_its_defaults(method):
    # with the default model (lam: cv, the ad-hoc default) and with a fixed lambda
    for model in ([], ["model=krr", "model.lam=0.5"]):
        check_run_config(compose([f"method={method}", *_KERNEL_FOR.get(method, []), *model]))


@pytest.mark.parametrize("model", options("model"))
def test_every_model_config_passes_with_its_defaults(model):
    check_run_config(compose([f"model={model}"]))


@pytest.mark.parametrize("model, mu", [(["model=krr", "model.lam=0.5"], 0.5), ([], 1e-3)])
def test_leverage_mu_is_lambda_unless_lambda_is_chosen_by_cv(model, mu):
    # Sun et al.'s code sets mu = lambda; with lam: cv there is none yet: LeverageRFF's default
    from rfrepro.features.leverage import LeverageRFF

    assert LeverageRFF().mu == 1e-3
    assert compose(["method=rff_opt", *model]).method.mu == mu


@pytest.mark.parametrize("overrides, message", [
    (["seed=-1"], "seed must be an int in the range [0, inf), got -1"),
    (["threads=0"], "threads must be None or an int in the range [1, inf), got 0"),
    (["dtype=float16"], "dtype must be a str among"),
    (["eval.share_fit=3"], "eval.share_fit must be an instance of 'bool'"),
    (["kernel.sigma=medain"], "kernel.sigma must be None, a float in the range (0.0, inf) or a str among"),
    (["method.n_components=0"], "method.n_components must be an int in the range [1, inf), got 0"),
    (["method.variant=sin"], "method.variant must be a str among {"),
    (["+method.n_comps=3"], "method.n_comps is not a parameter of RandomFourierFeatures"),
    (["model=krr", "model.lam=-1"], "model.lam must be a float in the range [0.0, inf) or a str among {'cv'}"),
    (["model.C=0"], "model.C must be None or a float in the range (0.0, inf), got 0"),
    (["method=craft_rm", "+kernel.degree=0", "+kernel.offset=1.0"],
     "method.up.degree must be an int in the range [1, inf), got 0"),
    (["method=tensor_sketch"], "method: Interpolation key 'kernel.degree' not found (does the kernel suit"),
    (["method=random_binning"], "method.kernel must be a str among {'laplacian'}, got 'gaussian'"),
    (["eval.kernel_error_points=1"], "eval.kernel_error_points must be an int in the range [2, inf), got 1"),
    (["++kernel.sigma_scale=0"], "kernel.sigma_scale must be None or a float in the range (0.0, inf), got 0"),
])
def test_a_bad_value_names_its_key_and_what_is_allowed(overrides, message):
    with pytest.raises(ValueError) as err:
        check_run_config(compose(overrides))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_run_table_names_only_keys_the_config_has():
    from omegaconf import OmegaConf

    cfg = compose([])
    missing = [k for k in RUN_CONSTRAINTS if OmegaConf.select(cfg, k, default="__absent__") == "__absent__"
               and not k.startswith("dataset.") and k != "kernel.sigma_scale"]  # the last: added by ++ only
    assert not missing


class NoConstraintMap:
    """A user's scikit-learn-style map without ``_parameter_constraints``: its fit checks, and counts."""

    fits = 0

    def __init__(self, n_components=10, kernel="gaussian", sigma=1.0, variant="cos", random_state=None):
        self.n_components, self.kernel, self.sigma = n_components, kernel, sigma
        self.variant, self.random_state = variant, random_state

    def fit(self, X, y=None):
        type(self).fits += 1
        if not isinstance(self.sigma, float):
            raise TypeError(f"sigma must be a number, got {self.sigma!r}")
        if self.n_components < 1:
            raise ValueError(f"n_components must be positive, got {self.n_components}")
        # landmarks drawn without replacement: needs at least n_components rows
        self.rows_ = np.random.default_rng(0).choice(len(X), self.n_components, replace=False)
        return self

    def transform(self, X):
        return X[:, :1]


def _user_map(*overrides):
    return compose([f"method._target_={__name__}.NoConstraintMap", *overrides])


def test_a_map_without_constraints_is_fitted_on_a_few_rows_once_per_distinct_parameters():
    from rfrepro.harness.run.validate import PROBE_ROWS

    NoConstraintMap.fits = 0
    cfg = _user_map("method.n_components=-5")
    for _ in range(3):  # the same (target, parameters): probed once
        with pytest.raises(ValueError) as err:
            check_run_config(cfg)
        assert str(err.value) == ("method.n_components=-5: NoConstraintMap rejected it: "
                                  "ValueError: n_components must be positive, got -5")
    assert NoConstraintMap.fits == 1
    # sigma: median (the ad-hoc default) is a number by the time a run builds its map;
    # more landmarks than PROBE_ROWS rows is tried again on enough rows, not refused
    for seed in (0, 1):
        check_run_config(_user_map(f"method.n_components={PROBE_ROWS + 4}", f"seed={seed}"))
    assert NoConstraintMap.fits == 1 + 2 * 2


def test_a_user_override_applies_to_the_arms_whose_config_has_its_key(tmp_path, capsys):
    from rfrepro.harness.run.plan import plan

    extra = [f"paths.results={tmp_path}", "method.n_components=3"]
    planned = plan("sun2018/fig1", smoke=True, extra=extra)
    applied = {p.job.arm: p.cfg.method.get("n_components") for p in planned}
    assert applied == {"ksvm": None, "ksvm_bias": None, "rfsvm_unif": 3, "rfsvm_opt": 3,
                       "rfsvm_unif_bias": 3, "rfsvm_opt_bias": 3}
    assert all(("method.n_components=3" in p.job.overrides) == (p.job.arm.startswith("rfsvm")) for p in planned)
    assert capsys.readouterr().err.strip().splitlines() == [
        "note: method.n_components=3 applies to the arms whose config has method.n_components; "
        "ksvm, ksvm_bias run without it"]
    # the study's own exact-kernel runs: the same identities as without the override
    plain = {p.run_id for p in plan("sun2018/fig1", smoke=True, extra=extra[:1]) if p.job.arm.startswith("ksvm")}
    assert plain == {p.run_id for p in planned if p.job.arm.startswith("ksvm")}
    assert not list(tmp_path.rglob("*.json"))  # planning writes nothing
