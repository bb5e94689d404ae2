"""Hydra multirun through hydra-submitit-launcher's local executor (the SLURM launcher's twin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[2]
LAUNCHERS = REPO / "conf" / "hydra" / "launcher"


@pytest.mark.parametrize("name", ["slurm", "local"])
def test_launcher_configs_keep_the_plugins_keys(name):
    """Our launcher files extend the plugin's schema, name only keys it knows, and every key it has."""
    from hydra_plugins.hydra_submitit_launcher import config as plugin

    schema = {"slurm": plugin.SlurmQueueConf, "local": plugin.LocalQueueConf}[name]
    ours = OmegaConf.load(LAUNCHERS / f"{name}.yaml")
    assert list(ours.pop("defaults")) == [f"submitit_{name}", "_self_"]
    assert set(ours) == set(OmegaConf.structured(schema))
    assert ours._target_ == schema._target_
    OmegaConf.merge(OmegaConf.structured(schema), ours)  # types check against the schema


def test_slurm_launcher_documented_choices():
    cfg = OmegaConf.load(LAUNCHERS / "slurm.yaml")
    text = (LAUNCHERS / "slurm.yaml").read_text()
    for key in ("partition", "timeout_min", "cpus_per_task", "array_parallelism"):
        assert f"\n{key}:" in text and key in cfg
        # the line above each documented key is a comment saying what it is
        above = text.split(f"\n{key}:")[0].rsplit("\n", 1)[-1]
        assert above.startswith("#"), key
    assert cfg.max_num_timeout == 0 and cfg.cpus_per_task >= 1


@pytest.mark.slow
def test_submitit_local_multirun_writes_two_records(tmp_path):
    env = {**os.environ, "RFREPRO_RESULTS": str(tmp_path / "results")}
    cmd = [sys.executable, "-m", "rfrepro", "experiment=sun2018/fig1", "seed=0,1", "smoke=true",
           "hydra/launcher=local", "-m"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    # the launcher config extends the plugin's schema: no Hydra deprecation warning
    assert "deprecated" not in proc.stderr and "ConfigStore schema" not in proc.stderr
    records = [json.loads(p.read_text())
               for p in (tmp_path / "results" / "runs" / "sun2018-fig1").glob("*.json")]
    assert sorted(r["seed"] for r in records) == [0, 1]
    assert all(r["status"] == "ok" and r["smoke"] is True for r in records)
    assert {r["executor"] for r in records} == {"hydra:LocalLauncher"}
    assert 0.0 <= min(r["metrics"]["accuracy"] for r in records) <= 1.0
    # submitit kept its logs per job under the sweep folder
    assert list((tmp_path / "results" / "hydra" / "multirun").rglob(".submitit/*/*_log.out"))
