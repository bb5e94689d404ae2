"""Hydra entry point: ``python -m rfrepro [overrides] [-m]`` runs one config per job.

Each job writes one record under ``<paths.results>/runs/<paper>-<item>/``;
``python -m rfrepro.reproduce <paper>/<item> --outputs-only`` or ``make report``
rebuilds the tables and figures from the records.

Before anything runs, the config of every job is composed and checked and the
results folder is probed: bad input (an unknown name or key, a bad value, a
results path that cannot be written) gets one line per bad run on stderr and
exit status 2, and no run starts.

Each job prints one line saying what happened. A single run that did not
finish also prints one error line (with its record). A multirun (``-m``) ends
with the summary ``python -m rfrepro.reproduce`` prints: counts per status, and
each failure with its run id, error type and record. Each job leaves its result
in ``rfrepro-run.json`` in its Hydra output folder and the summary is read back
from there, so it works with the launchers that run jobs in other processes
(``hydra/launcher=parallel``, submitit) too. A launcher that stops on a job
whose process was killed (the joblib launcher of ``hydra/launcher=parallel``)
ends the multirun with exit status 1 and no summary; the runs that finished
keep their records (``python -m rfrepro.reproduce`` instead records a killed
run as failed, retries it once and goes on).

Exit status, as for ``python -m rfrepro.reproduce`` (see rfrepro.harness.run.summary):
0 every run finished, 1 a run failed, 2 bad input, 3 a run was not run (data
unavailable, over the memory budget, or being computed by another process).
"""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig, open_dict

from rfrepro.harness.multirun import (
    CALLBACK,
    RunNotFinished,
    leave_result,
    multirun_job,
    summarized,
)
from rfrepro.harness.run.config import check_overrides, conf_dir, search_path_overrides


def _threads_from_launcher(cfg: DictConfig):
    """Threads per job: an explicit ``threads=`` wins; the joblib launcher gets cores // n_jobs."""
    if cfg.threads is not None:
        return cfg.threads
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ValueError, ImportError):
        return None
    target = str(launcher.get("_target_", ""))
    if "Joblib" in target:
        from rfrepro.runner.env import threads_for

        n_jobs = int(launcher.get("n_jobs") or -1)
        return threads_for(os.cpu_count() if n_jobs < 1 else n_jobs)
    if "submitit" in target.lower() and launcher.get("cpus_per_task"):
        return int(launcher.cpus_per_task)  # the cores SLURM (or the local executor) gives the task
    return None


def _executor() -> str:
    try:
        from hydra.core.hydra_config import HydraConfig

        target = str(HydraConfig.get().launcher.get("_target_", ""))
    except (ValueError, ImportError):
        return "hydra"
    return "hydra:" + (target.rsplit(".", 1)[-1] or "basic")


def _bad_input(cfg: DictConfig, message: str) -> None:
    """One line; a single run exits 2, a multirun job is counted as bad input by the summary."""
    from rfrepro.harness.run.summary import EXIT_USAGE

    hc = multirun_job()
    if hc is None:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if not summarized(hc):
        raise RunNotFinished(message)  # Hydra runs the other jobs, then exits 1
    print(f"error: {message} (job {hc.job.num}: {' '.join(hc.overrides.task)})", file=sys.stderr)
    leave_result(hc, cfg, None, bad_input=message)


def task(cfg: DictConfig) -> float | None:
    from rfrepro.harness.run.arms import strip as strip_declarations
    from rfrepro.harness.run.grid import infer_arm
    from rfrepro.harness.run.roofline import host_peaks
    from rfrepro.harness.run.summary import exit_code, mirror_help, run_row
    from rfrepro.harness.run.validate import check_run_config
    from rfrepro.layout import ResultsLayout, study_slug
    from rfrepro.runner.record import run_and_record
    from rfrepro.runner.store import FINISHED, UNAVAILABLE

    strip_declarations(cfg)  # a map's leaderboard declaration is neither an argument nor identity
    with open_dict(cfg):
        cfg.threads = _threads_from_launcher(cfg)
        cfg.arm = cfg.arm or infer_arm(cfg)
    try:
        check_run_config(cfg)
    except ValueError as exc:
        return _bad_input(cfg, f"bad config: {exc}")
    os.environ["RFREPRO_EXECUTOR"] = _executor()
    try:
        rec = run_and_record(cfg, host_peaks=host_peaks())
    except OSError as exc:
        return _bad_input(cfg, f"cannot write results under {cfg.paths.results!r}: {exc.strerror or exc} "
                               "(set RFREPRO_RESULTS or paths.results= to a writable folder)")
    result = run_row(rec)
    status = "skipped (finished before)" if rec.get("_skipped") else rec["status"]
    metrics = rec.get("metrics") or {}
    shown = ", ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float))
    record = ResultsLayout(cfg.paths.results).record(study_slug(cfg), str(rec.get("run_id")))
    print(f"[{status}] {rec.get('study')} {rec.get('arm')} seed={cfg.seed} {shown} (record: {record})")
    hc = multirun_job()
    if hc is not None and summarized(hc):  # the summary at the end says what did not finish
        leave_result(hc, cfg, result)
    elif rec["status"] != FINISHED:
        first = str(rec.get("error") or rec["status"]).splitlines()[0]
        hint = f"; {mirror_help(cfg.mirror)}" if rec["status"] == UNAVAILABLE else ""
        message = f"run {rec.get('run_id')} {rec['status']}: {first} (record: {record}){hint}"
        if hc is not None:
            raise RunNotFinished(message)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(exit_code([result]))
    return metrics.get("error")


