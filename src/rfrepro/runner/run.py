"""One run: dataset x feature map x model x seed -> one record."""

from __future__ import annotations

import hashlib
import json
import time
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf, open_dict

from rfrepro.data import load_dataset
from rfrepro.kernels import kernel_matrix, resolve_bandwidth
from rfrepro.metrics import KernelReference, kernel_errors, prediction_metrics
from rfrepro.results.store import FINISHED, RecordStore, atomic_write_text
from rfrepro.runner.env import limit_threads, provenance
from rfrepro.runner.memory import PeakMemory

#: Config keys that define what a run computes (its identity). Paths, force,
#: threads and labels are left out so they never invalidate finished runs.
IDENTITY_KEYS = ("study", "dataset", "method", "model", "kernel", "seed", "dtype", "eval", "smoke")
#: Fitted attributes of a feature map worth recording, when present.
FITTED_ATTRS = ("n_features_out_", "sigma_", "n_selected_", "q_", "block_size_")


def slug(cfg: DictConfig) -> str:
    return f"{cfg.study.paper}-{cfg.study.item}"


def _hash(cfg: DictConfig, keys) -> str:
    resolved = OmegaConf.to_container(cfg, resolve=True)
    blob = json.dumps({k: resolved.get(k) for k in keys}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def run_id(cfg: DictConfig) -> str:
    """Hash of the resolved config keys that define the run (order-independent)."""
    return _hash(cfg, IDENTITY_KEYS)


def compute_id(cfg: DictConfig) -> str:
    """Hash of what the run computes, whichever study it belongs to.

    Two studies that contain the same computation (e.g. the KSVM curve shared
    by Sun et al.'s Fig. 1, Fig. 2 and appendix) share its result: the second
    record copies the first and names it in ``reused_from``.
    """
    return _hash(cfg, [k for k in IDENTITY_KEYS if k != "study"])


def _reusable(root, cid: str) -> dict | None:
    pointer = Path(root) / "compute" / cid
    try:
        slug_, rid = pointer.read_text().strip().split("/", 1)
    except (OSError, ValueError):
        return None
    rec = RecordStore(root, slug_).read(rid)
    return rec if rec is not None and rec.get("status") == FINISHED else None


def _public(node) -> dict:
    return {k: v for k, v in OmegaConf.to_container(node, resolve=True).items() if k != "_target_"}


def _build(node, **extra):
    params = OmegaConf.to_container(node, resolve=True)
    params.pop("name", None)
    params.update(extra)
    return instantiate(params)


class _Timer:
    def __init__(self):
        self.t = {}

    def add(self, key: str, seconds: float) -> None:
        self.t[key] = self.t.get(key, 0.0) + seconds

    def __call__(self, key):
        timer = self

        class _Ctx:
            def __enter__(self_inner):
                self_inner.t0 = time.perf_counter()

            def __exit__(self_inner, *exc):
                timer.add(key, time.perf_counter() - self_inner.t0)
                return False

        return _Ctx()


_KREF_CACHE: dict[str, KernelReference] = {}


def _kernel_reference(key: str, X: np.ndarray, kernel: str, params: dict) -> KernelReference:
    """The exact K of the evaluation rows: computed once per process and reused."""
    if key not in _KREF_CACHE:
        _KREF_CACHE.clear()  # keep at most one n x n matrix alive
        _KREF_CACHE[key] = KernelReference.from_matrix(kernel_matrix(kernel, X.astype(np.float64), **params))
    return _KREF_CACHE[key]


def _compatible(fmap, model) -> None:
    out_kind = getattr(fmap, "output_kind", "features")
    if "precomputed" in model.get_params():
        model.set_params(precomputed=(out_kind == "kernel"))
    in_kind = getattr(model, "input_kind", "features")
    if in_kind != out_kind:
        raise ValueError(
            f"model {type(model).__name__} needs {in_kind} input but the method "
            f"{type(fmap).__name__} produces {out_kind}"
        )


def _kernel_image(cfg: DictConfig, fmap, X, ds, sigma) -> str:
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
    Z = np.asarray(fmap.transform(X[rows]), dtype=np.float64)
    exact = kernel_matrix(cfg.kernel.name, X[rows].astype(np.float64), sigma=sigma)
    rel = Path("artifacts") / slug(cfg) / f"{run_id(cfg)}-kernel_image.npz"
    path = Path(cfg.paths.results) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, approx=(Z @ Z.T).astype(np.float32), exact=exact.astype(np.float32),
                        labels=ds.y_train[rows])
    tmp.replace(path)
    return str(rel)


