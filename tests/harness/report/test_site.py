"""The HTML scorecard: built from a results folder alone, and checked in a real browser.

The browser test drives headless Chromium from the system's packages (Debian:
``apt-get install chromium chromium-driver``) through selenium; nothing
downloads a browser. Where Chromium is absent it skips and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from rfrepro.harness.report.scorecard import VERDICT_ORDER
from rfrepro.harness.report.site import build_site, interval_svg
from rfrepro.layout import ResultsLayout

ROOT = Path(__file__).resolve().parents[3]
STUDY = "sun2018/fig1"
SMALL = ["dataset.n_train=150", "dataset.n_test=300"]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A results folder with one small smoke study and one ad-hoc run, as a user's would be."""
    base = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items() if k != "RFREPRO_MIRROR"}
    env.update(RFREPRO_RESULTS=str(base / "results"), RFREPRO_DATA=str(base / "data"))
    for args in (["-m", "rfrepro.reproduce", STUDY, "--smoke", *SMALL],
                 ["-m", "rfrepro", *SMALL, f"paths.results={base / 'results' / 'smoke'}"]):
        proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "results" / "smoke"


def _claims(root: Path) -> list[dict]:
    return json.loads(ResultsLayout(root).claims("sun2018-fig1").read_text())


def test_site_pages_and_figures_are_written(results):
    index = build_site(results)
    site = index.parent
    assert {p.name for p in site.glob("*.html")} >= {"index.html", "sun2018.html", "adhoc.html"}
    assert 'src="../figures/sun2018-fig1.png"' in (site / "sun2018.html").read_text()  # linked, not copied
    page = (site / "sun2018.html").read_text()
    # every claim of the study appears with its id and verdict, and the smoke label is on the page
    for c in _claims(results):
        assert f"<td>{c['id']}</td>" in page
    assert "Smoke run" in page and 'id="sun2018-fig1"' in page
    adhoc = (site / "adhoc.html").read_text()
    assert "runs/adhoc-run/" in adhoc and "disk_annulus" in adhoc
    # REPORT.md lists the ad-hoc run too, with its record
    from rfrepro.harness.report.report import write_report

    report = write_report(results, rebuild=False).read_text()
    assert "## Ad-hoc runs" in report and "| disk_annulus |" in report and "runs/adhoc-run/" in report


def test_interval_drawing_places_estimate_interval_and_threshold():
    svg = interval_svg({"estimate": 0.5, "ci_low": 0.25, "ci_high": 0.75, "threshold": 1.0, "side": "less"},
                       width=112)
    # axis [0.25, 1.0] padded by 10% of its span; 6 px margins: 100 px for 0.9 units
    assert svg["lo"] == pytest.approx(6 + (0.25 - 0.175) / 0.9 * 100, abs=0.1)
    assert svg["est"] == pytest.approx(6 + (0.5 - 0.175) / 0.9 * 100, abs=0.1)
    assert svg["thr"] == [pytest.approx(6 + (1.0 - 0.175) / 0.9 * 100, abs=0.1)]
    assert not svg["open_lo"] and not svg["open_hi"]
    # an infinite interval (one seed) is drawn open to both edges
    one = interval_svg({"estimate": 2.0, "ci_low": float("-inf"), "ci_high": float("inf"), "threshold": 1.0})
    assert one["open_lo"] and one["open_hi"] and one["lo"] == 6 and one["hi"] == one["w"] - 6
    band = interval_svg({"estimate": 1.0, "ci_low": 0.9, "ci_high": 1.1, "threshold": [0.5, 2.0],
                         "side": "within"})
    assert band["band"] and len(band["thr"]) == 2
    assert interval_svg({"estimate": None}) is None


#: the window width no page may scroll sideways at
WIDTH = 1280


def _browser(width: int = WIDTH):
    """A headless Chromium ``width`` px wide driven by the system's chromedriver, or a skip saying what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (make setup)")
    from selenium.webdriver.chrome.service import Service

    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                     if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        why = "no Chromium/chromedriver on this machine: apt-get install chromium chromium-driver"
        if os.environ.get("RFREPRO_REQUIRE_BROWSER"):  # CI installs them: there a skip would hide a failure
            pytest.fail(why)
        pytest.skip(why)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},1000"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=opts)


def _fits(browser, page: Path):
    """The page is no wider than the window: a wide table scrolls in its own box, long strings wrap."""
    doc, body, inner = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]")
    assert inner == WIDTH
    assert doc <= inner and body <= inner, f"{page.name} is {max(doc, body)} px wide in a {inner} px window"


def test_reference_site_fits_a_1280_px_window():
    """Every page of the reference scorecard (results/reference/site/) at 1280 px: nothing scrolls sideways."""
    from selenium.webdriver.support.ui import WebDriverWait

    pages = sorted((ROOT / "results" / "reference" / "site").glob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "leaderboard.html", "adhoc.html"}
    browser = _browser()
    try:
        for page in pages:
            browser.get(page.as_uri())
            WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
            _fits(browser, page)
    finally:
        browser.quit()


def test_site_in_a_real_browser(results):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    site = build_site(results).parent
    browser = _browser()
    try:
        pages = sorted(site.glob("*.html"))
        checked_links = 0
        for page in pages:
            browser.get(page.as_uri())
            WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
            # every image has loaded
            images = browser.find_elements(By.TAG_NAME, "img")
            for img in images:
                assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 0, \
                    f"{page.name}: image {img.get_attribute('src')} did not load"
            if page.name == "sun2018.html":
                assert len(images) == 1
            _fits(browser, page)
            # every internal link resolves: the file exists and the anchor is an element id there
            for href in {a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")}:
                url = urlparse(href)
                if url.scheme != "file":
                    continue
                target = Path(unquote(url.path))
                assert target.is_file(), f"{page.name}: broken link {href}"
                if url.fragment:
                    assert f'id="{url.fragment}"' in target.read_text(), f"{page.name}: no anchor {href}"
                checked_links += 1
        assert checked_links > 10
        # the first screen's counts equal the claims JSON
        browser.get((site / "index.html").as_uri())
        row = browser.find_element(By.CSS_SELECTOR, 'tr[data-paper="sun2018"]')
        shown = {td.get_attribute("data-verdict"): int(td.text)
                 for td in row.find_elements(By.CSS_SELECTOR, "td.count")}
        claims = _claims(results)
        assert shown == {v: sum(c["verdict"] == v for c in claims) for v in VERDICT_ORDER}
        assert sum(shown.values()) == len(claims) > 0
        # and the row is on the first screen (above the fold of a 1000 px window)
        assert row.location["y"] + row.size["height"] < 1000
    finally:
        browser.quit()
