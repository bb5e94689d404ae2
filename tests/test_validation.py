"""Run configs are checked declaratively before anything runs; valid configs are never refused."""

from __future__ import annotations

import inspect

import pytest

import rfrepro.features as features
import rfrepro.models as models
from rfrepro.harness.config import compose, compose_cached, options
from rfrepro.harness.grid import expand
from rfrepro.harness.validate import RUN_CONSTRAINTS, check_run_config

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
