"""Provenance of a run (code version, libraries, machine) and thread limits."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib import metadata

from rfrepro.layout import project_root

PACKAGES = (
    "rfrepro", "numpy", "scipy", "scikit-learn", "hydra-core", "pandas",
    "numba", "joblib", "matplotlib", "threadpoolctl",
)


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    """HEAD commit of the checkout, with ``+dirty`` when tracked files changed."""
    root = project_root()
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (sha or "unknown") + ("+dirty" if dirty else "")


@functools.lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo, else what platform knows)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


@functools.lru_cache(maxsize=1)
def machine() -> dict:
    """Hardware and BLAS summary, without host names."""
    from threadpoolctl import threadpool_info

    blas = [
        f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return {
        "cores": os.cpu_count() or 1,
        "cpu": cpu_model(),
        "memory_gib": round(_memory_bytes() / 2**30, 1),
        "os": f"{platform.system()} {platform.machine()}",
        "blas": "; ".join(sorted(set(blas))) or "unknown",
    }


def provenance() -> dict:
    from rfrepro.lock import lock_hash

    return {"git_commit": git_commit(), "versions": versions(), "machine": machine(),
            "lock_sha256": _lock_hash(lock_hash)}


@functools.lru_cache(maxsize=1)
def _lock_hash(fn) -> str | None:
    return fn()


def threads_for(n_jobs: int | None) -> int:
    """BLAS/numba threads per run when ``n_jobs`` runs share the machine (all cores for one)."""
    cores = os.cpu_count() or 1
    if n_jobs is None or n_jobs < 1:
        return cores
    return max(1, cores // n_jobs)


class limit_threads:
    """Context manager limiting BLAS/OpenMP and numba threads (None: no limit).

    ``report()`` (inside the block) says what is in force: threadpoolctl's
    count per library, numba's, and how soon OpenBLAS's idle threads sleep
    (``openblas_thread_timeout``: :data:`rfrepro.OPENBLAS_THREAD_TIMEOUT`).
    """

    def __init__(self, threads: int | None):
        self.threads = threads

    def __enter__(self):
        self._numba_before = None
        if self.threads is None:
            self._ctl = None
            return self
        from threadpoolctl import threadpool_limits

        self._ctl = threadpool_limits(limits=int(self.threads))
        try:
            import numba

            self._numba_before = numba.get_num_threads()
            numba.set_num_threads(min(int(self.threads), numba.config.NUMBA_NUM_THREADS))
        except ImportError:  # pragma: no cover
            pass
        return self

    def report(self) -> dict:
        from threadpoolctl import threadpool_info

        import rfrepro

        out = {"requested": self.threads,
               "libraries": {f"{i.get('user_api')}:{i.get('internal_api')}": i.get("num_threads")
                             for i in threadpool_info()},
               "openblas_thread_timeout": rfrepro.OPENBLAS_THREAD_TIMEOUT}
        try:
            import numba

            out["numba"] = numba.get_num_threads()
        except ImportError:  # pragma: no cover
            pass
        return out

    def __exit__(self, *exc):
        if self._ctl is not None:
            self._ctl.restore_original_limits()
            if self._numba_before is not None:
                import numba

                numba.set_num_threads(self._numba_before)
        return False


def summary_line() -> str:
    """One line of versions, cores and BLAS, for benchmark headers."""
    import numba

    v, m = versions(), machine()
    return (
        f"python {v['python']}, numpy {v['numpy']}, scikit-learn {v['scikit-learn']}, "
        f"numba {v['numba']} ({numba.get_num_threads()} threads), cores {m['cores']}, BLAS: {m['blas']}"
    )
