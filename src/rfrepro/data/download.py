"""Fetching dataset files into the local cache, from a mirror or the official URL.

The file behind ``https://HOST/PATH`` is cached at ``<data_dir>/raw/HOST/PATH``.
A mirror is a base URL (``http://...`` or ``file://...``) laid out the same way
(``<mirror>/HOST/PATH``), like the tree ``wget --mirror`` writes. The mirror
comes from the ``mirror`` argument, else the environment variable
``RFREPRO_MIRROR``; when one is set it is tried before the official URL.

The transfer policy is the libraries': pooch streams to a temporary file in
the destination folder, checks the sha256 and moves the file into place only
then (so the cache never holds half a file), and retries a whole transfer that
broke off (``retry_if_failed``); urllib3's :class:`~urllib3.util.Retry`, mounted
on the :class:`requests.Session`, retries a request that got no answer in time
or a transient HTTP status, with exponential backoff, and never a refused
connection or a 404. What stays here is what neither does: the mirror mapping,
the downloaders (``file://``, and HTTP through that session), and one error
naming every URL tried.

Files are cached as served (compressed or not) and decompressed on the fly by
:func:`rfrepro.data.formats.open_decompressed`; pooch's ``Decompress``/``Unzip``
processors are not used because they would keep a second, decompressed copy
beside each file, and the parsed arrays are cached anyway (``<data_dir>/parsed``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import pooch
import requests
import urllib3
from requests.adapters import HTTPAdapter
from tqdm.auto import tqdm
from urllib3.util import Retry

from rfrepro.atomic import file_mode

__all__ = [
    "MIRROR_ENV",
    "DatasetUnavailable",
    "FileDownloader",
    "SessionDownloader",
    "cache_path",
    "fetch",
    "mirror_url",
    "resolve_mirror",
    "retrying_session",
    "sha256_file",
    "unavailable_message",
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


class _Missing(Exception):
    """A final failure for this URL (host unreachable, 404, retries spent, file absent).

    Neither a ``ValueError`` nor a ``requests`` exception, so pooch's
    ``retry_if_failed`` lets it through at once.
    """


class _Interrupted(ValueError):
    """A ``file://`` copy that ended early; a ``ValueError`` so that pooch retries it."""


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


def retrying_session(retries: int, backoff: float) -> requests.Session:
    """A session whose requests urllib3 retries when another attempt can help.

    Retried: no answer in time, a connection dropped before the answer, and the
    statuses in ``TRANSIENT_STATUS`` (honouring ``Retry-After``). Not retried:
    a refused connection, a failed name lookup or a connect timeout (the host is
    not reachable from here, so retrying only delays the error) and every other
    status. Only the request is covered; a body that breaks off is pooch's to
    retry.
    """
    retry = Retry(total=None, connect=0, read=retries, status=retries, other=0, redirect=10,
                  status_forcelist=TRANSIENT_STATUS, allowed_methods={"GET"},
                  backoff_factor=backoff, raise_on_status=False)
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    # identity: the bytes on disk must be the served file, so that the sha256
    # and the Content-Length refer to the same thing
    session.headers["Accept-Encoding"] = "identity"
    return session


def _copy(chunks: Iterable[bytes], output_file, total: int, bar) -> int:
    """Write ``chunks`` to pooch's temporary file, counting them on ``bar``; return the bytes written."""
    if bar is not False:
        bar.reset(total=total)  # a retried transfer starts the count again
    n = 0
    with contextlib.ExitStack() as stack:
        out = output_file if hasattr(output_file, "write") else stack.enter_context(
            open(output_file, "wb"))
        for block in chunks:
            if block:
                out.write(block)
                n += len(block)
                if bar is not False:
                    bar.update(len(block))
    return n


# Hand-written downloaders, because pooch's HTTPDownloader calls ``requests.get``
# and so cannot use a session with urllib3's Retry (pooch's own retry repeats a
# 404 or a refused connection too, waiting at least a second each time), and
# pooch has no downloader for file:// at all. Both follow pooch's downloader
# protocol, so the temporary file, the checksum and the atomic move stay pooch's.


class SessionDownloader:
    """A pooch downloader for ``http(s)://`` URLs, through a :func:`retrying_session`.

    A request that fails for good (after urllib3's retries) raises
    :class:`_Missing`, which pooch does not retry; a body that breaks off
    raises the ``requests`` exception, which pooch's ``retry_if_failed`` does.
    """

    def __init__(self, session: requests.Session, *, timeout: tuple[float, float], progressbar=False):
        self.session = session
        self.timeout = timeout
        self.progressbar = progressbar

    def __call__(self, url: str, output_file, pooch_obj=None, check_only: bool = False):
        try:
            response = self.session.get(url, stream=True, timeout=self.timeout)
        except requests.exceptions.RequestException as e:
            raise _Missing(_describe(e)) from e
        with response:
            if check_only:
                return response.ok
            if not response.ok:
                tries = len(response.raw.retries.history) + 1 if response.raw.retries else 1
                raise _Missing(f"HTTP {response.status_code}"
                               + (f" (after {tries} attempts)" if tries > 1 else ""))
            total = int(response.headers.get("content-length", 0))
            _copy(response.iter_content(chunk_size=CHUNK), output_file, total, self.progressbar)
        return None


