"""Each model says which fitted facts a run records: the runner keeps no list of its own."""

import importlib
from pathlib import Path

import pytest
import yaml

CONF = Path(__file__).resolve().parents[2] / "conf" / "model"
TARGETS = sorted({yaml.safe_load(p.read_text()).get("_target_") for p in CONF.glob("*.yaml")} - {None})


@pytest.mark.parametrize("target", TARGETS)
def test_every_model_declares_its_recorded_attributes(target):
    module, name = target.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    attrs = cls.__dict__.get("recorded_attributes")
    assert isinstance(attrs, tuple) and all(a.endswith("_") for a in attrs), target


def test_the_runner_has_no_default_list():
    import inspect

    from rfrepro.runner import steps as run

    assert '"C_"' not in inspect.getsource(run.fit_and_score)
