"""Fetching dataset files into the local cache, from a mirror or the official URL.

The file behind ``https://HOST/PATH`` is cached at ``<data_dir>/raw/HOST/PATH``.
A mirror is a base URL (``http://...`` or ``file://...``) laid out the same way
(``<mirror>/HOST/PATH``), like the tree ``wget --mirror`` writes. The mirror
comes from the ``mirror`` argument, else the environment variable
``RFREPRO_MIRROR``; when one is set it is tried before the official URL.

The transfers are pooch's (:func:`pooch.retrieve`): it streams to a temporary
file in the destination folder, checks the sha256 (``known_hash``) and moves the
file into place only then, so the cache never holds half a file. What stays here
is what pooch does not do: the mirror mapping, a ``file://`` downloader, retrying
only the failures another attempt can fix, and one error naming every URL tried.

Files are cached as served (compressed or not) and decompressed on the fly by
:func:`open_decompressed`; pooch's ``Decompress``/``Unzip`` processors are not
used because they would keep a second, decompressed copy beside each file, and
the parsed arrays are cached anyway (``<data_dir>/parsed``).
"""

from __future__ import annotations

import bz2
import contextlib
import fnmatch
import gzip
import io
import logging
import lzma
import os
import re
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import BinaryIO

import pooch
import requests
from tqdm.auto import tqdm

from rfrepro.atomic import file_mode

__all__ = [
    "MIRROR_ENV",
    "DatasetUnavailable",
    "FileDownloader",
    "cache_path",
    "fetch",
    "mirror_url",
    "open_decompressed",
    "open_zip_member",
    "resolve_mirror",
    "sha256_file",
    "zip_members",
]

log = logging.getLogger(__name__)

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
    """Hex sha256 of a file (pooch's hashing, read in chunks)."""
    return pooch.file_hash(str(path), alg="sha256")


class FileDownloader:
    """A pooch downloader for ``file://`` URLs (a mirror on a local or shared disk).

    pooch chooses downloaders by scheme and has none for ``file://``; this one
    copies the file in chunks into the temporary file pooch hands it, so the
    checksum and the atomic move stay pooch's.
    """

    def __init__(self, progressbar=False):
        self.progressbar = progressbar

    def __call__(self, url: str, output_file, pooch_obj=None, check_only: bool = False):
        parts = urllib.parse.urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise _Missing(f"file:// URL with a host ({parts.netloc!r}) is not supported")
        path = Path(urllib.request.url2pathname(parts.path))
        if check_only:
            return path.is_file()
        if not path.is_file():
            raise _Missing("no such file")
        total = path.stat().st_size
        bar = self.progressbar if self.progressbar is not False else None
        if bar is not None:
            bar.total = total
        n = 0
        with open(path, "rb") as src, open(output_file, "wb") as out:
            for block in iter(lambda: src.read(CHUNK), b""):
                out.write(block)
                n += len(block)
                if bar is not None:
                    bar.update(len(block))
        if bar is not None:
            bar.close()
        if n != total:  # the mirror file changed while it was read
            raise _Transient(f"transfer ended after {n} of {total} bytes")
        return None


def _progress_bar(desc: str, show: bool | None):
    """A tqdm bar for pooch's ``progressbar`` argument, or False.

    pooch's own ``progressbar=True`` bar is always drawn and left behind; ours
    is drawn only on a terminal (a sweep's log stays clean) and then removed.
    """
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        return False
    # total=1 until the downloader sets it: pooch tests the bar's truth value
    return tqdm(total=1, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)


def _downloader(url: str, timeout: tuple[float, float], bar):
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme == "file":
        return FileDownloader(progressbar=bar)
    if scheme in ("http", "https"):
        # identity: the bytes on disk must be the served file, so that the
        # sha256 and the Content-Length refer to the same thing
        return pooch.HTTPDownloader(progressbar=bar, chunk_size=CHUNK, timeout=timeout,
                                    headers={"Accept-Encoding": "identity"})
    raise _Missing(f"unsupported URL scheme {scheme!r} (use http://, https:// or file://)")


