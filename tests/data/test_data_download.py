"""The downloader: cache layout, mirrors, checksums, retries and the offline error."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

import pytest

from rfrepro.data import download
from rfrepro.data.download import DatasetUnavailable, cache_path, fetch, mirror_url

PAYLOAD = b"+1 1:0.5 3:2\n-1 2:1.5\n"
SHA = hashlib.sha256(PAYLOAD).hexdigest()
FAST = {"retries": 1, "backoff": 0.0, "timeout": (2.0, 5.0), "progress": False}


def test_cache_path_mirrors_host_and_path(tmp_path):
    url = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/a9a"
    assert cache_path(url, tmp_path) == (
        tmp_path / "raw" / "www.csie.ntu.edu.tw" / "~cjlin" / "libsvmtools" / "datasets"
        / "binary" / "a9a")
    assert cache_path("http://yann.lecun.com/exdb/mnist/t.gz", "data") == Path(
        "data/raw/yann.lecun.com/exdb/mnist/t.gz")


@pytest.mark.parametrize("bad", ["ftp://host/file", "https://host/", "https:///file",
                                 "https://host/a/../../etc/passwd"])
def test_cache_path_rejects_odd_urls(bad):
    with pytest.raises(ValueError, match="dataset url"):
        cache_path(bad, "data")


@pytest.mark.parametrize("base", ["http://127.0.0.1:9/m", "http://127.0.0.1:9/m/",
                                  "file:///srv/mirror", "file:///srv/mirror/"])
def test_mirror_url_swaps_scheme_for_base(base):
    url = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/a9a.t"
    assert mirror_url(url, base) == (
        base.rstrip("/") + "/www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/a9a.t")
    assert mirror_url("http://yann.lecun.com/exdb/x.gz", base) == (
        base.rstrip("/") + "/yann.lecun.com/exdb/x.gz")


def test_download_with_checksum_then_cache_hit(server, data_dir, files_under):
    url = server.put("d/a.txt", PAYLOAD)
    path = fetch(url, data_dir=data_dir, sha256=SHA, **FAST)
    assert path == cache_path(url, data_dir)
    assert path.read_bytes() == PAYLOAD
    assert files_under(data_dir) == [path]  # no temp file left behind
    again = fetch(url, data_dir=data_dir, sha256=SHA, **FAST)
    assert again == path
    assert server.hits["/d/a.txt"] == 1  # the second call did not download


def test_checksum_mismatch_deletes_and_names_url(server, data_dir, files_under):
    url = server.put("d/a.txt", PAYLOAD)
    wrong = "0" * 64
    with pytest.raises(ValueError) as info:
        fetch(url, data_dir=data_dir, sha256=wrong, **FAST)
    msg = str(info.value)
    assert url in msg and wrong in msg and SHA in msg
    assert files_under(data_dir) == []
    # pooch downloads a mismatching file again (the bytes may have been damaged on the way)
    assert server.hits["/d/a.txt"] == 1 + FAST["retries"]


def test_cached_file_with_wrong_checksum_is_fetched_again(server, data_dir):
    url = server.put("d/a.txt", PAYLOAD)
    dest = cache_path(url, data_dir)
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"stale")
    assert fetch(url, data_dir=data_dir, sha256=SHA, **FAST).read_bytes() == PAYLOAD
    assert server.hits["/d/a.txt"] == 1


def test_interrupted_transfer_leaves_no_file(server, data_dir, files_under):
    url = f"{server.url}/truncate/a.txt"
    with pytest.raises(DatasetUnavailable, match="transfer"):
        fetch(url, data_dir=data_dir, **FAST)
    assert server.hits["/truncate/a.txt"] == 2  # one retry (retries=1)
    assert files_under(data_dir) == []


def test_transient_http_error_is_retried(server, data_dir):
    server.put("d/a.txt", PAYLOAD)
    path = fetch(f"{server.url}/flaky/d/a.txt", data_dir=data_dir, sha256=SHA, **FAST)
    assert path.read_bytes() == PAYLOAD
    assert server.hits["/flaky/d/a.txt"] == 2  # 503, then the file


def test_transient_http_error_gives_up_after_the_retries(server, data_dir, files_under):
    server.put("d/a.txt", PAYLOAD)
    server.flaky_left["/flaky/d/a.txt"] = 10
    url = f"{server.url}/flaky/d/a.txt"
    with pytest.raises(DatasetUnavailable) as info:
        fetch(url, data_dir=data_dir, retries=2, backoff=0.0, progress=False)
    assert f"{url}: HTTP 503 (after 3 attempts)" in str(info.value)
    assert server.hits["/flaky/d/a.txt"] == 3  # urllib3's retries only: pooch does not repeat them
    assert files_under(data_dir) == []


def test_no_answer_in_time_is_retried_then_reported(server, data_dir):
    server.put("d/a.txt", PAYLOAD)
    url = f"{server.url}/slow/d/a.txt"
    start = time.perf_counter()
    with pytest.raises(DatasetUnavailable, match=f"{url}: no answer in time"):
        fetch(url, data_dir=data_dir, retries=1, backoff=0.0, timeout=(2.0, 0.1), progress=False)
    assert server.hits["/slow/d/a.txt"] == 2
    assert time.perf_counter() - start < 3.0
    # a read timeout longer than the server's delay gets the file
    path = fetch(url, data_dir=data_dir, sha256=SHA, retries=0, timeout=(2.0, 5.0), progress=False)
    assert path.read_bytes() == PAYLOAD


def test_not_found_is_not_retried(server, data_dir):
    url = f"{server.url}/d/missing.txt"
    with pytest.raises(DatasetUnavailable, match="HTTP 404"):
        fetch(url, data_dir=data_dir, retries=3, backoff=0.0, progress=False)
    assert server.hits["/d/missing.txt"] == 1


def test_http_mirror_is_tried_first(server, data_dir):
    official = "https://data.example.org/sets/a.txt"
    server.put("mirror/data.example.org/sets/a.txt", PAYLOAD)
    path = fetch(official, data_dir=data_dir, mirror=f"{server.url}/mirror", sha256=SHA, **FAST)
    assert path == data_dir / "raw" / "data.example.org" / "sets" / "a.txt"
    assert path.read_bytes() == PAYLOAD
    assert server.hits["/mirror/data.example.org/sets/a.txt"] == 1


def test_file_mirror_copies_and_checks(tmp_path, data_dir, files_under):
    mirror = tmp_path / "mirror"
    src = mirror / "data.example.org" / "~user" / "a.txt"
    src.parent.mkdir(parents=True)
    src.write_bytes(PAYLOAD)
    official = "https://data.example.org/~user/a.txt"
    path = fetch(official, data_dir=data_dir, mirror=mirror.as_uri(), sha256=SHA, **FAST)
    assert path.read_bytes() == PAYLOAD and path != src
    path.unlink()
    with pytest.raises(ValueError, match="expected 0+, got " + SHA):
        fetch(official, data_dir=data_dir, mirror=mirror.as_uri(), sha256="0" * 64, **FAST)
    assert files_under(data_dir) == []
    assert src.read_bytes() == PAYLOAD  # the mirror itself is never touched


def test_mirror_from_environment(tmp_path, data_dir, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "data.example.org").mkdir(parents=True)
    (mirror / "data.example.org" / "a.txt").write_bytes(PAYLOAD)
    monkeypatch.setenv(download.MIRROR_ENV, mirror.as_uri())
    path = fetch("https://data.example.org/a.txt", data_dir=data_dir, **FAST)
    assert path.read_bytes() == PAYLOAD


def test_mirror_without_the_file_falls_back_to_official(tmp_path, server, data_dir):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    url = server.put("d/a.txt", PAYLOAD)
    assert fetch(url, data_dir=data_dir, mirror=empty.as_uri(), **FAST).read_bytes() == PAYLOAD


def test_offline_error_names_url_and_both_ways_out(data_dir, closed_port, files_under):
    url = f"http://127.0.0.1:{closed_port}/sets/a9a"
    start = time.perf_counter()
    with pytest.raises(DatasetUnavailable) as info:
        fetch(url, data_dir=data_dir, retries=3, backoff=1.0, progress=False)
    assert time.perf_counter() - start < 3.0  # refused connections are not retried
    err = info.value
    assert isinstance(err, RuntimeError)
    msg = str(err)
    assert url in msg
    assert "RFREPRO_MIRROR" in msg and "config key `mirror`" in msg
    assert str(cache_path(url, data_dir)) in msg
    assert err.urls == [url] and err.path == cache_path(url, data_dir)
    assert files_under(data_dir) == []


def test_offline_error_lists_mirror_and_official(tmp_path, data_dir, closed_port):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    url = f"http://127.0.0.1:{closed_port}/sets/a9a"
    with pytest.raises(DatasetUnavailable) as info:
        fetch(url, data_dir=data_dir, mirror=empty.as_uri(), **FAST)
    msg = str(info.value)
    assert mirror_url(url, empty.as_uri()) in msg and "no such file" in msg
    assert f"{url}: cannot connect" in msg
    assert f"the mirror {empty.as_uri()} lacks it" in msg


def test_plain_folder_mirror_is_accepted(tmp_path, data_dir, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "data.example.org").mkdir(parents=True)
    (mirror / "data.example.org" / "a.txt").write_bytes(PAYLOAD)
    assert download.resolve_mirror(str(mirror) + "/") == mirror.as_uri()
    monkeypatch.setenv(download.MIRROR_ENV, str(mirror))
    assert fetch("https://data.example.org/a.txt", data_dir=data_dir, **FAST).read_bytes() == PAYLOAD
    monkeypatch.setenv(download.MIRROR_ENV, "  ")
    assert download.resolve_mirror(None) is None


def test_corrupt_cache_is_not_kept_when_refetch_fails(data_dir, closed_port, files_under):
    url = f"http://127.0.0.1:{closed_port}/d/a.txt"
    dest = cache_path(url, data_dir)
    dest.parent.mkdir(parents=True)
    dest.write_bytes(PAYLOAD[:5])  # a truncated copy from some earlier crash
    with pytest.raises(DatasetUnavailable):
        fetch(url, data_dir=data_dir, sha256=SHA, **FAST)
    assert files_under(data_dir) == []  # the bad copy is gone, not trusted later


def test_fetched_file_follows_the_umask(server, data_dir):
    url = server.put("d/a.txt", PAYLOAD)
    old = os.umask(0o022)
    try:
        path = fetch(url, data_dir=data_dir, sha256=SHA, **FAST)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by a shared cache's users


@pytest.mark.parametrize("via", ["http", "file"])
def test_progress_bar_counts_the_bytes(via, server, tmp_path, data_dir, monkeypatch):
    url = server.put("d/a.txt", PAYLOAD)
    mirror = None
    if via == "file":
        mirror = tmp_path / "mirror"
        (mirror / "data.example.org").mkdir(parents=True)
        (mirror / "data.example.org" / "a.txt").write_bytes(PAYLOAD)
        url, mirror = "https://data.example.org/a.txt", mirror.as_uri()
    seen = []
    real = download.tqdm

    class Recording(real):
        def close(self):
            seen.append((self.total, self.n))
            super().close()

    monkeypatch.setattr(download, "tqdm", Recording)
    fetch(url, data_dir=data_dir, mirror=mirror, sha256=SHA, **{**FAST, "progress": True})
    assert seen and seen[0] == (len(PAYLOAD), len(PAYLOAD))