#: the model of an ad-hoc run that names none, by the dataset's task (an experiment always sets its own)
MODEL_FOR_TASK = {"regression": "krr"}
DEFAULT_MODEL = "linear_svm"


def default_model(overrides: list[str]) -> str | None:
    """``model=krr`` when no ``model=`` / ``experiment=`` is given and every dataset asked for is regression.

    The config's default model is the linear SVM, a classifier; a regression
    dataset gets ridge regression on the features instead. None: keep the
    config's model. Raises ValueError when a sweep mixes regression and
    classification datasets (one model= cannot suit both).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from rfrepro.harness.run.config import compose_cached

    pairs = [o.lstrip("+~").partition("=") for o in overrides if "=" in o]
    if any(k in ("model", "experiment") for k, _, _ in pairs) or any(o.lstrip("+~") == "model" for o in overrides):
        return None
    task = next((v for k, _, v in reversed(pairs) if k == "dataset.task"), None)
    if task is not None:
        tasks = {task: "dataset.task=" + task}
    else:
        choice = next((o for o in reversed(overrides) if o.lstrip("+~").startswith("dataset=")), None)
        names = [None]
        if choice is not None:
            try:
                ov = OverridesParser.create().parse_override(choice)
                names = list(ov.sweep_string_iterator()) if ov.is_sweep_override() else [ov.value()]
            except Exception:  # noqa: BLE001 - a sweep form only Hydra expands (range, glob): keep the default
                return None
        tasks = {}
        for name in names:
            cfg = compose_cached([] if name is None else [f"dataset={name}"])
            tasks.setdefault(str(cfg.dataset.get("task")), cfg.dataset.get("name"))
    models = {MODEL_FOR_TASK.get(t, DEFAULT_MODEL) for t in tasks}
    if len(models) > 1:
        raise ValueError(f"the datasets mix tasks ({', '.join(f'{n}: {t}' for t, n in sorted(tasks.items()))}) "
                         f"and the default model follows the task ({MODEL_FOR_TASK['regression']} for regression, "
                         f"{DEFAULT_MODEL} otherwise): give model= or run them apart")
    model = models.pop()
    return None if model == DEFAULT_MODEL else f"model={model}"


def usage() -> str:
    """``python -m rfrepro --help``: what the command does, the user-facing configs, the exit statuses."""
    import textwrap

    from rfrepro.harness.catalog import options

    def group(name: str) -> str:
        return textwrap.fill(", ".join(options(name)), 96, initial_indent="    ", subsequent_indent="    ")

    return f"""usage: python -m rfrepro [key=value ...] [-m]

Runs one random-feature experiment per composed config: a dataset, a feature map
(method), a model and a seed. Each run writes one record under
<results>/runs/<paper>-<item>/ and prints one line with its metrics and record.
With -m (Hydra multirun) every comma list is swept, one run per point, and a
summary ends the sweep.

  python -m rfrepro dataset=cpusmall method=nystrom model=krr       one ad-hoc run
  python -m rfrepro experiment=sun2018/fig1 seed=0,1 -m              points of a study's grid
  python -m rfrepro.reproduce sun2018/fig1                           a whole study, then its outputs
  make list                                                          every study with its make target

dataset=
{group("dataset")}
method=
{group("method")}
model=
{group("model")}
experiment=
{group("experiment")}
hydra/launcher=
{group("hydra/launcher")}

Without model= (and without experiment=, whose studies set their own) the model
follows the dataset's task: model=krr (ridge regression on the features) for a
regression dataset, model=linear_svm for a classification one.

Any key of the config can be set (kernel.sigma=2.0, method.n_components=512, seed=3);
an unknown key is refused with the closest keys ("did you mean method.n_components?").
`python -m rfrepro --cfg job` prints the composed config, --hydra-help Hydra's own help.
Values are checked before anything runs.

Exit status: 0 every run finished; 1 a run failed (its record has the traceback);
2 bad input (one line says which key); 3 not run (data unavailable, over the
memory budget, or being computed by another process).
"""


def main() -> None:
    import uuid

    from rfrepro.harness.run.summary import EXIT_USAGE

    if any(a in ("--help", "-h") for a in sys.argv[1:]):
        print(usage())
        return
    # Hydra's parser rejects overrides placed after -m: accept them anywhere
    flags = [a for a in sys.argv[1:] if a in ("-m", "--multirun")]
    if flags:
        sys.argv = [sys.argv[0], *[a for a in sys.argv[1:] if a not in flags], flags[0]]
    try:
        check_overrides([a for a in sys.argv[1:] if not a.startswith("-")])
        model = default_model([a for a in sys.argv[1:] if not a.startswith("-")])
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if model is not None:  # the model follows the dataset's task (see usage())
        sys.argv.insert(1, model)
    from rfrepro.harness.run.validate import check_command

    problems = check_command(sys.argv[1:], multirun=bool(flags))
    if problems:
        for line in problems:
            print(f"error: {line}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if flags:  # the summary and exit status at the end of the multirun
        token = f"t{uuid.uuid4().hex}"
        sys.argv[-1:-1] = [f"++hydra.callbacks.{CALLBACK}._target_=rfrepro.harness.multirun.MultirunSummary",
                           f"++hydra.callbacks.{CALLBACK}.token={token}"]
    sys.argv[1:1] = search_path_overrides()  # a user's own config directories (RFREPRO_CONFIG_PATH)
    hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")(task)()


if __name__ == "__main__":
    main()
