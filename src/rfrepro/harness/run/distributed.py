"""Running a sweep's runs on an existing Dask cluster, one task per run.

:func:`dask_map` connects a :class:`dask.distributed.Client` to a scheduler
(``tcp://host:8786``), submits ``fn(item)`` once per item and yields each
outcome as it completes. The cluster is the user's: started with
``dask scheduler`` / ``dask worker`` by hand, or by ``dask-jobqueue`` on SLURM
(``python -m rfrepro.cluster``); we never start or stop it here.

Records are written by the workers, exactly as a local run writes them, so
the results folder (and the data cache) must be one shared filesystem mounted
at the same path on every worker and on the client; give absolute paths
(``paths.results=/shared/...``), since a worker's working directory is its
own. Resuming then works across machines: a run whose record is already
finished is skipped, whichever machine wrote it. Returning records to the
client instead would make the client the only writer but double the code path
a run goes through; a shared filesystem is what every SLURM cluster has.

Failures: a task that raises is retried ``retries`` times by the scheduler;
a task whose worker dies is rescheduled on another worker, and after
``distributed.scheduler.allowed-failures`` deaths (3 by default) it fails with
:class:`~distributed.KilledWorker`. Either way every item comes back, with its
result or its exception.
"""

from __future__ import annotations

import argparse
import functools
import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError

from tqdm.auto import tqdm

from rfrepro.layout import project_root

__all__ = ["LockChecked", "dask_map", "slurm_cluster", "threads_per_task"]

CONNECT_TIMEOUT = "30s"
SLURM_CONFIG = project_root() / "conf" / "cluster" / "slurm.yaml"


@functools.cache
def _check_env_once() -> None:
    from rfrepro.lock import check_locked_env

    check_locked_env()


class LockChecked:
    """``fn`` wrapped so that a worker refuses to run it outside the locked environment.

    The check runs once per worker process (it reads package metadata); its
    RuntimeError becomes the task's exception, so a worker with other package
    versions than the lock fails its runs with a clear message instead of
    producing numbers from another environment.
    """

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, item):
        _check_env_once()
        return self.fn(item)


def dask_map(
    fn: Callable[[object], object],
    items: Iterable[object],
    *,
    address: str,
    retries: int = 1,
    desc: str = "",
    progress: bool = True,
    check_env: bool = True,
) -> Iterator[tuple[object, object | None, BaseException | None]]:
    """Run ``fn(item)`` for every item on the Dask cluster at ``address``.

    Parameters
    ----------
    fn : callable
        A picklable top-level function returning something small (a dict);
        the workers must be able to import it.
    items : iterable
        One task per item; items are pickled to the workers.
    address : str
        Scheduler address, e.g. ``tcp://10.0.0.5:8786``.
    retries : int
        Extra attempts for a task that raised (the same promise as the local
        pool: a failed run is retried once).
    desc : str
        Label of the progress bar.
    progress : bool
        Show a tqdm bar of the cluster's progress (finished tasks, live workers).
    check_env : bool
        Wrap ``fn`` in :class:`LockChecked` so workers refuse to run outside the
        locked environment.

    Yields
    ------
    (item, result, None) or (item, None, exception)
        In completion order; every item exactly once. The exception is the
        task's own, :class:`~distributed.KilledWorker` when its workers kept
        dying, or :class:`~concurrent.futures.CancelledError`.

    Examples
    --------
    >>> from distributed import LocalCluster
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
    ...     out = sorted(r for _, r, _ in dask_map(abs, [-2, 1], address=cluster.scheduler_address,
    ...                                           progress=False, check_env=False))
    >>> out
    [1, 2]
    """
    from distributed import Client, as_completed

    items = list(items)
    task = LockChecked(fn) if check_env else fn
    with Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT) as client:
        futures = {client.submit(task, item, pure=False, retries=retries): item for item in items}
        bar = tqdm(total=len(items), desc=desc, unit="run", disable=not progress)
        shown = 0.0
        pending = set(futures)
        try:
            for fut in as_completed(list(futures), loop=client.loop):
                pending.discard(fut)
                item = futures[fut]
                yield item, *_outcome(fut)
                bar.update()
                if progress and time.monotonic() - shown > 1.0:
                    shown = time.monotonic()
                    bar.set_postfix(workers=len(client.scheduler_info(n_workers=-1)["workers"]),
                                    refresh=False)
        finally:
            bar.close()
            if pending:  # the caller stopped early (Ctrl-C, an error): free the cluster
                client.cancel(list(pending))


