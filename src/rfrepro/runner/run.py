"""One run: dataset x feature map x model x seed -> one record.

A run is a short list of named steps, each with one owner:

1. :func:`load` the data (the variant named by the run's data fingerprint);
2. :func:`resolve_hyperparameters`: the bandwidth rule, once, and the
   cross-validated sigma / lambda where the study asks for it;
3. :func:`featurize`: fit the map once and transform each split once;
4. :func:`kernel_error` of the map on fixed training rows (when asked);
5. :func:`fit_and_score` the model;
6. :func:`run_and_record` wraps them: identity, lock, reuse, record.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import traceback
import warnings
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import joblib
import numpy as np
import scipy.sparse as sp
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf, open_dict
from sklearn.base import TransformerMixin, clone

from rfrepro.data import DatasetUnavailable, fingerprint, load_dataset
from rfrepro.features._base import fitted_summary
from rfrepro.kernels import kernel_matrix, resolve_bandwidth
from rfrepro.metrics import KernelReference, kernel_errors, kernel_spectra, prediction_metrics
from rfrepro.models.kernel_ridge import MemoryBudgetExceeded
from rfrepro.results.store import (
    FAILED,
    FINISHED,
    REFUSED,
    UNAVAILABLE,
    RecordStore,
    atomic_replace,
    atomic_write_text,
)
from rfrepro.runner.env import limit_threads, provenance
from rfrepro.runner.identity import code_version, identities
from rfrepro.runner.memory import PeakMemory

#: Kernels whose bandwidth is a distance scale (resolved from a rule like "median").
SHIFT_INVARIANT = ("gaussian", "laplacian")
#: Status of a run another process holds the lock of (not a record status).
BUSY = "busy"


def slug(cfg: DictConfig) -> str:
    return f"{cfg.study.paper}-{cfg.study.item}"


class Timer(dict):
    """Seconds per named step, summed over repeats: ``with timer("fit_s"): ...``."""

    @contextmanager
    def __call__(self, key: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[key] = self.get(key, 0.0) + time.perf_counter() - t0


def _build(node, **extra):
    params = OmegaConf.to_container(node, resolve=True)
    params.pop("name", None)
    params.update(extra)
    return instantiate(params)


def _nbytes(Z) -> int:
    if sp.issparse(Z):
        return int(Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes)
    return int(np.asarray(Z).nbytes)


# ----------------------------------------------------------------------------- steps


def load(cfg: DictConfig, data_fp: dict):
    """The run's dataset; fails when another variant than the fingerprinted one loads."""
    ds = load_dataset(cfg.dataset, seed=cfg.seed, data_dir=cfg.paths.data, mirror=cfg.mirror,
                      data_fingerprint=data_fp)
    want = data_fp.get("variant")
    if want is not None and ds.meta.get("variant") != want:
        raise RuntimeError(f"dataset {ds.name!r}: variant {ds.meta.get('variant')!r} loaded, "
                           f"but the run's identity was computed for {want!r}")
    return ds


def resolve_hyperparameters(cfg: DictConfig, ds, X, timer: Timer,
                            data_fp: dict | None = None) -> tuple[DictConfig, dict]:
    """The run config with the bandwidth (and CV choices) as numbers, and what to record.

    The bandwidth rule is resolved here once; the map, the exact kernel and
    the record all read the number from the returned config.
    """
    run_cfg = cfg.copy()
    kernel = {"name": cfg.kernel.name, "sigma_rule": cfg.kernel.get("sigma")}
    sigma = None
    if cfg.kernel.name in SHIFT_INVARIANT:
        sigma = resolve_bandwidth(X, cfg.kernel.sigma, kernel=cfg.kernel.name, random_state=cfg.seed)
    extra: dict = {}
    cv = cfg.get("cv")
    if cv is not None and cv.get("enabled"):
        from rfrepro.runner.cv import choose

        with timer("cv_s"):
            chosen = choose(X, ds.y_train, ds.task, sigma, OmegaConf.to_container(cv, resolve=True),
                            {"dataset": OmegaConf.to_container(cfg.dataset, resolve=True),
                             "data": data_fp, "kernel": cfg.kernel.name,
                             # generated data: each seed has its own training sample
                             "train_seed": ds.meta.get("train_seed")}, cfg.paths.results)
        sigma = chosen["sigma"]
        extra["cv"] = {k: v for k, v in chosen.items() if k != "grid"}
        with open_dict(run_cfg):
            run_cfg.model.lam = chosen["lam"]
    with open_dict(run_cfg):
        run_cfg.kernel.sigma = sigma
    kernel["sigma"] = sigma
    extra["kernel"] = kernel
    return run_cfg, extra


