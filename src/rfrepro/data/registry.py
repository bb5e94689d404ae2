"""Loading a downloadable dataset: a ``conf/dataset`` config to a split, preprocessed :class:`Dataset`.

The pieces, one module each: the config schema (:mod:`rfrepro.data.schema`), its
files and variants (:mod:`rfrepro.data.sources`), the parsed arrays
(:mod:`rfrepro.data.cache`), splits and subsamples (:mod:`rfrepro.data.splits`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

import numpy as np

from rfrepro.data.cache import parsed
from rfrepro.data.dataset import Dataset
from rfrepro.data.preprocess import preprocess
from rfrepro.data.sources import first_available, source_files, source_urls
from rfrepro.data.spec import DatasetSpec, resolved_config
from rfrepro.data.splits import default_split, split_arrays, subsample

__all__ = ["load_file_dataset", "load_file_dataset_memo"]


def _load_variant(var: dict, top: Mapping, *, data_dir, mirror, fetch_kw) -> Dataset:
    arrays = parsed(var, data_dir=data_dir, mirror=mirror, fetch_kw=fetch_kw)
    roles = list(var["sources"])
    split = top.get("split") or var.get("split") or default_split(var)
    Xtr, ytr, Xte, yte = split_arrays(arrays, roles, split, var["task"], var["name"])
    sub = top.get("subsample") or var.get("subsample") or {}
    seed = int(sub.get("seed") or 0)
    rng = np.random.default_rng(seed)
    Xtr, ytr = subsample(Xtr, ytr, sub.get("n_train"), rng, top["name"], "train")
    Xte, yte = subsample(Xte, yte, sub.get("n_test"), rng, top["name"], "test")
    urls = [u for src in var["sources"].values() if src.get("url") for u, _ in source_urls(src)]
    files = [str(p.relative_to(data_dir)) for ps in source_files(var, data_dir).values() for p in ps]
    meta = {
        "variant": var["name"],
        "source_urls": " ".join(dict.fromkeys(urls)),
        "files": " ".join(dict.fromkeys(files)),
        "split": str(split.get("kind", "random")),
        "n_train": int(Xtr.shape[0]),
        "n_test": 0 if Xte is None else int(Xte.shape[0]),
        "subsample_seed": seed,
        "dtype": str(Xtr.dtype),
    }
    if split.get("kind") == "kfold":
        meta.update(folds=int(split["folds"]), fold=int(split["fold"]),
                    split_seed=int(split.get("seed", 0)), pool=str(split.get("pool", "all")))
    if var["task"] != "regression":
        meta["n_classes"] = int(len(arrays["classes"]))
        meta["classes"] = ",".join(arrays["classes"].tolist())
    if var.get("note"):
        meta["note"] = " ".join(str(var["note"]).split())
    ds = Dataset(top["name"], var["task"], Xtr, ytr, Xte, yte, meta)
    how = top.get("preprocess") or var.get("preprocess") or "none"
    return preprocess(ds, how)


def load_file_dataset(
    cfg: Mapping | DatasetSpec,
    *,
    data_dir: str | os.PathLike = "data",
    mirror: str | None = None,
    **fetch_kw,
) -> Dataset:
    """Load a downloadable dataset described by a ``conf/dataset`` config.

    Parameters
    ----------
    cfg : mapping or DatasetSpec
        The dataset config (schema in :mod:`rfrepro.data.schema`), or the spec
        it resolves to (:func:`rfrepro.data.spec.dataset_spec`).
    data_dir : str or path-like
        Cache root: raw files under ``raw/``, parsed arrays under ``parsed/``.
    mirror : str, optional
        Mirror base URL (``http://`` or ``file://``); else the config's ``mirror``
        key, else ``$RFREPRO_MIRROR``.
    **fetch_kw
        Passed to :func:`rfrepro.data.download.fetch` (timeout, retries, backoff,
        progress).

    Returns
    -------
    Dataset
        Split, subsampled and preprocessed; ``meta`` says which variant loaded,
        from which URLs and files, and the sizes after subsampling.

    Raises
    ------
    DatasetUnavailable
        No variant's files could be had; the message names the URLs tried and
        how to provide the files.
    ValueError
        A bad config, a checksum mismatch, or a file that does not parse even
        after a fresh fetch.
    """
    top = resolved_config(cfg, generated_ok=True)
    if "generator" in top:
        raise ValueError(f"dataset {top.get('name')!r} is generated; load it with "
                         "rfrepro.data.load_dataset")
    mirror = mirror or top.get("mirror")
    return first_available(top, lambda var: _load_variant(var, top, data_dir=data_dir, mirror=mirror,
                                                           fetch_kw=fetch_kw))


@functools.lru_cache(maxsize=2)
def load_file_dataset_memo(spec: DatasetSpec, data_dir: str, mirror: str | None, fingerprint_json: str) -> Dataset:
    """:func:`load_file_dataset` remembered in memory, so the runs of a sweep in one worker do not
    re-read the cache; ``fingerprint_json`` (the files' sha256) is part of the key, so a replaced
    file is loaded again."""
    return load_file_dataset(spec, data_dir=data_dir, mirror=mirror)
