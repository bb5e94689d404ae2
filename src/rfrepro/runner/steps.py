"""One run's steps: dataset x feature map x model x seed -> the numbers of its record.

A run is a short list of named steps, each with one owner:

1. :func:`load` the data (the variant named by the run's data fingerprint);
2. :func:`resolve_hyperparameters`: the bandwidth rule, once, and the
   cross-validated sigma / lambda where the study asks for it;
3. :func:`featurize`: fit the map once and transform each split once
   (or load it from :class:`rfrepro.runner.fits.SharedFits`);
4. :func:`kernel_error` of the map on fixed training rows, or
   :func:`heldout_kernel_error` on test rows no map was fitted on, their
   train x test block and, beside them, the training rows' own block (when asked);
5. :func:`fit_and_score` the model, and the final fit at the chosen lambda
   timed apart from the lambda search (when asked);
6. :func:`roofline`: the timed transforms against the host's peak rates;
7. :func:`execute` runs them in order and returns the record's body.

:mod:`rfrepro.runner.record` wraps :func:`execute` with identity, lock, reuse
and the record file.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf, open_dict
from sklearn.base import TransformerMixin, clone

from rfrepro.atomic import atomic_replace
from rfrepro.data import load_dataset
from rfrepro.features._base import fitted_summary
from rfrepro.kernels import kernel_matrix, resolve_bandwidth
from rfrepro.layout import ResultsLayout, study_slug
from rfrepro.metrics import (
    KernelReference,
    cross_kernel_errors,
    kernel_errors,
    kernel_spectra,
    prediction_metrics,
)
from rfrepro.runner.env import limit_threads
from rfrepro.runner.fits import SharedFits
from rfrepro.runner.memory import PeakMemory

#: Kernels whose bandwidth is a distance scale (resolved from a rule like "median").
SHIFT_INVARIANT = ("gaussian", "laplacian")
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


def _nnz(Z) -> int:
    """Stored values of the features (a dense Z: every entry; a sparse one: its non-zeros)."""
    return int(Z.nnz) if sp.issparse(Z) else int(np.asarray(Z).size)


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
        # a sensitivity arm runs at a multiple of the bandwidth (of the rule's value on its own rows)
        if cfg.kernel.get("sigma_scale") is not None:
            kernel["sigma_scale"] = float(cfg.kernel.sigma_scale)
            sigma *= kernel["sigma_scale"]
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
              if k not in ("name", "sigma_rule", "sigma_scale") and v is not None}
    if run_cfg.kernel.name not in SHIFT_INVARIANT:
        params.pop("sigma", None)
    return params


#: The exact kernel blocks of the last run's kernel errors, by key (:func:`_reference_key`): every map of a
#: seed is evaluated on the same rows, so the blocks are computed once per process and seed.
_KREF_CACHE: dict[tuple, KernelReference] = {}


def _kernel_references(blocks: dict[str, tuple]) -> dict[str, KernelReference]:
    """The exact kernel blocks a run's errors need, by name, each given as ``(key, build)``.

    A block is built (``build()``) only when the previous run did not need
    the same key; the cache keeps only this run's blocks, so at most one
    run's worth of n x n matrices stays alive.
    """
    keys = {key for key, _ in blocks.values()}
    for stale in [k for k in _KREF_CACHE if k not in keys]:
        del _KREF_CACHE[stale]
    for key, build in blocks.values():
        if key not in _KREF_CACHE:
            _KREF_CACHE[key] = build()
    return {name: _KREF_CACHE[key] for name, (key, _) in blocks.items()}


def _square_block(X64: np.ndarray, kernel: str, params: dict) -> tuple:
    """``(key, build)`` of the exact kernel among the rows ``X64``."""
    return (_reference_key(X64, kernel, params),
            lambda: KernelReference.from_matrix(kernel_matrix(kernel, X64, **params)))


def kernel_error_rows(cfg: DictConfig, n: int) -> np.ndarray:
    pts = min(int(cfg.eval.kernel_error_points), n)
    return np.sort(np.random.RandomState(cfg.eval.kernel_error_seed).choice(n, pts, replace=False))


def _reference_key(X: np.ndarray, kernel: str, params: dict) -> tuple:
    """The exact kernel's cache key: the evaluation rows' bytes and the kernel (rows differ per seed
    when each seed draws its own subsample)."""
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()
    return (digest, X.shape, str(X.dtype), kernel, repr(sorted(params.items())))


def kernel_error(run_cfg: DictConfig, ds, X, Z_rows, rows) -> dict:
    """Kernel-approximation errors (and spectra when ``eval.spectrum_k``) on ``rows`` of X."""
    block = _square_block(X[rows].astype(np.float64), run_cfg.kernel.name, kernel_params(run_cfg))
    ref = _kernel_references({"rows": block})["rows"]
    out = kernel_errors(ref, Z_rows)
    k = int(run_cfg.eval.get("spectrum_k") or 0)
    if k > 0:
        out.update(kernel_spectra(ref, Z_rows, k))
    return out


def heldout_kernel_error(cfg: DictConfig, run_cfg: DictConfig, fmap, Xtr, Ztr, Xte, timer: Timer) -> dict:
    """Kernel errors on held-out rows (the test block and the train x test block), and on training rows.

    ``eval.kernel_error_points`` test rows (drawn with ``eval.kernel_error_seed``
    from the run's test split, so the same rows for every map of a seed) that
    no map saw when it was fitted: ``kerr_fro`` / ``kerr_spec`` / ``nrms`` of
    their kernel block, and ``kerr_cross_fro`` / ``kerr_cross_spec`` of the
    block between as many training rows (drawn the same way) and them: the
    train x test block is what prediction uses, and a sample of its rows
    keeps its cost that of the test block's. A data-dependent map (Nystrom, TEFM, leverage RFF, RFF selection,
    random binning's bins) is judged on points it did not fit, as any map is.
    ``train_kerr_fro`` / ``train_kerr_spec`` / ``train_nrms``: the same errors on
    the sampled training rows' own block, the rows such a map was fitted on
    (the reading of papers that measure the kernel error on their training
    data), so a claim can be read both ways.
    ``Ztr``: the training features when the run computed them (else the
    sampled training rows are transformed here).
    """
    if Xte is None:
        raise ValueError("eval.kernel_error_split is 'test' but the dataset has no test split")
    rows = kernel_error_rows(cfg, Xte.shape[0])
    Xr = Xte[rows]
    with timer("transform_kernel_rows_s"):
        Zr = fmap.transform(Xr)
    train_rows = kernel_error_rows(cfg, Xtr.shape[0])
    Zt = Ztr[train_rows] if Ztr is not None else fmap.transform(Xtr[train_rows])
    name, params = run_cfg.kernel.name, kernel_params(run_cfg)
    X64, T64 = Xr.astype(np.float64), Xtr[train_rows].astype(np.float64)
    test, train = _square_block(X64, name, params), _square_block(T64, name, params)
    refs = _kernel_references({
        "test": test, "train": train,
        "cross": (("cross", train[0], test[0]),
                  lambda: KernelReference.from_block(kernel_matrix(name, T64, X64, **params)))})
    out = kernel_errors(refs["test"], Zr)
    out.update(cross_kernel_errors(refs["cross"], Zt, Zr))
    out.update({f"train_{k}": v for k, v in kernel_errors(refs["train"], Zt).items()})
    out["kerr_rows"] = int(rows.size)
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


def warm_up(estimator, X, y, rows: int, *, transform: bool = False) -> None:
    """Fit a copy of ``estimator`` on the first ``rows`` rows (and transform them), untimed and unrecorded.

    The first call of a code path in a process pays one-time costs (numba
    compiling or loading its kernels, lazy imports, thread pools): about a
    second for a map, about 10 s for the parallel coordinate descent after a
    code change, which a timing study would count as the time of whichever run
    a worker does first. Used for the map (``transform=True``) and the model.
    An estimator that cannot be fitted on so few rows (more landmarks than
    rows, say) is left cold: the warm-up only removes a cost.
    """
    if rows <= 0:
        return
    part = slice(0, min(rows, X.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fitted = clone(estimator).fit(X[part], None if y is None else y[part])
            if transform:
                fitted.transform(X[part])
        except Exception:  # noqa: BLE001 - an estimator too big for the warm-up rows stays cold
            pass


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
    warm_up(fmap, X, y, int(run_cfg.eval.get("warmup_rows") or 0), transform=True)
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


def fit_and_score(run_cfg: DictConfig, fmap, ds, Ztr, dtype, timer: Timer) -> tuple[dict, dict, float | None]:
    """Train the model on ``Ztr``; score validation and test splits (and train if asked).

    Returns the metrics, the fitted model's recorded attributes and the lambda
    of the final fit timed apart (``eval.time_final_fit``; None when not timed).
    """
    model = _build(run_cfg.model)
    check_compatible(fmap, model, ds.task)
    warm_up(model, Ztr, ds.y_train, int(run_cfg.eval.get("warmup_rows") or 0))
    with timer("train_s"):
        model.fit(Ztr, ds.y_train)
    final_lam = None
    if run_cfg.eval.time_final_fit:
        final = final_model(model)
        if final is not None:
            final_lam = final.lam
            with timer("final_fit_s"):
                final.fit(Ztr, ds.y_train)
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
    return metrics, fitted, final_lam


def final_model(model):
    """An unfitted copy of ``model`` with its lambda fixed at the value its search chose, or None.

    ``eval.time_final_fit``: the search over lambda (leave-one-out or k-fold
    CV down a grid) is how a study picks lambda, not what a user of the map
    pays once lambda is known; the final fit at the chosen lambda is timed on
    its own (``final_fit_s``), from scratch, and ``train_s`` keeps the whole
    search. None for a model without a searched ``lam`` (its ``train_s`` is
    its one fit).
    """
    params = model.get_params()
    if params.get("lam") != "cv" or getattr(model, "lam_", None) is None:
        return None
    return clone(model).set_params(lam=float(model.lam_))


#: The steps :func:`time_repeats` times again: the map (fit, training transform) and the training
#: (the final fit alone where it is timed apart from the lambda search).
REPEATED_STEPS = ("fit_s", "transform_train_s", "fit_transform_s", "train_s", "final_fit_s")


def time_repeats(run_cfg: DictConfig, X, y, timer: Timer, repeats: int, *, predict: bool,
                 budget_s: float | None = None, final_lam: float | None = None) -> dict:
    """Time the map and the training up to ``repeats - 1`` more times; keep each step's fastest in ``timer``.

    A timing on a shared host is the step's cost plus whatever else held the
    core; the minimum over repetitions is the least disturbed one (the rule
    of :mod:`timeit`). ``final_lam``: the training repeated is the final
    fit at that lambda (``final_fit_s``), not the lambda search, which is
    timed once. Each repetition fits a fresh map with the run's own
    seed on the same rows, so it repeats the same computation; the scores of
    the record are those of the first. Returns every repetition's seconds
    per step (first one first), which the record keeps as ``timings_repeats``.

    ``budget_s``: no repetition when the steps took at least this many
    seconds in all the first time. A disturbance of a fraction of a second
    decides a timing of a few milliseconds, not one of many seconds (on Chen
    et al.'s Table 1, the first of three timings of the steps of a run that
    took 10 s or more was at most 1.16 times the fastest, 1.03 at the
    median), and such runs cost half of the repetitions' time there.
    """
    if final_lam is not None:  # the search is not repeated: the final fit is the training a user pays
        steps = [k for k in REPEATED_STEPS if k in timer and k != "train_s"]
    else:
        steps = [k for k in REPEATED_STEPS if k in timer and k != "final_fit_s"]
    seen = {k: [timer[k]] for k in steps}
    if budget_s is not None and sum(timer[k] for k in steps) >= budget_s:
        return seen
    for _ in range(repeats - 1):
        t = Timer()
        _, Z, _ = featurize(run_cfg, X, y, t, transform_train=predict)
        if predict:
            model = _build(run_cfg.model)
            if final_lam is not None:
                model.set_params(lam=final_lam)
            with t("final_fit_s" if final_lam is not None else "train_s"):
                model.fit(Z, y)
        del Z
        for k in steps:
            seen[k].append(t[k])
    for k in steps:
        timer[k] = min(seen[k])
    return seen


#: The transforms a record's ``roofline`` covers: the training rows (its top level), the test rows and
#: the kernel-error rows (transformed on their own when the training rows are not).
ROOFLINE_SPLITS = ("train", "test", "kernel_rows")


def roofline(fmap, rows: dict[str, int], timings: dict, dtype, peaks: dict | None) -> dict | None:
    """Each timed transform against the host's roofline; None without ``peaks`` (or a declared cost).

    ``peaks`` (``gemm_f32``, ``gemm_f64`` flop/s, ``bandwidth`` bytes/s) are the host's, measured
    by the caller; the map declares the flops and bytes of ``n`` rows (``fmap.cost(n, dtype)``).
    predicted_s = max(flops / GEMM peak at the dtype, bytes / bandwidth), measured_s the step's
    time in ``timings`` (the fastest of the repeats), fraction = predicted_s / measured_s.
    The training transform's numbers are the top level, the others' under their split's name
    (``test``, ``kernel_rows``); a transform not timed on its own (a map's fit_transform) is left out.
    """
    if peaks is None:
        return None
    dtype = np.dtype(dtype)
    rate = float(peaks["gemm_f32"] if dtype == np.float32 else peaks["gemm_f64"])
    out: dict = {"host": {k: float(peaks[k]) for k in ("gemm_f32", "gemm_f64", "bandwidth")},
                 "dtype": dtype.name}
    for split in ROOFLINE_SPLITS:
        measured, n = timings.get(f"transform_{split}_s"), rows.get(split, 0)
        if measured is None or not n:
            continue
        try:
            c = fmap.cost(int(n), dtype)
        except (AttributeError, NotImplementedError):  # a map from outside rfrepro
            return None
        predicted = max(c["flops"] / rate, c["bytes"] / float(peaks["bandwidth"]))
        entry = {"rows": int(n), "flops": c["flops"], "bytes": c["bytes"], "predicted_s": predicted,
                 "measured_s": measured, "fraction": predicted / measured if measured > 0 else None}
        if split == "train":
            out.update(entry)
        else:
            out[split] = entry
    return out


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
    layout = ResultsLayout(cfg.paths.results)
    rel = layout.artifact(study_slug(cfg), f"{rid}-kernel_image.npz")
    atomic_replace(layout.root / rel,
                   lambda tmp: np.savez_compressed(tmp, approx=approx, exact=exact.astype(np.float32),
                                                   labels=ds.y_train[rows]))
    return str(rel)


def execute(cfg: DictConfig, data_fp: dict | None = None, rid: str = "run",
            host_peaks: dict | None = None) -> dict:
    """Run ``cfg`` and return its record body (without writing it). Raises on failure.

    ``host_peaks``: the host's peak rates, for the record's ``roofline`` (None: ``roofline: null``).
    """
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
            shared = SharedFits(cfg.paths.results, SharedFits.key(run_cfg, data_fp), f"{study_slug(cfg)}/{rid}")
        fmap, Ztr, fit_source = featurize(run_cfg, Xtr, ds.y_train, timer, transform_train=predict,
                                          shared=shared)
        if fit_source is not None:
            rec["fit_shared_from"] = fit_source
        rec["fitted"].update(fitted_summary(fmap))
        if predict:
            rec["memory"] = {"feature_bytes": _nbytes(Ztr), "feature_nnz": _nnz(Ztr)}
        if cfg.eval.kernel_error and cfg.eval.kernel_error_split == "test":
            with timer("kernel_error_s"):
                rec["metrics"].update(heldout_kernel_error(cfg, run_cfg, fmap, Xtr, Ztr, ds.X_test, timer))
        elif cfg.eval.kernel_error:
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
        final_lam = None
        if predict:
            metrics, fitted, final_lam = fit_and_score(run_cfg, fmap, ds, Ztr, dtype, timer)
            rec["metrics"].update(metrics)
            rec["fitted"].update(fitted)
        del Ztr
        repeats = int(cfg.eval.get("time_repeats") or 1)
        if repeats > 1 and fit_source is None:
            budget = cfg.eval.get("time_repeats_budget_s")
            rec["timings_repeats"] = time_repeats(run_cfg, Xtr, ds.y_train, timer, repeats, predict=predict,
                                                  budget_s=None if budget is None else float(budget),
                                                  final_lam=final_lam)
        timer["total_s"] = time.perf_counter() - t_start
        if fit_source is not None:  # as if this run had fitted its map: the fit's time, not the load's
            timer["total_s"] += timer["fit_s"] - timer["fit_load_s"]
        rec["threads"] = threads.report()
    rec["timings"] = dict(timer)
    n_rows = {"train": Xtr.shape[0], "test": 0 if ds.X_test is None else ds.X_test.shape[0],
              "kernel_rows": int(rec["metrics"].get("kerr_rows", 0)) if "kerr_rows" in rec["metrics"]
              else len(kernel_error_rows(cfg, Xtr.shape[0])) if cfg.eval.kernel_error else 0}
    rec["roofline"] = roofline(fmap, n_rows, rec["timings"], dtype, host_peaks)
    if caught:
        rec["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    rec.setdefault("memory", {}).update(mem.report())
    rec["dataset"] = ds.summary()
    return rec
