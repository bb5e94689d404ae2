"""A dataset config is resolved once into a spec that loading and fingerprinting both take."""

from __future__ import annotations

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

import rfrepro.data as data
import rfrepro.data.schema as schema
from rfrepro.data import DatasetSpec, dataset_spec, fingerprint, load_dataset


def _toy(data_dir) -> dict:
    raw = data_dir / "raw" / "hand"
    raw.mkdir(parents=True)
    rng = np.random.RandomState(0)
    (raw / "toy.libsvm").write_text("".join(
        f"{rng.randn():.5f} " + " ".join(f"{j + 1}:{rng.randn():.5f}" for j in range(3)) + "\n" for _ in range(40)))
    return {"name": "toy", "task": "regression", "sources": {"train": {"file": "hand/toy.libsvm", "format": "libsvm"}},
            "split": {"kind": "random", "test_size": 0.25, "seed": 0}, "subsample": {"n_train": "${n}"}, "n": 20}


def test_a_spec_is_frozen_keyed_by_its_json_and_hands_out_copies():
    cfg = OmegaConf.create({"name": "d", "generator": "checkerboard", "task": "binary", "n_train": "${n}", "n": 30})
    spec = dataset_spec(cfg)
    assert dataset_spec(spec) is spec
    assert spec == dataset_spec({"n": 30, "n_train": 30, "task": "binary", "generator": "checkerboard", "name": "d"})
    assert hash(spec) == hash(dataset_spec(cfg))
    assert spec.key == json.dumps(OmegaConf.to_container(cfg, resolve=True), sort_keys=True)
    spec.config["n_train"] = 1
    assert spec.config["n_train"] == 30
    with pytest.raises(AttributeError):
        spec.key = "{}"


def test_a_bad_config_is_refused_when_resolved():
    with pytest.raises(ValueError, match="task="):
        dataset_spec({"name": "x", "task": "ranking", "sources": {"train": {"url": "http://h/p", "format": "libsvm"}}})


def test_load_and_fingerprint_take_the_config_or_its_spec_alike(tmp_path, monkeypatch):
    cfg = OmegaConf.create(_toy(tmp_path))
    by_cfg = fingerprint(cfg, data_dir=str(tmp_path))
    calls = {"plain_config": 0, "validate_config": 0}
    for name in calls:
        real = getattr(schema, name)
        monkeypatch.setattr(schema, name, lambda *a, _real=real, _name=name: (calls.__setitem__(_name, calls[_name] + 1),
                                                                            _real(*a))[1])
    spec = dataset_spec(cfg)
    assert calls == {"plain_config": 1, "validate_config": 1}
    fp = fingerprint(spec, data_dir=str(tmp_path))
    a = load_dataset(spec, data_dir=str(tmp_path), data_fingerprint=fp)
    assert calls == {"plain_config": 1, "validate_config": 1}  # nothing resolved again below the entry
    assert json.dumps(fp, sort_keys=True) == json.dumps(by_cfg, sort_keys=True)
    assert list(fp["files"]) == ["raw/hand/toy.libsvm"] and fp["variant"] == "toy"
    b = load_dataset(cfg, data_dir=str(tmp_path), data_fingerprint=fp)
    assert a is b  # one memo entry: the config and its spec are the same key
    assert a.X_train.shape == (20, 3)


def test_generated_data_through_a_spec():
    cfg = {"name": "cb", "generator": "checkerboard", "task": "binary", "n_train": 40, "n_test": 10}
    assert fingerprint(dataset_spec(cfg)) == fingerprint(cfg) == {"generated": "checkerboard"}
    assert load_dataset(dataset_spec(cfg), seed=2) is load_dataset(cfg, seed=2)


def test_the_package_exports_only_its_public_names():
    assert {n for n in vars(data) if not n.startswith("__") and not isinstance(getattr(data, n), type(data))} \
        - {"annotations", "json", "Mapping"} == set(data.__all__)
    assert isinstance(dataset_spec({"name": "cb", "generator": "checkerboard", "task": "binary"}), DatasetSpec)
