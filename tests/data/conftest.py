"""Fixtures for the data-layer tests: a local HTTP server, a closed port, no outside network."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rfrepro.data.download import MIRROR_ENV

LOCAL = {"127.0.0.1", "localhost", "::1"}


@pytest.fixture(autouse=True)
def _local_network_only(monkeypatch):
    """Refuse name lookups for anything but the loopback host: tests never reach the internet."""
    real = socket.getaddrinfo

    def guarded(host, *args, **kwargs):
        if host not in LOCAL:
            raise OSError(f"test tried to reach {host!r}; only 127.0.0.1 is allowed")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)


@pytest.fixture(autouse=True)
def _no_mirror_env(monkeypatch):
    """A developer's RFREPRO_MIRROR must not leak into the tests."""
    monkeypatch.delenv(MIRROR_ENV, raising=False)


class _Handler(SimpleHTTPRequestHandler):
    """Serves files from a folder; paths under /truncate/, /flaky/ and /slow/ misbehave on purpose."""

    hits: Counter
    flaky_left: dict
    slow_s: float

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        self.hits[self.path] += 1
        if self.path.startswith("/truncate/"):
            # announce more bytes than are sent, then hang up: an interrupted transfer
            body = b"1 1:1\n" * 10
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/flaky/") and self.flaky_left.get(self.path, 1) > 0:
            self.flaky_left[self.path] = self.flaky_left.get(self.path, 1) - 1
            self.send_error(503)
            return
        if self.path.startswith("/flaky/"):
            self.path = self.path[len("/flaky"):]
        if self.path.startswith("/slow/"):
            # no answer before the client's read timeout
            time.sleep(self.slow_s)
            self.path = self.path[len("/slow"):]
        super().do_GET()


class LocalServer:
    """A file server on 127.0.0.1: ``root`` is served at ``url``; ``hits`` counts requests.

    ``flaky_left[path]`` is how many more 503s ``/flaky/...`` answers (default 1);
    ``/slow/...`` answers after ``slow_s`` seconds.
    """

    def __init__(self, root: Path):
        self.root = root
        self.hits: Counter = Counter()
        self.flaky_left: dict[str, int] = {}
        handler = type("Handler", (_Handler,), {"hits": self.hits, "flaky_left": self.flaky_left,
                                                 "slow_s": 0.5})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def put(self, relpath: str, data: bytes) -> str:
        """Write ``data`` at ``relpath`` under the served root; return its URL."""
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return f"{self.url}/{relpath}"


@pytest.fixture
def server(tmp_path):
    srv = LocalServer(tmp_path / "www")
    srv.root.mkdir()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()
    srv.thread.join(timeout=5)


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def data_dir(tmp_path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    return d


@pytest.fixture
def files_under():
    """Function listing every file below a folder (hidden temp files included)."""

    def listing(folder: Path) -> list[Path]:
        return sorted(p for p in folder.rglob("*") if p.is_file())

    return listing