def _outcome(fut) -> tuple[object | None, BaseException | None]:
    if fut.status == "finished":
        try:
            return fut.result(), None
        except Exception as exc:  # noqa: BLE001 - the result failed to come back
            return None, exc
    if fut.status == "cancelled":
        return None, CancelledError(f"task {fut.key} was cancelled")
    try:
        exc = fut.exception()
    except CancelledError as e:
        exc = e
    return None, exc if exc is not None else RuntimeError(f"task ended {fut.status}")


def _host_cores() -> tuple[str, int]:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity
        cores = os.cpu_count() or 1
    return socket.gethostname(), cores


def threads_per_task(address: str) -> int:
    """BLAS/numba threads each task may use so that no host is oversubscribed.

    For each host: its cores divided by the task slots (worker threads) the
    cluster runs there; the smallest over hosts, at least 1.
    """
    from distributed import Client

    with Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT) as client:
        cores = client.run(_host_cores)
        workers = client.scheduler_info(n_workers=-1)["workers"]
    slots: dict[str, int] = {}
    host_cores: dict[str, int] = {}
    for addr, (host, n) in cores.items():
        host_cores[host] = n
        slots[host] = slots.get(host, 0) + int(workers.get(addr, {}).get("nthreads", 1))
    if not slots:
        return 1
    return max(1, min(host_cores[h] // slots[h] for h in slots))


def slurm_cluster(config: str | os.PathLike = SLURM_CONFIG, *, jobs: int | None = None):
    """A dask-jobqueue ``SLURMCluster`` from ``config`` (``conf/cluster/slurm.yaml``).

    Returns the cluster, already scaled to ``jobs`` (default: the file's
    ``jobs``) SLURM jobs; the caller closes it. dask-jobqueue rather than one
    submitit job per run: workers are long-lived jobs that run run after run,
    so a sweep of many seconds-long runs waits in the queue once per worker,
    not once per run, and goes through the same :func:`dask_map` as any Dask
    cluster (retries, resuming, progress).
    """
    from dask_jobqueue import SLURMCluster
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(config), resolve=True)
    cluster = SLURMCluster(**(cfg.get("cluster") or {}))
    n = int(cfg.get("jobs", 1) if jobs is None else jobs)
    if n > 0:
        cluster.scale(jobs=n)
    return cluster


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rfrepro.harness.run.distributed slurm [--jobs N] [--config FILE]``: start and hold a cluster."""
    ap = argparse.ArgumentParser(prog="python -m rfrepro.harness.run.distributed",
                                 description="Start a Dask cluster on SLURM and keep it up "
                                             "until Ctrl-C; runs go to it with SCHEDULER=ADDRESS.")
    ap.add_argument("kind", choices=["slurm"])
    ap.add_argument("--config", default=str(SLURM_CONFIG), help="cluster config (YAML)")
    ap.add_argument("--jobs", type=int, default=None, help="SLURM jobs to start (default: config)")
    ap.add_argument("--dry-run", action="store_true", help="print the job script and exit")
    args = ap.parse_args(argv)
    with slurm_cluster(args.config, jobs=0 if args.dry_run else args.jobs) as cluster:
        if args.dry_run:
            print(cluster.job_script())
            return 0
        print(f"scheduler: {cluster.scheduler_address}\n"
              f"run e.g.:  make reproduce-sun2018-fig1 SCHEDULER={cluster.scheduler_address}\n"
              "Ctrl-C stops the cluster (its SLURM jobs are cancelled).", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping the cluster", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
