"""Ad-hoc runs choose lam by cross-validation on the training split; studies keep fixed values."""

from pathlib import Path

import pytest

from rfrepro.harness.run.config import compose, compose_cached
from rfrepro.harness.run.grid import expand
from rfrepro.models.svm import SVM_LAM_GRID
from rfrepro.runner.record import run_and_record

CONF = Path(__file__).resolve().parents[2] / "conf" / "experiment"
STUDIES = sorted(p.with_suffix("").relative_to(CONF).as_posix() for p in CONF.glob("*/[!_]*.yaml"))



@pytest.mark.parametrize("model", ["krr", "linear_svm"])
def test_adhoc_default_is_cv_and_a_given_value_wins(model):
    assert compose([f"model={model}"]).model.lam == "cv"
    assert compose([f"model={model}", "model.lam=0.1"]).model.lam == 0.1


def test_adhoc_run_records_the_chosen_lam(results_root):
    small = ["dataset.n_train=300", "dataset.n_test=1000", "method.n_components=50"]
    rec = run_and_record(compose(small))
    assert rec["status"] == "ok" and rec["config"]["model"]["lam"] == "cv"
    assert rec["fitted"]["model_lam"] in SVM_LAM_GRID
    assert rec["config"]["model"]["lam_grid"] == list(SVM_LAM_GRID)
    fixed = run_and_record(compose(small + ["model.lam=0.01"]))
    assert fixed["fitted"]["model_lam"] == pytest.approx(0.01)


@pytest.mark.parametrize("study", STUDIES)
def test_no_study_run_falls_back_on_the_adhoc_cv_default(study):
    """The CV default is for ad-hoc runs: a study's runs keep a fixed lam unless its own config asks for CV.

    (The papers' studies keep the numbers they always had; a study that wants
    each run's own CV says ``lam: cv`` in its config, where a reader sees it.)
    """
    own = any("lam: cv" in p.read_text() for p in (CONF / study).parent.glob("*.yaml"))
    for job in expand(study, smoke=True):
        model = compose_cached(job.overrides).model
        if model.get("_target_", "").endswith(("RidgeRegression", "LinearSVM")) and model.lam == "cv":
            assert own, (study, job.overrides)