def kernel_params(run_cfg: DictConfig) -> dict:
    """Parameters of the exact kernel (every ``kernel.*`` key but the name; no null)."""
    params = {k: v for k, v in OmegaConf.to_container(run_cfg.kernel, resolve=True).items()
              if k not in ("name", "sigma_rule") and v is not None}
    if run_cfg.kernel.name not in SHIFT_INVARIANT:
        params.pop("sigma", None)
    return params


_KREF_CACHE: dict[str, KernelReference] = {}


def _kernel_reference(key: str, X: np.ndarray, kernel: str, params: dict) -> KernelReference:
    """The exact K of the evaluation rows: computed once per process and reused."""
    if key not in _KREF_CACHE:
        _KREF_CACHE.clear()  # keep at most one n x n matrix alive
        _KREF_CACHE[key] = KernelReference.from_matrix(kernel_matrix(kernel, X.astype(np.float64), **params))
    return _KREF_CACHE[key]


def kernel_error_rows(cfg: DictConfig, n: int) -> np.ndarray:
    pts = min(int(cfg.eval.kernel_error_points), n)
    return np.sort(np.random.RandomState(cfg.eval.kernel_error_seed).choice(n, pts, replace=False))


def kernel_error(run_cfg: DictConfig, ds, X, Z_rows, rows) -> dict:
    """Kernel-approximation errors (and spectra when ``eval.spectrum_k``) on ``rows`` of X."""
    params = kernel_params(run_cfg)
    key = repr((ds.name, ds.meta.get("variant"), ds.meta.get("train_seed"), X.shape, rows.tobytes(),
                run_cfg.kernel.name, sorted(params.items())))
    ref = _kernel_reference(key, X[rows], run_cfg.kernel.name, params)
    out = kernel_errors(ref, Z_rows)
    k = int(run_cfg.eval.get("spectrum_k") or 0)
    if k > 0:
        out.update(kernel_spectra(ref, Z_rows, k))
    return out


def _chunks(n: int, rows: int):
    for start in range(0, n, rows):
        yield slice(start, min(start + rows, n))


def _predict_split(fmap, model, X, rows: int, timer: Timer, split: str) -> np.ndarray:
    preds = []
    for part in _chunks(X.shape[0], rows):
        with timer(f"transform_{split}_s"):
            Z = fmap.transform(X[part])
        with timer(f"predict_{split}_s"):
            preds.append(model.predict(Z))
    return np.concatenate(preds)


def check_compatible(fmap, model, task: str) -> None:
    """The map's output suits the model, and the model suits the task (one clear error)."""
    out_kind = getattr(fmap, "output_kind", "features")
    if "precomputed" in model.get_params():
        model.set_params(precomputed=(out_kind == "kernel"))
    in_kind = getattr(model, "input_kind", "features")
    if in_kind != out_kind:
        raise ValueError(f"model {type(model).__name__} needs {in_kind} input but the method "
                         f"{type(fmap).__name__} produces {out_kind}")
    est_type = getattr(model, "_estimator_type", None)
    try:
        est_type = model.__sklearn_tags__().estimator_type or est_type
    except AttributeError:
        pass
    if task == "regression" and est_type == "classifier":
        raise ValueError(f"model {type(model).__name__} is a classifier but the dataset is a regression task")
    if task != "regression" and est_type == "regressor":
        raise ValueError(f"model {type(model).__name__} is a regressor but the dataset is a {task} "
                         "classification task; use a classifier (e.g. model=ls or model=linear_svm)")


