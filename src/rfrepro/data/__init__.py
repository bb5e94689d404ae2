"""Datasets: generated ones (no download) and downloadable ones (configs in ``conf/dataset/``).

Every dataset is described by a config ``conf/dataset/<name>.yaml``;
:func:`load_dataset` turns one into a :class:`Dataset` and :func:`fingerprint`
says what a run reads. Both take the config or the :class:`DatasetSpec` it
resolves to (:func:`dataset_spec`: resolved and validated once); a config is
resolved once at their entry. The pieces: :mod:`rfrepro.data.spec` (the
spec), :mod:`rfrepro.data.generated` (generated datasets),
:mod:`rfrepro.data.registry` (downloadable ones), :mod:`rfrepro.data.sources`
(their files and fingerprints).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from rfrepro.data.dataset import TASKS, Dataset
from rfrepro.data.download import DatasetUnavailable
from rfrepro.data.spec import DatasetSpec, dataset_spec

__all__ = ["TASKS", "Dataset", "DatasetSpec", "DatasetUnavailable", "dataset_spec", "fingerprint", "load_dataset"]


def load_dataset(
    cfg: Mapping | DatasetSpec,
    *,
    seed: int = 0,
    data_dir: str = "data",
    mirror: str | None = None,
    data_fingerprint: dict | None = None,
) -> Dataset:
    """Load the dataset a ``conf/dataset`` entry (or its :class:`DatasetSpec`) describes.

    Generated datasets draw their training sample with ``seed`` (the run's
    seed) and one fixed test sample (``test_seed``); with a ``split`` of kind
    ``kfold`` they draw one sample of ``n_train`` rows with ``split.seed`` and
    take fold ``split.fold`` of it as the test part. Downloaded datasets are
    fetched into ``data_dir`` (through ``mirror`` when given), parsed once and
    cached; see :mod:`rfrepro.data.registry`. ``data_fingerprint`` (the
    files' sha256, see :func:`fingerprint`) keys the in-process memo, so a
    replaced file is loaded again.
    """
    spec = dataset_spec(cfg)
    if spec.generator is not None:
        from rfrepro.data.generated import load_generated

        return load_generated(spec, int(seed))
    from rfrepro.data.registry import load_file_dataset_memo

    return load_file_dataset_memo(spec, str(data_dir), mirror, json.dumps(data_fingerprint, sort_keys=True))


def fingerprint(cfg: Mapping | DatasetSpec, *, data_dir: str = "data", mirror: str | None = None) -> dict:
    """What a run reads, for its identity: ``{"generated": name}`` for generated data,
    else the variant that loads and the sha256 of each of its files.

    Remembered per process; an unavailable source raises
    :class:`DatasetUnavailable` (and is tried once per process).
    """
    spec = dataset_spec(cfg)
    if spec.generator is not None:
        return {"generated": spec.generator}
    from rfrepro.data.sources import fingerprint_file_dataset_memo

    return fingerprint_file_dataset_memo(spec, str(data_dir), mirror)
