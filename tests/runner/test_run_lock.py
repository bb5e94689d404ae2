"""The run lock: a live claim is respected, a stale one is taken over by exactly one process."""

import fcntl
import os
import socket
import threading

from rfrepro.runner.store import RunLock


def _stale_lock(path):
    """A lock of another host, untouched for longer than the lease (a node that died)."""
    path.write_text("elsewhere.example 1 0")
    os.utime(path, (0, 0))
    return path


def _held_by_this_process(path) -> bool:
    host, pid, _ = path.read_text().split(" ", 2)
    return host == socket.gethostname() and int(pid) == os.getpid()


def test_a_live_lock_is_respected(tmp_path):
    first, second = RunLock(tmp_path / "r.lock"), RunLock(tmp_path / "r.lock")
    assert first.acquire()
    assert not second.acquire()
    first.release()
    assert second.acquire()
    second.release()
    assert not (tmp_path / "r.lock").exists()


def test_a_stale_lock_is_taken_over(tmp_path):
    path = _stale_lock(tmp_path / "r.lock")
    lock = RunLock(path)
    assert lock.acquire()
    assert _held_by_this_process(path)
    lock.release()


def test_a_garbage_lock_is_stale_only_once_old(tmp_path):
    path = tmp_path / "r.lock"
    path.write_text("")  # a writer between create and write
    assert not RunLock(path).acquire()
    os.utime(path, (0, 0))
    assert RunLock(path).acquire()


def test_the_second_taker_of_one_stale_lock_backs_off(tmp_path, monkeypatch):
    # `late` opens the stale lock; before it goes on, `early` takes the lock over and holds it
    path = _stale_lock(tmp_path / "r.lock")
    early, late = RunLock(path), RunLock(path)
    real_flock = fcntl.flock

    def early_first(fd, op):
        monkeypatch.setattr(fcntl, "flock", real_flock)
        assert early.acquire()
        real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", early_first)
    assert not late.acquire()
    assert early.held and not late.held
    assert path.exists() and [p.name for p in tmp_path.iterdir()] == ["r.lock"]
    early.release()


def _race(path, takers: int) -> list[RunLock]:
    """Let ``takers`` locks of ``path`` acquire at once; return those that got it."""
    locks = [RunLock(path) for _ in range(takers)]
    start = threading.Barrier(takers)
    won = []

    def take(lock):
        start.wait()
        if lock.acquire():
            won.append(lock)

    threads = [threading.Thread(target=take, args=(lock,)) for lock in locks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


def test_racing_takers_of_one_stale_lock_one_acquires(tmp_path):
    for attempt in range(20):
        won = _race(_stale_lock(tmp_path / f"r{attempt}.lock"), takers=6)
        assert len(won) == 1, f"attempt {attempt}: {len(won)} takers acquired one lock"
        won[0].release()
