"""The files a dataset config reads: where they live, fetching them, variants, fingerprints.

A source names either an official ``url`` (cached at ``<data_dir>/raw/HOST/PATH``
and fetched by :func:`rfrepro.data.download.fetch`) or a ``file`` placed by hand
under ``<data_dir>/raw/``. A config's variants are itself (when it has sources)
and then its ``alternatives``, tried in order until one's files can be had.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from rfrepro.data import download
from rfrepro.data.download import DatasetUnavailable
from rfrepro.data.schema import get_dataset_config, plain_config, validate_config
from rfrepro.data.spec import DatasetSpec, resolved_config

__all__ = [
    "fetch_source",
    "file_sha256",
    "fingerprint_file_dataset",
    "fingerprint_file_dataset_memo",
    "first_available",
    "source_files",
    "source_urls",
    "variants",
]

T = TypeVar("T")


def source_urls(src: Mapping) -> list[tuple[str, str | None]]:
    """(url, sha256) of every file a downloadable source reads (an idx source: images, then labels)."""
    out = [(src["url"], src.get("sha256"))]
    if src.get("labels_url"):
        out.append((src["labels_url"], src.get("labels_sha256")))
    return out


def _manual_path(src: Mapping, data_dir: str | os.PathLike) -> Path:
    rel = Path(src["file"])
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"source file {src['file']!r} must be a relative path under raw/")
    return Path(data_dir) / "raw" / rel


def source_files(cfg: Mapping, data_dir: str | os.PathLike = "data") -> dict[str, list[Path]]:
    """Cache paths of every file each source of ``cfg`` reads (whether present or not)."""
    out = {}
    for role, src in cfg["sources"].items():
        if src.get("url"):
            out[role] = [download.cache_path(u, data_dir) for u, _ in source_urls(src)]
        else:
            out[role] = [_manual_path(src, data_dir)]
    return out


def fetch_source(src: Mapping, *, data_dir: str | os.PathLike, mirror: str | None,
                 fetch_kw: Mapping) -> list[Path]:
    """The cached files of one source, fetched first where needed.

    Raises
    ------
    DatasetUnavailable
        A file could not be had (for a file placed by hand: it is not there).
    """
    if not src.get("url"):
        path = _manual_path(src, data_dir)
        if not path.is_file():
            raise DatasetUnavailable(
                f"dataset file unavailable: no public URL is known for {src['file']}\n"
                f"way out: place the file at {path}", urls=[], path=path)
        return [path]
    return [download.fetch(u, data_dir=data_dir, mirror=mirror, sha256=sha, **fetch_kw)
            for u, sha in source_urls(src)]


def variants(cfg: dict, depth: int = 0) -> list[dict]:
    """The configs to try for ``cfg``, in order: itself (if it has sources), then its alternatives."""
    if depth > 5:
        raise ValueError(f"dataset {cfg.get('name')!r}: alternatives nest too deep (a cycle?)")
    out = [cfg] if cfg.get("sources") else []
    for alt in cfg.get("alternatives") or []:
        alt_cfg = get_dataset_config(alt) if isinstance(alt, str) else plain_config(alt)
        validate_config(alt_cfg)
        out += variants(alt_cfg, depth + 1)
    return out


def first_available(top: Mapping, attempt: Callable[[dict], T]) -> T:
    """``attempt(variant)`` for the first variant of ``top`` whose data can be had.

    Raises
    ------
    DatasetUnavailable
        No variant's data could be had: the one variant's error, or one naming
        every variant and the URLs each tried.
    """
    failures = []
    for var in variants(top):
        try:
            return attempt(var)
        except DatasetUnavailable as e:
            failures.append((var["name"], e))
    if not failures:
        raise ValueError(f"dataset {top['name']!r} has no sources and no alternatives")
    if len(failures) == 1:
        raise failures[0][1]
    text = "\n\n".join(f"[{name}] {e}" for name, e in failures)
    raise DatasetUnavailable(
        f"dataset {top['name']!r}: none of its variants "
        f"({', '.join(n for n, _ in failures)}) is available\n\n{text}",
        urls=[u for _, e in failures for u in e.urls], path=failures[0][1].path)


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of ``path``, remembered beside it (``<file>.sha256``) while size and mtime hold."""
    path = Path(path)
    st = path.stat()
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    side = path.with_name(path.name + ".sha256")
    try:
        digest, seen = side.read_text().split(" ", 1)
        if seen.strip() == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    digest = download.sha256_file(path)
    try:
        from rfrepro.atomic import atomic_write_text

        atomic_write_text(side, f"{digest} {stamp}\n")
    except OSError:  # a read-only data folder: just do not remember
        pass
    return digest


def fingerprint_file_dataset(cfg: Mapping | DatasetSpec, *, data_dir: str | os.PathLike = "data",
                             mirror: str | None = None) -> dict:
    """Which variant of ``cfg`` loads and the sha256 of every file it reads.

    Fetches the files when they are not cached yet (the run needs them anyway);
    raises :class:`DatasetUnavailable` as
    :func:`rfrepro.data.registry.load_file_dataset` does.
    """
    top = resolved_config(cfg)
    mirror = mirror or top.get("mirror")

    def attempt(var):
        paths = [p for src in var["sources"].values()
                 for p in fetch_source(src, data_dir=data_dir, mirror=mirror, fetch_kw={})]
        return {"variant": var["name"],
                "files": {Path(p).relative_to(data_dir).as_posix(): file_sha256(p) for p in paths}}

    return first_available(top, attempt)


#: (spec key, data_dir, mirror) -> (fingerprint or None, the unavailability or None, file stamps)
_FINGERPRINTS: dict[tuple, tuple[dict | None, BaseException | None, list]] = {}


def _stamps(data_dir: str, fp: dict) -> list:
    out = []
    for rel in fp.get("files", {}):
        try:
            st = os.stat(os.path.join(data_dir, rel))
            out.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((rel, None, None))
    return out


def fingerprint_file_dataset_memo(spec: DatasetSpec, data_dir: str, mirror: str | None) -> dict:
    """:func:`fingerprint_file_dataset` remembered per process: an unavailable source is tried
    once; a found one is re-checked by size and mtime, so a changed file gets a new fingerprint."""
    key = (spec.key, data_dir, mirror)
    hit = _FINGERPRINTS.get(key)
    if hit is not None:
        fp, err, stamps = hit
        if err is not None:
            raise err
        if _stamps(data_dir, fp) == stamps:
            return fp
    try:
        fp = fingerprint_file_dataset(spec, data_dir=data_dir, mirror=mirror)
    except DatasetUnavailable as e:
        _FINGERPRINTS[key] = (None, e, [])
        raise
    _FINGERPRINTS[key] = (fp, None, _stamps(data_dir, fp))
    return fp
