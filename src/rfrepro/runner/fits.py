"""Fitted maps shared by runs that differ only in their model (``eval.share_fit``)."""

from __future__ import annotations

import joblib
from omegaconf import DictConfig, OmegaConf

from rfrepro.atomic import atomic_replace
from rfrepro.layout import ResultsLayout
from rfrepro.runner.identity import identities


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
        self.path = ResultsLayout(root).fit(key)
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