def warm_up(fmap, X, y, rows: int) -> None:
    """Fit and transform a copy of ``fmap`` on the first ``rows`` rows, untimed and unrecorded.

    The first call of a code path in a process pays one-time costs (numba
    compiling or loading its kernels, lazy imports, thread pools): about a
    second, which a timing study would count as the map's time in whichever
    run a worker does first. A map that cannot be fitted on so few rows (more
    landmarks than rows, say) is left cold: the warm-up only removes a cost.
    """
    if rows <= 0:
        return
    part = slice(0, min(rows, X.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            clone(fmap).fit(X[part], None if y is None else y[part]).transform(X[part])
        except Exception:  # noqa: BLE001 - a map too big for the warm-up rows stays cold
            pass


class SharedFits:
    """Fitted maps kept under ``<results>/fits/`` for runs that differ only in their model.

    With ``eval.share_fit: true`` (Schleif et al.'s Table 1: its SVM and LS
    columns on the same fold select the same small RFF set) the first run to
    fit a map saves it with its fit time, and a later run of the same map
    loads it instead of fitting again. The key is the run's identity
    (:func:`rfrepro.runner.identity.identities`) with the model, the
    evaluation settings and the study left out, taken after the bandwidth is
    resolved: the same resolved map config, seed, dataset config, data bytes
    and code. The loading run records the fit's own ``fit_s`` (its time per CV
    cycle stays what fitting would cost), the time the load took as
    ``fit_load_s``, and the run that fitted it as ``fit_shared_from``. A file
    that cannot be read is ignored (the map is fitted again).
    """

    def __init__(self, root, key: str, source: str):
        self.path = Path(root) / "fits" / f"{key}.joblib"
        self.source = source

    @staticmethod
    def key(run_cfg: DictConfig, data_fp: dict) -> str:
        tree = OmegaConf.to_container(run_cfg, resolve=True)
        for k in ("model", "eval"):
            tree.pop(k, None)
        return identities(tree, data_fp)[1]

    def load(self) -> dict | None:
        """``{"map", "fit_s", "source"}`` as saved, or None (absent or unreadable)."""
        try:
            return joblib.load(self.path) if self.path.exists() else None
        except Exception:  # noqa: BLE001 - a damaged file only costs a new fit
            return None

    def save(self, fmap, fit_s: float) -> None:
        payload = {"map": fmap, "fit_s": fit_s, "source": self.source}
        atomic_replace(self.path, lambda tmp: joblib.dump(payload, tmp))


def featurize(run_cfg: DictConfig, X, y, timer: Timer, *, transform_train: bool,
              shared: SharedFits | None = None):
    """Fit the map once; transform the training rows once (when the model needs them).

    A map that defines its own ``fit_transform`` (e.g. TEFM, whose fit
    computes the training features anyway) is timed as ``fit_transform_s``;
    otherwise ``fit_s`` and ``transform_train_s`` are separate. With
    ``eval.warmup_rows`` > 0 a copy of the map is first run on that many rows,
    untimed (:func:`warm_up`). ``shared``: the map is loaded from it when
    there, saved to it after fitting otherwise. Returns (map, training
    features or None, the run the map was loaded from or None).
    """
    if shared is not None:
        t0 = time.perf_counter()
        found = shared.load()
        if found is not None:
            timer["fit_load_s"] = time.perf_counter() - t0
            timer["fit_s"] = found["fit_s"]
            Z = _transform_train(found["map"], X, timer) if transform_train else None
            return found["map"], Z, found["source"]
    fmap = _build(run_cfg.method)
    warm_up(fmap, X, y, int(run_cfg.eval.get("warmup_rows") or 0))
    own = type(fmap).fit_transform is not TransformerMixin.fit_transform
    if transform_train and own and shared is None:
        with timer("fit_transform_s"):
            Z = fmap.fit_transform(X, y)
        return fmap, Z, None
    with timer("fit_s"):
        fmap.fit(X, y)
    if shared is not None:
        shared.save(fmap, timer["fit_s"])
    return fmap, (_transform_train(fmap, X, timer) if transform_train else None), None


def _transform_train(fmap, X, timer: Timer):
    """The training rows' features, timed as ``transform_train_s``."""
    with timer("transform_train_s"):
        return fmap.transform(X)


def fit_and_score(run_cfg: DictConfig, fmap, ds, Ztr, dtype, timer: Timer) -> tuple[dict, dict]:
    """Train the model on ``Ztr``; score validation and test splits (and train if asked)."""
    model = _build(run_cfg.model)
    check_compatible(fmap, model, ds.task)
    with timer("train_s"):
        model.fit(Ztr, ds.y_train)
    fitted = {f"model_{a.rstrip('_')}": getattr(model, a)
              for a in getattr(model, "recorded_attributes", ())
              if hasattr(model, a)}
    metrics: dict = {}
    if run_cfg.eval.train_metrics:
        with timer("predict_train_s"):
            yhat = model.predict(Ztr)
        metrics.update({f"train_{k}": v for k, v in prediction_metrics(ds.task, ds.y_train, yhat).items()})
    rows = int(run_cfg.eval.test_chunk_rows)
    if ds.X_val is not None:
        yhat = _predict_split(fmap, model, ds.X_val.astype(dtype, copy=False), rows, timer, "val")
        metrics.update({f"val_{k}": v for k, v in prediction_metrics(ds.task, ds.y_val, yhat).items()})
    if ds.X_test is not None:
        yhat = _predict_split(fmap, model, ds.X_test.astype(dtype, copy=False), rows, timer, "test")
        metrics.update(prediction_metrics(ds.task, ds.y_test, yhat, bayes_error=ds.meta.get("bayes_error")))
    return metrics, fitted


def _kernel_image(cfg: DictConfig, run_cfg: DictConfig, rid: str, fmap, X, ds) -> str:
    """Save the approximate and exact kernel of a class-sorted subsample; return its path.

    The points are drawn with ``eval.kernel_error_seed`` (the same rows for
    every map) and sorted by label, as in Schleif et al.'s Fig. 1. The file
    ``artifacts/<paper>-<item>/<run_id>-kernel_image.npz`` holds ``approx``,
    ``exact`` and ``labels``; the record keeps its path relative to the
    results root.
    """
    k = min(int(cfg.eval.kernel_image_points), X.shape[0])
    rows = np.random.RandomState(cfg.eval.kernel_error_seed).choice(X.shape[0], k, replace=False)
    rows = rows[np.argsort(ds.y_train[rows], kind="stable")]
    Z = fmap.transform(X[rows])
    approx = np.asarray((Z @ Z.T).todense() if sp.issparse(Z) else Z @ Z.T, dtype=np.float32)
    exact = kernel_matrix(run_cfg.kernel.name, X[rows].astype(np.float64), **kernel_params(run_cfg))
    rel = Path("artifacts") / slug(cfg) / f"{rid}-kernel_image.npz"
    atomic_replace(Path(cfg.paths.results) / rel,
                   lambda tmp: np.savez_compressed(tmp, approx=approx, exact=exact.astype(np.float32),
                                                   labels=ds.y_train[rows]))
    return str(rel)


def execute(cfg: DictConfig, data_fp: dict | None = None, rid: str = "run") -> dict:
    """Run ``cfg`` and return its record body (without writing it). Raises on failure."""
    timer = Timer()
    rec: dict = {"metrics": {}, "fitted": {}}
    data_fp = data_fp if data_fp is not None else {}
    # warnings (e.g. liblinear's ConvergenceWarning) go into the record, not the console
    with limit_threads(cfg.threads) as threads, PeakMemory() as mem, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_start = time.perf_counter()
        with timer("load_s"):
            ds = load(cfg, data_fp)
        dtype = np.dtype(cfg.dtype)
        Xtr = ds.X_train.astype(dtype, copy=False)
        run_cfg, extra = resolve_hyperparameters(cfg, ds, Xtr, timer, data_fp)
        rec.update(extra)
        predict = bool(cfg.eval.predict and cfg.model.get("_target_"))
        shared = None
        if cfg.eval.get("share_fit"):
            shared = SharedFits(cfg.paths.results, SharedFits.key(run_cfg, data_fp), f"{slug(cfg)}/{rid}")
        fmap, Ztr, fit_source = featurize(run_cfg, Xtr, ds.y_train, timer, transform_train=predict,
                                          shared=shared)
        if fit_source is not None:
            rec["fit_shared_from"] = fit_source
        rec["fitted"].update(fitted_summary(fmap))
        if predict:
            rec["memory"] = {"feature_bytes": _nbytes(Ztr)}
        if cfg.eval.kernel_error:
            rows = kernel_error_rows(cfg, Xtr.shape[0])
            with timer("kernel_error_s"):
                if Ztr is not None:
                    Z_rows = Ztr[rows]
                else:
                    with timer("transform_kernel_rows_s"):
                        Z_rows = fmap.transform(Xtr[rows])
                rec["metrics"].update(kernel_error(run_cfg, ds, Xtr, Z_rows, rows))
            del Z_rows
        if int(cfg.eval.get("kernel_image_points") or 0) > 0:
            with timer("kernel_image_s"):
                rec["artifacts"] = {"kernel_image": _kernel_image(cfg, run_cfg, rid, fmap, Xtr, ds)}
        if predict:
            metrics, fitted = fit_and_score(run_cfg, fmap, ds, Ztr, dtype, timer)
            rec["metrics"].update(metrics)
            rec["fitted"].update(fitted)
        del Ztr
        timer["total_s"] = time.perf_counter() - t_start
        if fit_source is not None:  # as if this run had fitted its map: the fit's time, not the load's
            timer["total_s"] += timer["fit_s"] - timer["fit_load_s"]
        rec["threads"] = threads.report()
    rec["timings"] = dict(timer)
    if caught:
        rec["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    rec.setdefault("memory", {}).update(mem.report())
    rec["dataset"] = ds.summary()
    return rec


# ----------------------------------------------------------------------------- recording


def _public(node: dict) -> dict:
    return {k: v for k, v in node.items() if k != "_target_"}


def _reusable(root, cid: str) -> dict | None:
    pointer = Path(root) / "compute" / cid
    try:
        slug_, rid = pointer.read_text().strip().split("/", 1)
    except (OSError, ValueError):
        return None
    rec = RecordStore(root, slug_).read(rid)
    return rec if rec is not None and rec.get("status") == FINISHED and rec.get("compute_id") == cid else None


def identify(cfg: DictConfig) -> tuple[str, str, dict, DatasetUnavailable | None]:
    """(run id, compute id, data fingerprint, unavailability) of ``cfg``.

    The data fingerprint needs the data files (fetched if absent); when they
    cannot be had, the identity says so (``{"unavailable": name}``) and the
    error is returned to be recorded.
    """
    try:
        fp = fingerprint(cfg.dataset, data_dir=cfg.paths.data, mirror=cfg.mirror)
        err = None
    except DatasetUnavailable as exc:
        fp, err = {"unavailable": cfg.dataset.get("name")}, exc
    rid, cid = identities(cfg, fp)
    return rid, cid, fp, err


def _base_record(cfg: DictConfig, rid: str, cid: str, fp: dict) -> dict:
    resolved = OmegaConf.to_container(cfg, resolve=True)
    base = {
        "run_id": rid,
        "compute_id": cid,
        "paper": cfg.study.paper,
        "figure": cfg.study.item,
        "study": f"{cfg.study.paper}/{cfg.study.item}",
        "arm": cfg.arm or f"{cfg.method.name}+{cfg.model.name}",
        "seed": int(cfg.seed),
        "smoke": bool(cfg.smoke),
        "method": _public(resolved["method"]),
        "model": _public(resolved["model"]),
        "eval": resolved["eval"],
        "dtype": str(cfg.dtype),
        "data_fingerprint": fp,
        "code_version": code_version(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "env": provenance(),
        "executor": os.environ.get("RFREPRO_EXECUTOR", "local"),
        "host": socket.gethostname(),
        "host_load": {"start_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count()},
        "config": resolved,
    }
    base["n_components"] = base["method"].get("n_components")
    return base


def record_failure(cfg: DictConfig, ident: tuple, cause: str) -> dict:
    """Write a ``failed`` record for a run that could not report itself (e.g. its worker died)."""
    rid, cid, fp, _ = ident
    store = RecordStore(cfg.paths.results, slug(cfg))
    rec = {**_base_record(cfg, rid, cid, fp), "status": FAILED, "error": cause,
           "error_type": cause.split(" (", 1)[0].split(":", 1)[0],
           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    store.write(rec)
    return rec


def _parent_alive(parent: int | None) -> bool:
    return parent is None or os.getppid() == parent


def run_and_record(cfg: DictConfig, store: RecordStore | None = None, *, ident=None,
                   parent: int | None = None) -> dict:
    """Run ``cfg`` unless a finished record of the same computation exists; leave one record.

    A run that raises leaves a ``failed`` record with its traceback (or
    ``unavailable`` when its data cannot be had, ``refused`` when it needs more
    memory than its ``max_memory_gb`` budget); none counts as finished,
    so the next sweep tries it again. A run another process is computing
    (its lock is held) is not started: the result says ``busy``. ``parent``:
    the pid of the sweep that started this worker; if it has died the
    record is not written (no orphan keeps writing).
    """
    store = store or RecordStore(cfg.paths.results, slug(cfg))
    rid, cid, fp, unavailable = ident or identify(cfg)
    if not cfg.force and store.is_finished(rid):
        rec = store.read(rid)
        rec["_skipped"] = True
        return rec
    lock = store.lock(rid)
    if not lock.acquire():
        return {"run_id": rid, "status": BUSY, "arm": cfg.arm, "study": f"{cfg.study.paper}/{cfg.study.item}"}
    with lock:
        if not cfg.force and store.is_finished(rid):  # finished by another process meanwhile
            rec = store.read(rid)
            rec["_skipped"] = True
            return rec
        base = _base_record(cfg, rid, cid, fp)
        previous = store.read(rid)
        if previous is not None and previous.get("status") == FAILED:  # keep the trace of a retry
            base["previous_attempt"] = {k: previous.get(k) for k in ("error", "finished", "executor")}
        source = None if cfg.force else _reusable(cfg.paths.results, cid)
        if source is not None:
            keep = {k: source[k] for k in ("metrics", "fitted", "timings", "memory", "dataset", "kernel", "cv",
                                           "threads", "started", "finished", "env", "warnings", "host_load")
                    if k in source}
            rec = {**base, **keep, "status": FINISHED,
                   "reused_from": f"{source['paper']}-{source['figure']}/{source['run_id']}"}
            store.write(rec)
            return rec
        if unavailable is not None:
            body, status = {"dataset": {"name": cfg.dataset.get("name")}}, UNAVAILABLE
            extra = {"error": f"{type(unavailable).__name__}: {unavailable}",
                     "error_type": type(unavailable).__name__, "urls_tried": list(unavailable.urls)}
        else:
            try:
                body, status, extra = execute(cfg, fp, rid), FINISHED, {}
            except Exception as exc:  # noqa: BLE001 - every failure must leave a record
                status = (UNAVAILABLE if isinstance(exc, DatasetUnavailable)
                          else REFUSED if isinstance(exc, MemoryBudgetExceeded) else FAILED)
                body = {"dataset": {"name": cfg.dataset.get("name")}}
                extra = {"error": f"{type(exc).__name__}: {exc}", "error_type": type(exc).__name__,
                         "traceback": traceback.format_exc()}
                if isinstance(exc, DatasetUnavailable):
                    extra["urls_tried"] = list(exc.urls)
        rec = {**base, **body, **extra, "status": status,
               "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if status == FINISHED:  # how busy the host was: the context of every time in the record
            rec["host_load"] = {"start_1min": base["host_load"]["start_1min"],
                                "end_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count()}
            if "sigma" in rec["method"] and "kernel" in body:  # the number used, not the rule
                rec["method"]["sigma"] = body["kernel"]["sigma"]
        if not _parent_alive(parent):  # the sweep is gone: write nothing, stop
            os.kill(os.getpid(), signal.SIGTERM)
        if status != FINISHED and previous is not None and previous.get("status") == FINISHED:
            # a forced rerun that did not finish leaves the finished record in place, with a note
            previous["forced_rerun"] = {k: rec.get(k) for k in ("status", "error", "error_type", "finished")}
            store.write(previous)
            return rec
        store.write(rec)
        if status == FINISHED:
            atomic_write_text(Path(cfg.paths.results) / "compute" / cid, f"{store.slug}/{rid}")
    return rec
