"""Fetching dataset files into the local cache, from a mirror or the official URL.

The file behind ``https://HOST/PATH`` is cached at ``<data_dir>/raw/HOST/PATH``.
A mirror is a base URL (``http://...`` or ``file://...``) laid out the same way
(``<mirror>/HOST/PATH``), like the tree ``wget --mirror`` writes. The mirror
comes from the ``mirror`` argument, else the environment variable
``RFREPRO_MIRROR``; when one is set it is tried before the official URL.

Every transfer goes to a temporary file in the destination folder and is moved
into place with :func:`os.replace` only once it is complete (and its sha256
matches, when one is given), so the cache never holds half a file.
"""

from __future__ import annotations

import bz2
import fnmatch
import gzip
import hashlib
import io
import lzma
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import requests
from tqdm.auto import tqdm

__all__ = [
    "MIRROR_ENV",
    "DatasetUnavailable",
    "cache_path",
    "fetch",
    "mirror_url",
    "open_decompressed",
    "open_zip_member",
    "resolve_mirror",
    "sha256_file",
    "zip_members",
]

MIRROR_ENV = "RFREPRO_MIRROR"
CHUNK = 1 << 20

# (connect, read) seconds. The connect timeout is short on purpose: an
# unreachable official host should fail fast so that the error (or the mirror)
# is reached quickly; the read timeout allows slow but alive servers.
DEFAULT_TIMEOUT = (5.0, 60.0)
# HTTP statuses worth another try; anything else (404, 403, ...) is final.
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class DatasetUnavailable(RuntimeError):
    """No copy of a dataset file could be had: neither cached, mirrored nor downloadable.

    The runner catches this to mark experiments "not run: data unavailable".
    ``urls`` lists the URLs tried, ``path`` the cache path where a manually
    obtained copy can be placed.
    """

    def __init__(self, message: str, *, urls: list[str] | None = None, path: Path | None = None):
        super().__init__(message)
        self.urls = list(urls or [])
        self.path = path


class _Transient(Exception):
    """A failure another attempt may fix (timeout, dropped connection, 5xx)."""


class _Missing(Exception):
    """A final failure for this URL (host unreachable, 404, file absent)."""


def resolve_mirror(mirror: str | None = None) -> str | None:
    """Return the mirror base to use: ``mirror`` if given, else ``$RFREPRO_MIRROR``, else None.

    A plain folder path (no ``scheme://``) is accepted and turned into a
    ``file://`` URL, since that is what people type.
    """
    base = mirror if mirror else os.environ.get(MIRROR_ENV, "")
    base = str(base or "").strip().rstrip("/")
    if base and "://" not in base:
        base = Path(base).expanduser().resolve().as_uri()
    return base or None


def _split_url(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"dataset url {url!r} must be an http:// or https:// URL")
    path = urllib.parse.unquote(parts.path).lstrip("/")
    if not path or path.endswith("/"):
        raise ValueError(f"dataset url {url!r} does not name a file")
    if ".." in Path(path).parts:
        raise ValueError(f"dataset url {url!r} climbs out of its host folder")
    return parts.netloc, path


def cache_path(url: str, data_dir: str | os.PathLike = "data") -> Path:
    """Where the file behind ``url`` lives in the cache: ``data_dir/raw/HOST/PATH``."""
    host, path = _split_url(url)
    return Path(data_dir) / "raw" / host / path


