import pytest


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    """Send results and downloads of the test to a temporary folder."""
    root = tmp_path / "results"
    monkeypatch.setenv("RFREPRO_RESULTS", str(root))
    monkeypatch.setenv("RFREPRO_DATA", str(tmp_path / "data"))
    return root