def _chunked_predict(fmap, model, X, rows: int, timer: _Timer) -> np.ndarray:
    preds = []
    for start in range(0, X.shape[0], rows):
        with timer("map_transform_s"):
            Z = fmap.transform(X[start : start + rows])
        with timer("predict_s"):
            preds.append(model.predict(Z))
    return np.concatenate(preds)


def execute(cfg: DictConfig) -> dict:
    """Run ``cfg`` and return its record (without writing it). Raises on failure."""
    timer = _Timer()
    rec: dict = {"metrics": {}, "fitted": {}}
    # warnings (e.g. liblinear's ConvergenceWarning) go into the record, not the console
    with limit_threads(cfg.threads), PeakMemory() as mem, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_start = time.perf_counter()
        with timer("load_s"):
            ds = load_dataset(cfg.dataset, seed=cfg.seed, data_dir=cfg.paths.data, mirror=cfg.mirror)
        dtype = np.dtype(cfg.dtype)
        Xtr = ds.X_train.astype(dtype, copy=False)
        Xte = None if ds.X_test is None else ds.X_test.astype(dtype, copy=False)

        # resolve the bandwidth once so every map, exact kernel and record agree
        sigma = resolve_bandwidth(Xtr, cfg.kernel.sigma, kernel=cfg.kernel.name, random_state=cfg.seed) \
            if cfg.kernel.name != "polynomial" else None
        run_cfg = cfg.copy()
        cv = cfg.get("cv")
        if cv is not None and cv.get("enabled"):
            from rfrepro.runner.cv import choose

            with timer("cv_s"):
                chosen = choose(Xtr, ds.y_train, ds.task, sigma, OmegaConf.to_container(cv, resolve=True),
                                {"dataset": OmegaConf.to_container(cfg.dataset, resolve=True),
                                 "kernel": cfg.kernel.name,
                                 # generated data: each seed has its own training sample
                                 "train_seed": ds.meta.get("train_seed")}, cfg.paths.results)
            sigma = chosen["sigma"]
            rec["cv"] = {k: v for k, v in chosen.items() if k != "grid"}
            with open_dict(run_cfg):
                run_cfg.model.lam = chosen["lam"]
        with open_dict(run_cfg):
            run_cfg.kernel.sigma = sigma
        rec["kernel"] = {"name": cfg.kernel.name, "sigma_spec": cfg.kernel.sigma, "sigma": sigma}

        fmap = _build(run_cfg.method)
        with timer("map_fit_s"):
            fmap.fit(Xtr, ds.y_train)
        for attr in FITTED_ATTRS:
            if hasattr(fmap, attr):
                rec["fitted"][attr.rstrip("_")] = getattr(fmap, attr)
        rec["fitted"].update(getattr(fmap, "record_", {}) or {})

        if cfg.eval.kernel_error:
            pts = min(int(cfg.eval.kernel_error_points), Xtr.shape[0])
            rows = np.sort(np.random.RandomState(cfg.eval.kernel_error_seed).choice(Xtr.shape[0], pts, replace=False))
            key = f"{ds.name}:{ds.meta.get('variant', '')}:{Xtr.shape}:{pts}:{cfg.eval.kernel_error_seed}:{cfg.kernel.name}:{sigma}"
            with timer("kernel_error_s"):
                ref = _kernel_reference(key, Xtr[rows], cfg.kernel.name, {"sigma": sigma})
                with timer("map_transform_s"):
                    Zs = fmap.transform(Xtr[rows])
                rec["metrics"].update(kernel_errors(ref, Zs))
            del Zs

        if int(cfg.eval.get("kernel_image_points") or 0) > 0:
            with timer("kernel_image_s"):
                rec["artifacts"] = {"kernel_image": _kernel_image(cfg, fmap, Xtr, ds, sigma)}

        if cfg.eval.predict and cfg.model.get("_target_"):
            model = _build(run_cfg.model)
            _compatible(fmap, model)
            with timer("map_transform_s"):
                Ztr = fmap.transform(Xtr)
            rec["memory"] = {"feature_bytes": int(Ztr.nbytes)}
            with timer("train_s"):
                model.fit(Ztr, ds.y_train)
            for attr in ("C_", "n_iter_", "converged_"):
                if hasattr(model, attr):
                    rec["fitted"][f"model_{attr.rstrip('_')}"] = getattr(model, attr)
            if cfg.eval.train_metrics:
                with timer("predict_s"):
                    yhat_tr = model.predict(Ztr)
                rec["metrics"].update(
                    {f"train_{k}": v for k, v in prediction_metrics(ds.task, ds.y_train, yhat_tr).items()}
                )
            del Ztr
            if ds.X_val is not None:
                yhat_val = _chunked_predict(fmap, model, ds.X_val.astype(dtype, copy=False),
                                            int(cfg.eval.test_chunk_rows), timer)
                rec["metrics"].update(
                    {f"val_{k}": v for k, v in prediction_metrics(ds.task, ds.y_val, yhat_val).items()}
                )
            if Xte is not None:
                yhat = _chunked_predict(fmap, model, Xte, int(cfg.eval.test_chunk_rows), timer)
                rec["metrics"].update(
                    prediction_metrics(ds.task, ds.y_test, yhat, bayes_error=ds.meta.get("bayes_error"))
                )
        timer.t["total_s"] = time.perf_counter() - t_start
    rec["timings"] = timer.t
    if caught:
        rec["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    rec.setdefault("memory", {}).update({"peak_rss_bytes": mem.peak, "run_rss_delta_bytes": mem.delta})
    rec["dataset"] = ds.summary()
    return rec


def _is_unavailable(exc: BaseException) -> bool:
    try:
        from rfrepro.data.download import DatasetUnavailable
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, DatasetUnavailable)