def mirror_url(url: str, mirror: str) -> str:
    """Map the official ``https://HOST/PATH`` (or ``http://``) to ``<mirror>/HOST/PATH``."""
    host, _ = _split_url(url)
    # keep the path exactly as written (percent-escapes included) so that
    # ``~user`` and the like reach the mirror unchanged
    raw_path = urllib.parse.urlsplit(url).path.lstrip("/")
    return f"{mirror.rstrip('/')}/{host}/{raw_path}"


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def temp_beside(dest: Path) -> tuple[int, Path]:
    """Create a temp file in ``dest``'s folder (same file system, so os.replace is atomic).

    mkstemp makes it private (0600); it gets the usual umask-based mode instead,
    so that a cache shared between users stays readable.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)
    return fd, Path(name)


def _progress(total: int | None, desc: str, show: bool | None):
    if show is None:
        show = sys.stderr.isatty()
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc,
                disable=not show, leave=False)


def _copy_to_temp(
    chunks_from: Callable[[], tuple[int | None, object]],
    dest: Path,
    desc: str,
    show: bool | None,
) -> tuple[Path, str]:
    """Write the chunks of one transfer to a temp file beside ``dest``; return it and its sha256.

    ``chunks_from`` opens the source and returns (expected length or None, iterable
    of byte chunks). A short transfer raises :class:`_Transient` and leaves no file.
    """
    fd, tmp = temp_beside(dest)
    h = hashlib.sha256()
    n = 0
    try:
        with os.fdopen(fd, "wb") as out:
            total, chunks = chunks_from()
            with _progress(total, desc, show) as bar:
                for block in chunks:
                    out.write(block)
                    h.update(block)
                    n += len(block)
                    bar.update(len(block))
        if total is not None and n != total:
            raise _Transient(f"transfer ended after {n} of {total} bytes")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, h.hexdigest()


def _http_chunks(url: str, session: requests.Session, timeout: tuple[float, float]):
    def opener():
        try:
            # identity: the bytes on disk must be the served file, so that the
            # sha256 and the Content-Length refer to the same thing
            resp = session.get(url, stream=True, timeout=timeout,
                               headers={"Accept-Encoding": "identity"})
        except requests.exceptions.ReadTimeout as e:
            raise _Transient(f"no answer within {timeout[1]} s") from e
        except (requests.exceptions.ConnectionError, requests.exceptions.InvalidURL) as e:
            # refused, DNS failure or connect timeout: the host is not reachable
            # from here, so retrying only delays the error
            raise _Missing(f"cannot connect ({_short(e)})") from e
        except requests.exceptions.RequestException as e:
            raise _Transient(_short(e)) from e
        if resp.status_code in TRANSIENT_STATUS:
            resp.close()
            raise _Transient(f"HTTP {resp.status_code}")
        if resp.status_code != 200:
            resp.close()
            raise _Missing(f"HTTP {resp.status_code}")
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None

        def chunks():
            try:
                yield from resp.raw.stream(CHUNK, decode_content=False)
            except Exception as e:  # urllib3 / requests / socket errors mid-transfer
                raise _Transient(f"transfer interrupted ({_short(e)})") from e
            finally:
                resp.close()

        return total, chunks()

    return opener


def _file_chunks(url: str):
    def opener():
        parts = urllib.parse.urlsplit(url)
        path = Path(urllib.request.url2pathname(parts.path))
        if parts.netloc not in ("", "localhost"):
            raise _Missing(f"file:// URL with a host ({parts.netloc!r}) is not supported")
        if not path.is_file():
            raise _Missing("no such file")
        f = open(path, "rb")  # noqa: SIM115 - closed by the generator below
        total = path.stat().st_size

        def chunks():
            with f:
                yield from iter(lambda: f.read(CHUNK), b"")

        return total, chunks()

    return opener


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def _transfer(
    url: str,
    dest: Path,
    *,
    session: requests.Session,
    timeout: tuple[float, float],
    retries: int,
    backoff: float,
    progress: bool | None,
) -> tuple[Path, str]:
    """Fetch ``url`` to a temp file beside ``dest``, retrying transient failures."""
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme == "file":
        opener = _file_chunks(url)
    elif scheme in ("http", "https"):
        opener = _http_chunks(url, session, timeout)
    else:
        raise _Missing(f"unsupported URL scheme {scheme!r} (use http://, https:// or file://)")
    attempt = 0
    while True:
        try:
            return _copy_to_temp(opener, dest, dest.name, progress)
        except _Transient as e:
            if attempt >= retries:
                raise _Missing(f"{e} (after {attempt + 1} attempts)") from e
            time.sleep(backoff * 2**attempt)
            attempt += 1


def _verify_cached(dest: Path, sha256: str | None) -> bool:
    """True when the cached file can be used as is; a file with the wrong checksum is removed."""
    if not dest.is_file():
        return False
    if sha256 is None or sha256_file(dest) == sha256.lower():
        return True
    dest.unlink()
    return False


def fetch(
    url: str,
    *,
    data_dir: str | os.PathLike = "data",
    mirror: str | None = None,
    sha256: str | None = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    retries: int = 2,
    backoff: float = 1.0,
    progress: bool | None = None,
    session: requests.Session | None = None,
) -> Path:
    """Return the cached path of ``url``, downloading it first when it is not cached.

    Parameters
    ----------
    url : str
        Official ``http(s)://HOST/PATH`` URL of the file.
    data_dir : str or path-like
        Cache root; the file is stored at ``data_dir/raw/HOST/PATH``.
    mirror : str, optional
        Mirror base (``http://...`` or ``file://...``) tried before ``url``;
        defaults to ``$RFREPRO_MIRROR``.
    sha256 : str, optional
        Expected hex digest of the file as served. A cached copy that does not
        match is fetched again; a fresh download that does not match is deleted.
    timeout : (float, float)
        Connect and read timeouts in seconds.
    retries : int
        Extra attempts per URL after a transient failure (timeout, dropped
        connection, HTTP 5xx/429). Unreachable hosts and 404s are not retried.
    backoff : float
        Wait ``backoff * 2**k`` seconds before retry ``k``.
    progress : bool, optional
        Show a tqdm bar; default: only when stderr is a terminal.
    session : requests.Session, optional
        Session to reuse (a fresh one otherwise).

    Returns
    -------
    pathlib.Path
        The complete, verified file in the cache.

    Raises
    ------
    ValueError
        The downloaded file's sha256 differs from ``sha256`` (the file is deleted).
    DatasetUnavailable
        Neither the mirror nor the official URL delivered the file.
    """
    dest = cache_path(url, data_dir)
    if _verify_cached(dest, sha256):
        return dest
    base = resolve_mirror(mirror)
    candidates = ([mirror_url(url, base)] if base else []) + [url]
    own_session = session is None
    session = session or requests.Session()
    failures: list[str] = []
    try:
        for candidate in candidates:
            try:
                tmp, digest = _transfer(candidate, dest, session=session, timeout=timeout,
                                        retries=retries, backoff=backoff, progress=progress)
            except _Missing as e:
                failures.append(f"{candidate}: {e}")
                continue
            if sha256 is not None and digest != sha256.lower():
                tmp.unlink(missing_ok=True)
                raise ValueError(
                    f"sha256 mismatch for {candidate} (official {url}): "
                    f"expected {sha256.lower()}, got {digest}; the file was deleted"
                )
            os.replace(tmp, dest)
            return dest
    finally:
        if own_session:
            session.close()
    raise DatasetUnavailable(unavailable_message(url, dest, failures, base),
                             urls=candidates, path=dest)


def unavailable_message(url: str, dest: Path, failures: list[str], mirror: str | None) -> str:
    """The one error text for a file that could not be had, with both ways out."""
    tried = "\n".join(f"  - {f}" for f in failures) or f"  - {url}"
    mirror_hint = (
        f"the mirror {mirror} lacks it; point {MIRROR_ENV} (or the config key `mirror`) "
        "at a mirror that has it"
        if mirror
        else f"set {MIRROR_ENV} (or the config key `mirror`) to a mirror base "
        "(http://... or file://...) laid out as <mirror>/HOST/PATH"
    )
    return (
        f"dataset file unavailable: {url}\n"
        f"tried:\n{tried}\n"
        f"ways out: (1) {mirror_hint}; or (2) place the file at {dest}"
    )


_MAGIC = (
    (b"\x1f\x8b", gzip.open),
    (b"BZh", bz2.open),
    (b"\xfd7zXZ\x00", lzma.open),
)


def open_decompressed(path: str | os.PathLike) -> BinaryIO:
    """Open a cached file for reading, decompressing gzip, bz2 or xz on the fly.

    The compression is read from the file's first bytes, not its name, so a
    server that already decompressed a ``.gz`` does not break the parser.
    """
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


def zip_members(path: str | os.PathLike, pattern: str) -> list[str]:
    """Names of the members of zip ``path`` matching ``pattern`` (a glob), sorted.

    Folder entries are skipped; a pattern without a ``/`` also matches members
    inside folders by their base name (``trainingData.csv`` finds
    ``UJIndoorLoc/trainingData.csv``).
    """
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
    if "/" in pattern:
        hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    else:
        hits = [n for n in names if fnmatch.fnmatchcase(n.rsplit("/", 1)[-1], pattern)]
    return sorted(hits)


def open_zip_member(path: str | os.PathLike, member: str) -> BinaryIO:
    """Open one zip member as a binary stream (decompressed), fully read into memory.

    Reading the member whole surfaces a truncated or corrupt archive here (as
    ``zipfile.BadZipFile`` / ``EOFError``) rather than halfway through parsing.
    """
    with zipfile.ZipFile(path) as zf:
        return io.BytesIO(zf.read(member))