def _classify(e: requests.exceptions.RequestException) -> Exception:
    """Sort a requests failure into worth-retrying or final."""
    if isinstance(e, requests.exceptions.HTTPError) and e.response is not None:
        status = e.response.status_code
        return (_Transient if status in TRANSIENT_STATUS else _Missing)(f"HTTP {status}")
    if isinstance(e, requests.exceptions.ReadTimeout):
        return _Transient("no answer in time")
    if isinstance(e, requests.exceptions.ChunkedEncodingError):
        return _Transient(f"transfer interrupted ({_short(e)})")
    cause = e.args[0] if e.args else None
    if isinstance(e, requests.exceptions.ConnectionError) and not _is_read_timeout(cause):
        # refused, DNS failure or connect timeout: the host is not reachable
        # from here, so retrying only delays the error
        return _Missing(f"cannot connect ({_short(e)})")
    return _Transient(_short(e))


def _is_read_timeout(cause) -> bool:
    # requests reports a read timeout in the middle of the body as a
    # ConnectionError wrapping urllib3's ReadTimeoutError: that one is transient
    import urllib3

    return isinstance(cause, urllib3.exceptions.ReadTimeoutError)


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 200 else text[:200] + "..."


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download at INFO on stderr, advising its own API; silence it here."""
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


_POOCH_MISMATCH = re.compile(r"expected (\S+) but got (\w+)")


def _retrieve(
    candidate: str,
    url: str,
    dest: Path,
    *,
    sha256: str | None,
    timeout: tuple[float, float],
    retries: int,
    backoff: float,
    progress: bool | None,
) -> None:
    """Fetch ``candidate`` into ``dest`` with pooch, retrying transient failures.

    pooch's own ``retry_if_failed`` retries every failure alike, with a fixed
    wait: a 404, a refused connection or a checksum mismatch would be retried
    too. Here only what another attempt can fix is retried, with ``backoff``.
    """
    attempt = 0
    while True:
        bar = _progress_bar(dest.name, progress)
        try:
            with _quiet_pooch():
                pooch.retrieve(candidate, known_hash=sha256, fname=dest.name, path=dest.parent,
                               downloader=_downloader(candidate, timeout, bar))
            # pooch's temp file is private (0600): give it the usual mode
            os.chmod(dest, file_mode())
            return
        except ValueError as e:
            found = _POOCH_MISMATCH.search(str(e))
            if sha256 is None or found is None:
                raise
            raise ValueError(
                f"sha256 mismatch for {candidate} (official {url}): "
                f"expected {sha256.lower()}, got {found.group(2)}; the file was deleted"
            ) from e
        except requests.exceptions.RequestException as e:
            err = _classify(e)
        except (_Transient, _Missing) as e:
            err = e
        finally:
            # not `if bar`: a tqdm bar is falsy once its total is 0 (no Content-Length)
            if bar is not False:
                bar.close()
        if isinstance(err, _Missing):
            raise err
        if attempt >= retries:
            raise _Missing(f"{err} (after {attempt + 1} attempts)") from err
        time.sleep(backoff * 2**attempt)
        attempt += 1


def _verify_cached(dest: Path, sha256: str | None) -> bool:
    """True when the cached file can be used as is; a file with the wrong checksum is removed.

    It is removed before any new transfer, so that a failed refetch cannot leave
    the corrupt copy behind for a later run to trust.
    """
    if not dest.is_file():
        return False
    if sha256 is None or sha256_file(dest) == sha256.lower():
        return True
    log.warning("cached %s does not match its sha256; fetching it again", dest)
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
    failures: list[str] = []
    for candidate in candidates:
        try:
            _retrieve(candidate, url, dest, sha256=sha256, timeout=timeout, retries=retries,
                      backoff=backoff, progress=progress)
        except _Missing as e:
            failures.append(f"{candidate}: {e}")
            continue
        return dest
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
