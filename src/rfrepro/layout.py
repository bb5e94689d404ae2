"""Where things live: the checkout, its ``conf/`` folder, and every path under a results root.

One object owns the results layout (:class:`ResultsLayout`); every module
that reads or writes a result takes its paths from it, and ``make
clean-results`` removes exactly :meth:`ResultsLayout.generated`. One function
owns a study's slug (:func:`study_slug`).

Layout under a results root::

    runs/<slug>/<run_id>.json        one record per run (see rfrepro.runner.store)
    runs/<slug>/<run_id>.lock        present while a process computes that run
    plans/<slug>.json                the study's planned run ids, arms, overrides, code version
    tables/<slug>.parquet            one tidy row per run of the study
    tables/<slug>.md                 the study's summary table (paper vs ours)
    tables/<slug>.status.json        runs expected / finished / failed / extra, output errors
    figures/<slug>.{png,pdf}
    claims/<slug>.json               each claim: sentence, statistic, interval, verdict
    artifacts/<slug>/<run_id>-*.npz  files a run saves besides its record
    compute/<compute_id>             which record holds a computation (reuse across studies)
    fits/<key>.joblib                fitted maps shared by runs that differ only in their model
    cv/<key>.json                    cross-validated hyperparameter choices
    hydra/                           Hydra's own output folders (python -m rfrepro)
    REPORT.md                        every study's outputs and verdicts
    site/index.html                  the same as a static HTML scorecard
    smoke/                           the same layout for smoke runs

>>> lay = ResultsLayout("results")
>>> lay.record("sun2018-fig1", "abc").as_posix()
'results/runs/sun2018-fig1/abc.json'
>>> lay.smoke().plan("sun2018-fig1").as_posix()
'results/smoke/plans/sun2018-fig1.json'
>>> study_slug("sun2018/fig1")
'sun2018-fig1'
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The repository root: RFREPRO_ROOT, else the checkout this package lives in, else cwd."""
    env = os.environ.get("RFREPRO_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]
    if (here / "conf" / "config.yaml").is_file():
        return here
    return Path.cwd()


def conf_dir() -> Path:
    """``conf/`` of the project root (raises with the way out when there is none)."""
    path = project_root() / "conf"
    if not (path / "config.yaml").is_file():
        raise FileNotFoundError(
            f"no conf/config.yaml under {project_root()}; run from the rfrepro checkout "
            "or set RFREPRO_ROOT"
        )
    return path


def study_slug(study) -> str:
    """``paper-item`` of a study given as ``"paper/item"`` or as a config with ``study.paper/item``."""
    if isinstance(study, str):
        return study.replace("/", "-")
    return f"{study.study.paper}-{study.study.item}"


def default_root(smoke: bool = False) -> Path:
    """``$RFREPRO_RESULTS`` (default ``results``), with ``smoke/`` under it for smoke runs."""
    base = Path(os.environ.get("RFREPRO_RESULTS", "results"))
    return base / "smoke" if smoke else base


def user_cache_dir() -> Path:
    """This user's cache of facts about the machine (not results): ``$RFREPRO_CACHE``, else the
    platform's user cache folder for ``rfrepro`` (pooch's ``os_cache``, e.g. ``~/.cache/rfrepro``)."""
    env = os.environ.get("RFREPRO_CACHE")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("rfrepro"))


class ResultsLayout:
    """Every path under one results root."""

    SMOKE = "smoke"

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ResultsLayout({str(self.root)!r})"

    def smoke(self) -> ResultsLayout:
        """The layout of smoke runs under this root."""
        return ResultsLayout(self.root / self.SMOKE)

    @property
    def is_smoke(self) -> bool:
        return self.root.name == self.SMOKE

    # -- one folder per kind of file
    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    def study_runs(self, slug: str) -> Path:
        return self.runs_dir / slug

    def record(self, slug: str, run_id: str) -> Path:
        return self.study_runs(slug) / f"{run_id}.json"

    def run_lock(self, slug: str, run_id: str) -> Path:
        return self.study_runs(slug) / f"{run_id}.lock"

    def plan(self, slug: str) -> Path:
        return self.root / "plans" / f"{slug}.json"

    def table(self, slug: str) -> Path:
        return self.root / "tables" / f"{slug}.parquet"

    def summary(self, slug: str) -> Path:
        return self.root / "tables" / f"{slug}.md"

    def status(self, slug: str) -> Path:
        return self.root / "tables" / f"{slug}.status.json"

    def figure(self, slug: str, ext: str = "png") -> Path:
        return self.root / "figures" / f"{slug}.{ext}"

    def claims(self, slug: str) -> Path:
        return self.root / "claims" / f"{slug}.json"

    def artifact(self, slug: str, name: str) -> Path:
        """An artifact's path relative to the root (records keep it relative)."""
        return Path("artifacts") / slug / name

    def compute_pointer(self, compute_id: str) -> Path:
        return self.root / "compute" / compute_id

    def fit(self, key: str) -> Path:
        return self.root / "fits" / f"{key}.joblib"

    def cv(self, key: str) -> Path:
        return self.root / "cv" / f"{key}.json"

    @property
    def hydra_dir(self) -> Path:
        return self.root / "hydra"

    @property
    def report(self) -> Path:
        return self.root / "REPORT.md"

    @property
    def site(self) -> Path:
        """The HTML scorecard's folder (index.html and its pages)."""
        return self.root / "site"

    def generated(self) -> list[Path]:
        """Everything the project writes under this root (what ``make clean-results`` removes)."""
        names = ("runs", "plans", "tables", "figures", "claims", "artifacts", "compute", "fits", "cv",
                 "hydra", "REPORT.md", "site", self.SMOKE)
        return [self.root / n for n in names]


if __name__ == "__main__":  # `python -m rfrepro.layout [ROOT]`: the paths make clean-results removes
    import sys

    for p in ResultsLayout(sys.argv[1] if len(sys.argv) > 1 else default_root()).generated():
        print(p)
