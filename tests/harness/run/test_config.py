"""Composition of configs and clear errors for unknown names."""

import pytest

from rfrepro.harness.catalog import options
from rfrepro.harness.run.config import compose
from rfrepro.harness.run.grid import resolve_study


@pytest.mark.parametrize("group", ["dataset", "method", "model", "experiment"])
def test_unknown_option_lists_the_valid_ones(group):
    valid = options(group)
    assert valid, group
    with pytest.raises(ValueError) as err:
        compose([f"{group}=no_such_thing"])
    msg = str(err.value)
    assert f"unknown {group} 'no_such_thing'" in msg
    assert valid[0] in msg


def test_every_experiment_composes_with_its_sweep():
    for name in options("experiment"):
        cfg = compose([f"experiment={name}"])
        assert cfg.study.paper == name.split("/")[0], name
        assert "arms" in cfg.sweep or "grid" in cfg.sweep, name


def test_every_method_and_model_config_names_itself():
    for group in ("method", "model"):
        for name in options(group):
            cfg = compose([f"{group}={name}"])
            assert cfg[group].name == name, f"{group}/{name}.yaml has name {cfg[group].name!r}"


def test_every_dataset_config_has_name_and_task():
    for name in options("dataset"):
        cfg = compose([f"dataset={name}"])
        assert cfg.dataset.task in ("regression", "binary", "multiclass"), name


def test_study_names_from_make_targets():
    assert resolve_study("sun2018-fig1") == "sun2018/fig1"
    assert resolve_study("sun2018/fig1") == "sun2018/fig1"
    assert resolve_study("rff-kernel-approx") == "spine/rff-kernel-approx"
    with pytest.raises(ValueError, match="did you mean sun2018-fig"):
        resolve_study("sun2018-fig99")


@pytest.mark.parametrize("overrides, message", [
    (["method.n_componets=512"],
     "Could not override 'method.n_componets': unknown key; did you mean method.n_components?"),
    (["sed=1"], "Could not override 'sed': unknown key; did you mean seed?"),
    (["method=exact", "method.n_components=512"],
     "Could not override 'method.n_components': unknown key; method=exact has name, _target_, kernel, sigma, "
     "cache_bytes"),
])
def test_an_unknown_key_is_one_line_with_the_closest_keys_of_the_config(overrides, message):
    from rfrepro.harness.run.config import UnknownKey, compose_cached

    for how in (compose, compose_cached):  # Hydra's compose and the cached one say the same
        with pytest.raises(UnknownKey) as err:
            how(overrides)
        assert str(err.value) == message
