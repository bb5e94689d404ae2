"""The parsed cache: each dataset config's arrays, parsed once, at ``<data_dir>/parsed/<name>-<key>.npz``.

The key hashes only what changes the parse (sources, task, dtype, label
options), so different splits or subsamples reuse one parse. Each cache file
also holds the sha256 of the raw files it was parsed from and is used only
while they are the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from rfrepro.data.download import DatasetUnavailable
from rfrepro.data.parse import SourceError, parse_all
from rfrepro.data.sources import fetch_source, file_sha256

__all__ = ["PARSE_KEYS", "PARSE_VERSION", "parsed", "parsed_cache_path"]

log = logging.getLogger(__name__)

# Bump when the parsed arrays change for the same config (parser fixes), so that
# stale caches are not reused.
PARSE_VERSION = 1

# keys of a dataset config that change the parsed arrays (the parsed-cache key)
PARSE_KEYS = ("name", "task", "sources", "dtype", "positive", "keep_classes",
              "categorical_fit")


def parsed_cache_path(cfg: Mapping, data_dir: str | os.PathLike = "data") -> Path:
    """``<data_dir>/parsed/<name>-<key>.npz``; the key hashes what changes the parse."""
    keyed = {k: cfg.get(k) for k in PARSE_KEYS}
    keyed["_version"] = PARSE_VERSION
    blob = json.dumps(keyed, sort_keys=True, default=str).encode()
    return Path(data_dir) / "parsed" / f"{cfg['name']}-{hashlib.sha256(blob).hexdigest()[:12]}.npz"


def _read_npz(path: Path, roles) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    needed = {"classes"} | {f"{p}_{r}" for r in roles for p in ("X", "y")}
    if not needed <= set(arrays):
        raise ValueError(f"lacks arrays {sorted(needed - set(arrays))}")
    return arrays


def _write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    from rfrepro.atomic import atomic_replace

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    atomic_replace(path, write)


def parsed(cfg: Mapping, *, data_dir: str | os.PathLike, mirror: str | None,
           fetch_kw: Mapping) -> dict[str, np.ndarray]:
    """The parsed arrays of one (non-alias) config: from the cache, else fetched and parsed.

    The cache holds the sha256 of the files it was parsed from and is used only
    while they are the same bytes (a replaced file is parsed again).

    Raises
    ------
    DatasetUnavailable
        A file cannot be had, or it did not parse and fetching it again failed
        (the bad copy is deleted).
    ValueError
        A file still does not parse after a fresh fetch (or a file placed by
        hand does not parse), or the labels do not fit the config.
    """
    path = parsed_cache_path(cfg, data_dir)
    roles = list(cfg["sources"])
    files = {role: fetch_source(src, data_dir=data_dir, mirror=mirror, fetch_kw=fetch_kw)
             for role, src in cfg["sources"].items()}
    shas = [file_sha256(p) for ps in files.values() for p in ps]
    if path.is_file():
        try:
            arrays = _read_npz(path, roles)
            if arrays.pop("sources_sha256", np.array([])).tolist() == shas:
                return arrays
            log.info("parsed cache %s was made from other bytes; parsing again", path)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
            # a crash mid-write cannot leave a partial file (temp + rename), but
            # a disk problem or a manual edit can: parse again rather than fail
            log.warning("parsed cache %s is unreadable (%s); parsing again", path, e)
        path.unlink(missing_ok=True)
    try:
        arrays = parse_all(cfg, files)
    except SourceError as first:
        src = cfg["sources"][first.role]
        names = ", ".join(str(p) for p in files[first.role])
        if not src.get("url"):
            raise ValueError(f"dataset {cfg['name']!r}: {names} failed to parse: "
                             f"{first.error}") from first.error
        log.warning("%s failed to parse (%s); fetching it again", names, first.error)
        for p in files[first.role]:
            p.unlink(missing_ok=True)
        try:
            files[first.role] = fetch_source(src, data_dir=data_dir, mirror=mirror,
                                              fetch_kw=fetch_kw)
        except DatasetUnavailable as e:
            # the bad copy is gone and no good one can be had: the data is unavailable
            raise DatasetUnavailable(
                f"{names} failed to parse ({first.error}) and was deleted; "
                f"fetching it again failed:\n{e}", urls=e.urls, path=e.path) from e
        try:
            arrays = parse_all(cfg, files)
        except SourceError as second:
            bad = ", ".join(str(p) for p in files[second.role])
            raise ValueError(
                f"dataset {cfg['name']!r}: {bad} failed to parse after a fresh fetch: "
                f"{second.error} (first attempt: {first.error})") from second.error
        shas = [file_sha256(p) for ps in files.values() for p in ps]
    _write_npz(path, {**arrays, "sources_sha256": np.array(shas)})
    return arrays