def run_and_record(cfg: DictConfig, store: RecordStore | None = None) -> dict:
    """Run ``cfg`` unless a finished record exists; always leave exactly one record.

    A run that raises leaves a ``failed`` record with its traceback (or
    ``unavailable`` when its data cannot be had); neither counts as finished,
    so the next sweep tries it again.
    """
    store = store or RecordStore(cfg.paths.results, slug(cfg))
    rid, cid = run_id(cfg), compute_id(cfg)
    if not cfg.force and store.is_finished(rid):
        rec = store.read(rid)
        rec["_skipped"] = True
        return rec
    base = {
        "run_id": rid,
        "paper": cfg.study.paper,
        "figure": cfg.study.item,
        "study": f"{cfg.study.paper}/{cfg.study.item}",
        "arm": cfg.arm or f"{cfg.method.name}+{cfg.model.name}",
        "seed": int(cfg.seed),
        "smoke": bool(cfg.smoke),
        "method": _public(cfg.method),
        "model": _public(cfg.model),
        "eval": OmegaConf.to_container(cfg.eval, resolve=True),
        "dtype": str(cfg.dtype),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "env": provenance(),
        "config": OmegaConf.to_container(cfg, resolve=True),
        "config_hash": rid,
    }
    base["n_components"] = base["method"].get("n_components")
    base["compute_id"] = cid
    source = None if cfg.force else _reusable(cfg.paths.results, cid)
    if source is not None:
        keep = {k: source[k] for k in ("metrics", "fitted", "timings", "memory", "dataset", "kernel", "cv",
                                       "started", "finished", "env") if k in source}
        rec = {**base, **keep, "status": FINISHED,
               "reused_from": f"{source['paper']}-{source['figure']}/{source['run_id']}"}
        store.write(rec)
        return rec
    try:
        body = execute(cfg)
        status, extra = FINISHED, {}
    except Exception as exc:  # noqa: BLE001 - every failure must leave a record
        status = "unavailable" if _is_unavailable(exc) else "failed"
        body = {"dataset": {"name": cfg.dataset.get("name")}}
        extra = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    rec = {**base, **body, **extra, "status": status,
           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    store.write(rec)
    if status == FINISHED:
        atomic_write_text(Path(cfg.paths.results) / "compute" / cid, f"{store.slug}/{rid}")
    return rec
