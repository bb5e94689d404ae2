"""Every experiment composes and runs in smoke mode, producing its table, figure and claims."""

import json

import pandas as pd
import pytest

from rfrepro.harness.catalog import options
from rfrepro.harness.report.claims import check_claims
from rfrepro.harness.report.report import claim_details, write_report
from rfrepro.harness.reproduce import main as reproduce_main
from rfrepro.layout import study_slug

EXPERIMENTS = options("experiment")
# studies whose paper states nothing measurable (a figure of images; printed data sizes and sigmas)
FIGURE_ONLY = {"schleif2016/fig1", "wu2016/table1"}


@pytest.mark.parametrize("study", EXPERIMENTS)
def test_experiment_runs_in_smoke_mode(study, results_root, capsys):
    code = reproduce_main([study, "--smoke", "--jobs", "1"])
    root = results_root / "smoke"
    slug = study_slug(study)
    table = pd.read_parquet(root / "tables" / f"{slug}.parquet")
    assert len(table) > 0
    # runs either finish, or say their data is unavailable here (exit status 3): nothing crashes
    assert set(table["status"]) <= {"ok", "unavailable"}, table.loc[table.status == "failed", "error"].tolist()
    assert code == (0 if set(table["status"]) == {"ok"} else 3)
    assert (root / "figures" / f"{slug}.png").stat().st_size > 1000
    assert (root / "figures" / f"{slug}.pdf").is_file()
    claims = json.loads((root / "claims" / f"{slug}.json").read_text())
    # a figure whose paper states nothing measurable has no claim (its module says why)
    assert claims or study in FIGURE_ONLY
    assert all(c["verdict"] in ("pass", "fail", "inconclusive", "not-comparable", "not-run") for c in claims)
    check_claims(claims)  # every claim has the paper's sentence, statistic, interval, threshold, verdict, data
    if claims and "ok" not in set(table["status"]):
        assert {c["verdict"] for c in claims} == {"not-run"}
    report = write_report(root, rebuild=False).read_text()
    assert f"### {study}:" in report and f"figures/{slug}.png" in report
    for c in claims:
        assert f"| {study} | {c['id']} |" in report
        # the claim's details in the report say what data it was judged on
        details = claim_details([c])
        assert next(x for x in details if x.startswith("  Data: ")).startswith(f"  Data: {c['data']['kind']}")
        assert "\n".join(details) in report
