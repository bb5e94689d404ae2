"""Build a study's outputs (table, figures, claims) from its run records alone.

The study's code lives in ``experiments/<paper>/<item>.py`` and may define:

- ``figure(table) -> matplotlib.figure.Figure``: saved as figures/<slug>.png and .pdf
- ``summary(table) -> str``: a markdown table, saved as tables/<slug>.md
- ``claims(table) -> list[dict]``: saved as claims/<slug>.json (see rfrepro.results.claim)

``table.attrs["results_root"]`` is the results root, against which the
artifact paths in the records (``artifacts.*`` columns) resolve.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd

from rfrepro.config import project_root
from rfrepro.results.store import RecordStore, _jsonable, atomic_write_text


def study_module(study: str) -> ModuleType:
    """Import ``experiments/<paper>/<item>.py`` (hyphens in the item become underscores)."""
    paper, item = study.split("/", 1)
    root = project_root()
    path = root / "experiments" / paper / f"{item.replace('-', '_')}.py"
    if not path.is_file():
        raise FileNotFoundError(f"study {study!r} has no module experiments/{paper}/{path.name}")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(f"experiments.{paper}.{path.stem}")


def slug_of(study: str) -> str:
    return study.replace("/", "-")


def build_outputs(study: str, results_root: str | Path) -> dict[str, Path]:
    """Write the table, figure, summary and claims of ``study``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    root = Path(results_root)
    slug = slug_of(study)
    table = RecordStore(root, slug).table()
    written: dict[str, Path] = {}
    if table.empty:
        return written
    # artifacts named in the records (e.g. kernel images) are relative to this root
    table.attrs["results_root"] = str(root)
    tpath = root / "tables" / f"{slug}.parquet"
    tpath.parent.mkdir(parents=True, exist_ok=True)
    tmp = tpath.with_suffix(".parquet.tmp")
    table.to_parquet(tmp, index=False)
    tmp.replace(tpath)
    written["table"] = tpath

    module = study_module(study)
    ok = table[table["status"] == "ok"] if "status" in table else table
    if hasattr(module, "figure"):
        fig = module.figure(table)
        for ext in ("png", "pdf"):
            fpath = root / "figures" / f"{slug}.{ext}"
            fpath.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(fpath, dpi=130, bbox_inches="tight")
            written[f"figure_{ext}"] = fpath
        plt.close(fig)
    if hasattr(module, "summary"):
        spath = root / "tables" / f"{slug}.md"
        atomic_write_text(spath, module.summary(table))
        written["summary"] = spath
    if hasattr(module, "claims"):
        cpath = root / "claims" / f"{slug}.json"
        atomic_write_text(cpath, json.dumps(_jsonable(module.claims(ok if len(ok) else table)), indent=1, default=_num))
        written["claims"] = cpath
    return written


def _num(obj):
    try:
        return float(obj)
    except (TypeError, ValueError):
        return str(obj)


def failed_runs(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty or "status" not in table:
        return table.iloc[0:0]
    return table[table["status"] != "ok"]