class FileDownloader:
    """A pooch downloader for ``file://`` URLs (a mirror on a local or shared disk).

    Copies the file in chunks into the temporary file pooch hands it.
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
        with open(path, "rb") as src:
            n = _copy(iter(lambda: src.read(CHUNK), b""), output_file, total, self.progressbar)
        if n != total:  # the mirror file changed while it was read
            raise _Interrupted(f"transfer ended after {n} of {total} bytes")
        return None


def _progress_bar(desc: str, show: bool | None):
    """A tqdm bar for the downloaders, or False.

    pooch's own ``progressbar=True`` bar is always drawn and left behind; ours
    is drawn only on a terminal (a sweep's log stays clean) and then removed.
    """
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        return False
    return tqdm(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)


def _describe(e: requests.exceptions.RequestException) -> str:
    """One line saying why a request failed, as the unavailable error lists it."""
    if isinstance(e, requests.exceptions.HTTPError) and e.response is not None:
        return f"HTTP {e.response.status_code}"
    if isinstance(e, requests.exceptions.ReadTimeout) or _is_read_timeout(e):
        return "no answer in time"
    if isinstance(e, requests.exceptions.ChunkedEncodingError):
        return f"transfer interrupted ({_short(e)})"
    if isinstance(e, requests.exceptions.ConnectionError):
        return f"cannot connect ({_short(e)})"
    return _short(e)


def _is_read_timeout(e: BaseException) -> bool:
    # requests wraps urllib3's ReadTimeoutError in a ConnectionError, directly
    # (mid-body) or inside the MaxRetryError of spent retries
    cause = e.args[0] if e.args else None
    cause = getattr(cause, "reason", cause)
    return isinstance(cause, urllib3.exceptions.ReadTimeoutError)


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 200 else text[:200] + "..."


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download (and retry) at INFO on stderr, advising its own API; silence it here."""
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
    """Fetch ``candidate`` into ``dest`` with pooch; raise :class:`_Missing` when it cannot be had."""
    scheme = urllib.parse.urlsplit(candidate).scheme
    if scheme not in ("http", "https", "file"):
        raise _Missing(f"unsupported URL scheme {scheme!r} (use http://, https:// or file://)")
    store = pooch.create(path=dest.parent, base_url="", registry={dest.name: sha256},
                         urls={dest.name: candidate}, retry_if_failed=retries)
    bar = _progress_bar(dest.name, progress)
    try:
        with contextlib.ExitStack() as stack:
            if scheme == "file":
                downloader = FileDownloader(progressbar=bar)
            else:
                session = stack.enter_context(retrying_session(retries, backoff))
                downloader = SessionDownloader(session, timeout=timeout, progressbar=bar)
            with _quiet_pooch():
                store.fetch(dest.name, downloader=downloader)
    except ValueError as e:
        found = _POOCH_MISMATCH.search(str(e))
        if sha256 is not None and found is not None:
            raise ValueError(
                f"sha256 mismatch for {candidate} (official {url}): "
                f"expected {sha256.lower()}, got {found.group(2)}; the file was deleted"
            ) from e
        if isinstance(e, _Interrupted):
            raise _Missing(f"{e} (after {retries + 1} attempts)") from e
        raise
    except requests.exceptions.RequestException as e:  # a body that broke off, every time
        raise _Missing(f"{_describe(e)} (after {retries + 1} attempts)") from e
    finally:
        if bar is not False:
            bar.close()
    # pooch's temp file is private (0600): give it the usual mode
    os.chmod(dest, file_mode())


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
        match is fetched again; a fresh download that does not match is deleted
        (pooch downloads it ``retries`` more times first, in case the bytes
        were damaged on the way).
    timeout : (float, float)
        Connect and read timeouts in seconds.
    retries : int
        Extra attempts per URL: urllib3's for a request without an answer in
        time or with a transient status (HTTP 5xx, 408, 429), pooch's for a
        transfer that broke off. Unreachable hosts and 404s are not retried.
    backoff : float
        urllib3's ``backoff_factor``: retry ``k >= 2`` of a request waits
        ``backoff * 2**(k - 1)`` seconds (pooch waits 1, 2, ... seconds before
        the retries of a whole transfer).
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
