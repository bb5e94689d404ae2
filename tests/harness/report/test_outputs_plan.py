"""A sweep saves its plan; outputs and the report are drawn from that plan and the records alone.

Nothing after the sweep composes a config, fingerprints or fetches data: a
report on a machine without the data (or without network) gives the same
verdicts as where the data is.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rfrepro.layout import ResultsLayout

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["dataset.n_train=150", "dataset.n_test=300"]


def _reproduce(args: list[str], base: Path, **env_extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RFREPRO_MIRROR"}
    env.update(RFREPRO_RESULTS=str(base / "results"), RFREPRO_DATA=str(base / "data"), **env_extra)
    return subprocess.run([sys.executable, "-m", "rfrepro.reproduce", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("plan")
    proc = _reproduce(["sun2018/fig1", "--smoke", "--jobs", "1", *SMALL], base)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "results" / "smoke"


@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    """Count every config composition, data fingerprint, data load and file hash from here on."""
    import hydra

    import rfrepro.data as data
    import rfrepro.data.download as download
    import rfrepro.runner.record as record

    calls: dict[str, int] = {}

    def counting(name, fn):
        def wrapper(*a, **k):
            calls[name] = calls.get(name, 0) + 1
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(hydra, "compose", counting("compose", hydra.compose))
    for mod, names in ((data, ("fingerprint", "load_dataset")), (record, ("fingerprint", "identify")),
                       (download, ("fetch", "sha256_file"))):
        for name in names:
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, counting(f"{mod.__name__}.{name}", getattr(mod, name)))
    return calls


def test_the_plan_lists_the_sweeps_runs(swept):
    plan = json.loads(ResultsLayout(swept).plan("sun2018-fig1").read_text())
    records = [json.loads(p.read_text()) for p in ResultsLayout(swept).study_runs("sun2018-fig1").glob("*.json")]
    assert sorted(r["run_id"] for r in plan["runs"]) == sorted(r["run_id"] for r in records)
    assert plan["study"] == "sun2018/fig1" and plan["smoke"] is True and plan["overrides"] == SMALL
    by_id = {r["run_id"]: r for r in records}
    assert all(r["code_version"] == by_id[r["run_id"]]["code_version"] for r in plan["runs"])
    # the code the runs can execute, module by module: the steps and the arms' maps, not every map
    assert {"rfrepro/runner/steps.py", "rfrepro/features/rff.py", "rfrepro/features/leverage.py"} \
        <= set(plan["code_modules"])
    assert "rfrepro/features/tefm.py" not in plan["code_modules"]
    assert plan["title"].startswith("Sun et al. 2018 Fig. 1") and plan["deviations"]
    one = plan["runs"][0]
    assert {"run_id", "compute_id", "arm", "overrides", "dataset", "seed", "data_fingerprint"} <= set(one)
    assert one["dataset"] == "disk_annulus" and one["data_fingerprint"]
    # a plan says what each run computes, never where its results went (no machine's paths)
    assert not [o for r in plan["runs"] for o in r["overrides"] if "paths.results" in o]
    assert str(swept) not in ResultsLayout(swept).plan("sun2018-fig1").read_text()


def test_outputs_and_report_compose_nothing_and_touch_no_data(swept, counted):
    from rfrepro.harness.report.outputs import build_outputs
    from rfrepro.harness.report.report import write_report

    claims_path = ResultsLayout(swept).claims("sun2018-fig1")
    before = claims_path.read_text()
    build_outputs("sun2018/fig1", swept)
    report = write_report(swept).read_text()
    assert counted == {}, f"the report composed configs or touched data: {counted}"
    assert claims_path.read_text() == before  # the same verdicts as the sweep drew
    assert "### sun2018/fig1:" in report and (swept / "site" / "index.html").is_file()


def test_the_report_redraws_only_studies_whose_plan_or_records_changed(swept):
    from rfrepro.harness.report.outputs import build_outputs, outputs_current

    layout = ResultsLayout(swept)
    written = build_outputs("sun2018/fig1", swept)
    assert outputs_current("sun2018/fig1", swept)
    figure = layout.figure("sun2018-fig1")
    stamp = figure.stat().st_mtime_ns
    assert build_outputs("sun2018/fig1", swept, reuse=True) == {} and figure.stat().st_mtime_ns == stamp
    # a record rewritten (a rerun, --force): drawn again
    record = next(layout.study_runs("sun2018-fig1").glob("*.json"))
    os.utime(record, ns=(record.stat().st_atime_ns, record.stat().st_mtime_ns + 10**9))
    assert not outputs_current("sun2018/fig1", swept)
    assert set(build_outputs("sun2018/fig1", swept, reuse=True)) == set(written)
    assert outputs_current("sun2018/fig1", swept)
    # an output removed by hand: drawn again
    figure.unlink()
    assert not outputs_current("sun2018/fig1", swept)
    assert build_outputs("sun2018/fig1", swept, reuse=True) and figure.is_file()


def test_a_study_never_planned_is_not_run_yet(tmp_path, counted):
    from rfrepro.harness.report.outputs import build_outputs
    from rfrepro.harness.report.report import write_report

    written = build_outputs("hamid2014/fig4", tmp_path)
    status = json.loads(written["status"].read_text())
    assert status["planned"] is False and status["expected_runs"] == 0
    report = write_report(tmp_path).read_text()
    assert "hamid2014/fig4 (`make reproduce-hamid2014-fig4`)" in report
    assert counted == {}


def test_runs_of_unavailable_data_are_drawn_from_the_plan_without_fetching(tmp_path):
    proc = _reproduce(["spine/rff-kernel-approx", "--smoke", "--jobs", "1", "mirror=file:///nonexistent"],
                      tmp_path)
    assert proc.returncode == 3, proc.stderr[-2000:]
    root = tmp_path / "results" / "smoke"
    plan = json.loads(ResultsLayout(root).plan("spine-rff-kernel-approx").read_text())
    assert plan["runs"] and all(r["unavailable"] for r in plan["runs"])
    # outputs again, now with fetching made impossible: the same not-run verdicts, no attempt to fetch
    proc = _reproduce(["spine/rff-kernel-approx", "--smoke", "--outputs-only"], tmp_path,
                      RFREPRO_MIRROR="http://127.0.0.1:9/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    status = json.loads(ResultsLayout(root).status("spine-rff-kernel-approx").read_text())
    assert status["counts"] == {"unavailable": len(plan["runs"])} and status["missing"] == 0


def test_outputs_only_refuses_a_grid_other_than_the_plans(swept, tmp_path):
    base = swept.parent.parent
    proc = _reproduce(["sun2018/fig1", "--smoke", "--outputs-only", "dataset.n_train=999"], base)
    assert proc.returncode == 2
    assert "builds outputs from the saved plan (overrides: dataset.n_train=150 dataset.n_test=300)" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = _reproduce(["hamid2014/fig4", "--smoke", "--outputs-only"], tmp_path)
    assert proc.returncode == 2 and "has no saved plan" in proc.stderr


def test_make_list_shows_targets_times_and_status(swept):
    from rfrepro.harness.catalog import options
    from rfrepro.harness.report.scorecard import LIST_WIDTH, listing

    lines = listing(swept)
    assert len(lines) == 2 + len(options("experiment")) and lines[0].startswith("make reproduce-<study>")
    assert max(map(len, lines)) <= LIST_WIDTH
    row = next(line for line in lines if line.startswith("sun2018-fig1 "))
    wall_time = OmegaConf.load(ROOT / "conf" / "experiment" / "sun2018" / "fig1.yaml").sweep.wall_time
    assert " done " in row and f" {wall_time.split(' (')[0]} " in row and "Sun et al. 2018 Fig. 1" in row
    assert all(" not run " in line for line in lines[2:] if "sun2018-fig1" not in line)
    assert all(" none " in line for line in lines[2:])  # no reference under this root
    # a reference whose runs' code is today's, one whose map changed since, one that recorded no code
    from rfrepro.runner.code import blob_id

    plan = json.loads(ResultsLayout(swept).plan("sun2018-fig1").read_text())
    modules = plan["code_modules"]
    edited = {**modules, "rfrepro/features/leverage.py": blob_id(b"an older leverage.py")}
    prov = swept / "reference" / "provenance"
    prov.mkdir(parents=True)
    try:  # the fixture's folder is shared by this module's tests: leave it as it was
        (prov / "sun2018-fig1.json").write_text(json.dumps({"code_modules": modules}))
        (prov / "sun2018-fig2.json").write_text(json.dumps({"code_modules": edited}))
        (prov / "sun2018-fig4.json").write_text(json.dumps({"planned_code_version": "0.1.0+src.0123456789ab"}))
        rows = {line.split()[0]: line for line in listing(swept)[2:]}
        assert " current " in rows["sun2018-fig1"]
        assert " older (features/leverage.py) " in rows["sun2018-fig2"]
        assert " older (code not recorded) " in rows["sun2018-fig4"]
    finally:
        shutil.rmtree(swept / "reference")


def test_prune_removes_records_outside_the_plan(swept):
    from rfrepro.harness.reproduce import prune
    from rfrepro.runner.store import RecordStore

    store = RecordStore(swept, "sun2018-fig1")
    store.write({"run_id": "0" * 20, "status": "unavailable"})  # e.g. from a sweep without the data
    before = len(list(store.records()))
    assert prune("sun2018/fig1", str(swept)) == 0
    assert len(list(store.records())) == before - 1 and store.read("0" * 20) is None
    assert prune("hamid2014/fig4", str(swept)) == 2


def test_records_of_older_code_are_reported_as_such_not_as_extra_runs(swept):
    from rfrepro.harness.report.outputs import build_outputs
    from rfrepro.harness.report.report import study_section
    from rfrepro.runner.store import RecordStore

    store = RecordStore(swept, "sun2018-fig1")
    record = next(iter(store.records()))
    older = {**record, "run_id": "1" * 20, "code_version": "0.1.0+src.000000000000"}  # before a code edit
    other = {**record, "run_id": "2" * 20}  # today's code, settings the plan does not have
    store.write(older)
    store.write(other)
    try:
        build_outputs("sun2018/fig1", swept)
        status = json.loads(ResultsLayout(swept).status("sun2018-fig1").read_text())
        assert status["other_code_runs"] == 1 and status["extra_runs"] == ["2" * 20]
        section = study_section("sun2018/fig1", swept)
        assert "Older code version (1 runs)" in section and "Extra runs, not in the study's plan: 1 records" in section
    finally:
        for rid in ("1" * 20, "2" * 20):
            store.path(rid).unlink()
        build_outputs("sun2018/fig1", swept)


def test_smoke_figures_state_the_settings_that_ran():
    import pandas as pd

    from rfrepro.harness.report.outputs import smoke_settings

    table = pd.DataFrame({"seed": [0, 1, 0, 1], "dataset.name": ["a", "a", "b", "b"],
                          "dataset.n_train": [500] * 4, "dataset.n_test": [100] * 4})
    plan = {"runs": [{"overrides": ["experiment=x/y", "method=rks_cos", f"method.n_components={n}", "seed=0"]}
                     for n in (16, 64)]}
    assert smoke_settings(table, plan) == \
        "2 seeds; n_train 500, n_test 100 (each of 2 datasets); method.n_components in {16, 64}"


@pytest.mark.mirror
def test_reference_keeps_a_full_studys_outputs_without_records(tmp_path, monkeypatch):
    import shutil

    from rfrepro.harness import reference
    from rfrepro.harness.report.report import write_report

    mirror = os.environ.get("RFREPRO_MIRROR") or (ROOT.parent / "shared" / "datasets").as_uri()
    if not mirror.startswith("http") and not Path(mirror.removeprefix("file://")).is_dir():
        pytest.skip("needs the offline dataset mirror (RFREPRO_MIRROR)")
    base = tmp_path / "results"
    # Schleif Fig. 1 at full settings: 4 runs, seconds
    proc = _reproduce(["schleif2016/fig1", "--jobs", "2"], tmp_path, RFREPRO_MIRROR=mirror)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dest = tmp_path / "committed" / "reference"   # --dest: the reference may live apart from the runs
    assert reference.main(["schleif2016/fig1", "--results", str(base), "--dest", str(dest)]) == 0
    layout = ResultsLayout(dest)
    from rfrepro.harness.planfile import load_plan, plan_file

    # the plan is kept gzip-compressed, byte for byte the sweep's (and read back as it)
    assert plan_file(dest, "schleif2016/fig1").name == "schleif2016-fig1.json.gz"
    assert not layout.plan("schleif2016-fig1").exists()
    assert load_plan("schleif2016/fig1", dest) == load_plan("schleif2016/fig1", base)
    for path in (plan_file(dest, "schleif2016/fig1"), layout.claims("schleif2016-fig1"),
                 layout.figure("schleif2016-fig1"), layout.table("schleif2016-fig1"),
                 dest / "provenance" / "schleif2016-fig1.json", layout.site / "index.html"):
        assert path.is_file(), path
    assert not layout.runs_dir.exists() and reference.folder_bytes(dest) < reference.MAX_BYTES
    # nothing in it names the machine the runs were made on (results folder, mirror, data folder)
    for path in dest.rglob("*"):
        if path.is_file():
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            assert str(tmp_path).encode() not in data, path
    prov = json.loads((dest / "provenance" / "schleif2016-fig1.json").read_text())
    assert prov["runs"] > 0 and prov["code_versions"] and prov["commits"]
    assert prov["outputs_commit"] == reference.outputs_commit()   # the commit that drew the outputs
    assert prov["outputs_commit"].split("+")[0] in subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                                                                  capture_output=True, text=True).stdout
    report = (dest / "REPORT.md").read_text()
    assert "### schleif2016/fig1:" in report and "Made by older code" not in report
    assert "plan: `plans/schleif2016-fig1.json.gz`" in report
    # saving again gives the same compressed bytes (no timestamp inside), and a plain plan left by an
    # older save is compressed
    before = plan_file(dest, "schleif2016/fig1").read_bytes()
    assert reference.main(["--dest", str(dest), "--results", str(base)]) == 0
    assert plan_file(dest, "schleif2016/fig1").read_bytes() == before
    plain = layout.plan("schleif2016-fig1")
    plan_file(dest, "schleif2016/fig1").unlink()
    plain.write_bytes(ResultsLayout(base).plan("schleif2016-fig1").read_bytes())
    assert reference.compress_plans(dest) == 1 and not plain.exists()
    assert plan_file(dest, "schleif2016/fig1").read_bytes() == before
    assert f"tables, claims and figure drawn at commit {prov['outputs_commit']}." in report
    # the provenance names the code its runs executed; once a module of it changes, the reference says which
    assert "rfrepro/features/rff_selection.py" in prov["code_modules"]
    assert "rfrepro/features/tefm.py" not in prov["code_modules"]
    monkeypatch.setattr("rfrepro.runner.code.changed", lambda modules: ["rfrepro/features/rff_selection.py"])
    assert "**Made by older code** (changed since its runs: `features/rff_selection.py`)" \
        in write_report(dest, rebuild=False).read_text()
    assert "Made by older code" in (layout.site / "schleif2016.html").read_text()
    # a smoke study or one never run is refused with one line
    shutil.rmtree(dest)
    assert reference.main(["hamid2014/fig4", "--results", str(base)]) == 2
    assert reference._short("0123456789abcdef+dirty") == "0123456789+dirty"


@pytest.mark.parametrize("counts, status", [
    ({"ok": 4}, "done"),
    ({"ok": 4, "unavailable": 6}, "done (6 of 10 runs: data unavailable)"),
    ({"ok": 3, "unavailable": 6, "failed": 1}, "partial (3 of 10 runs finished)"),
    ({"unavailable": 10}, "partial (0 of 10 runs finished)"),
])
def test_a_study_whose_missing_runs_lack_data_is_done_where_it_could_run(counts, status):
    from rfrepro.harness.report.scorecard import Study, run_status

    n = 4 if counts == {"ok": 4} else 10
    s = Study(id="wu2016/table1", slug="wu2016-table1", title="t", planned=True,
              plan={"runs": [{"run_id": f"r{i}"} for i in range(n)]}, status={"counts": counts})
    assert run_status(s) == status
    assert run_status(Study(id="x/y", slug="x-y", title="t", planned=False)) == "not run"
