"""The in-memory form every loader returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TASKS = ("regression", "binary", "multiclass")


@dataclass
class Dataset:
    """Train/test arrays plus what the run record needs to know about them.

    ``meta`` carries provenance: source URLs and files used, which variant or
    substitute was loaded (e.g. cpuact vs cpusmall), the subsample seed, and
    for generated data the Bayes error where it is known.
    """

    name: str
    task: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    #: optional validation split (model selection without touching the test split)
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"dataset {self.name!r}: task {self.task!r} not in {TASKS}")
        for part in ("train", "test", "val"):
            X, y = getattr(self, f"X_{part}"), getattr(self, f"y_{part}")
            if X is None:
                continue
            if X.ndim != 2 or y is None or len(y) != X.shape[0]:
                raise ValueError(f"dataset {self.name!r}: X_{part} / y_{part} shapes disagree")
            if not np.isfinite(X).all():
                raise ValueError(f"dataset {self.name!r}: X_{part} contains NaN or inf")

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])

    def summary(self) -> dict:
        """Shape facts recorded with every run."""
        return {
            "name": self.name,
            "task": self.task,
            "n_train": int(self.X_train.shape[0]),
            "n_test": 0 if self.X_test is None else int(self.X_test.shape[0]),
            "n_val": 0 if self.X_val is None else int(self.X_val.shape[0]),
            "d": self.n_features,
            **{k: v for k, v in self.meta.items() if isinstance(v, (str, int, float, bool))},
        }
