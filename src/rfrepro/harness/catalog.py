"""What a checkout offers: its config folders and the options of each config group (studies, maps, models).

Shared by running (composing configs) and reporting (listing the studies); neither side owns it.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dirs() -> list[Path]:
    """The project's ``conf/`` and every directory on ``RFREPRO_CONFIG_PATH`` (``os.pathsep``-separated)."""
    from rfrepro.layout import conf_dir

    extra = [Path(p) for p in os.environ.get("RFREPRO_CONFIG_PATH", "").split(os.pathsep) if p]
    return [conf_dir(), *extra]


def options(group: str) -> list[str]:
    """Option names of a config group (experiments as ``paper/item``), in ``conf/`` and on ``RFREPRO_CONFIG_PATH``."""
    found = set()
    for root in config_dirs():
        base = root / group
        if not base.is_dir():
            continue
        # files starting with "_" are shared bases included by other configs, not options
        found.update(str(p.relative_to(base).with_suffix("")).replace(os.sep, "/")
                     for p in base.rglob("*.yaml") if not p.name.startswith("_"))
    return sorted(found)
