"""The HTML reports opened in a real browser (Debian's Chromium, driven by selenium through
chromedriver): what a reader sees, the verdict, the swim lanes' lanes and arrows, a violation's
link to its line, and no console error. A screenshot of each page is kept under
``build/test-artifacts/`` (or ``$PARTSAFE_TEST_ARTIFACTS``).

Where Chromium or chromedriver is not installed these tests are skipped, saying so; `.ci/run`
installs both (``apt-get install chromium chromium-driver``)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no browser here: the browser tests need Debian's chromium and chromium-driver "
           "(apt-get install chromium chromium-driver; .ci/run installs them)")
DATA = Path(__file__).parent.parent / "data"
ARTIFACTS = Path(os.environ.get("PARTSAFE_TEST_ARTIFACTS",
                                Path(__file__).parents[2] / "build" / "test-artifacts"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1800",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, page: Path, name: str) -> list[dict[str, Any]]:
    """Open `page`, keep its screenshot, and return the console's errors."""
    browser.get(page.resolve().as_uri())
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def test_a_check_report_shows_its_verdict_lanes_and_arrows(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "check.html"
    r = CliRunner().invoke(main, ["check", "membership", "--variant", "hz38-unordered-members",
                                  "--html", str(page)])
    assert r.exit_code == 1, r.output
    errors = _open(browser, page, "check-report")
    assert errors == []
    verdict = browser.find_element(By.ID, "verdict").text
    assert verdict.startswith("verdict: VIOLATION") and "MEM-VIEW-ORDER" in verdict
    swimlane = browser.find_element(By.CSS_SELECTOR, ".swimlane svg")
    assert len(swimlane.find_elements(By.CSS_SELECTOR, ".lane")) == 4
    arrows = swimlane.find_elements(By.CSS_SELECTOR, ".arrow")
    assert len(arrows) >= 4 and all(a.is_displayed() for a in arrows)
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.steps tr.broken")) == 1
    assert swimlane.size["width"] > 600  # drawn, not an empty box


def test_a_validate_report_links_its_violation_to_the_line(browser: Any, tmp_path: Path
                                                           ) -> None:
    from selenium.webdriver.common.by import By

    ce, logs = tmp_path / "ce.json", tmp_path / "logs"
    r = CliRunner().invoke(main, ["check", "membership", "--variant", "hz38-unordered-members",
                                  "--trace-out", str(ce)])
    assert r.exit_code == 1, r.output
    r = CliRunner().invoke(main, ["export", str(ce), "--log", str(logs)])
    assert r.exit_code == 0, r.output
    page, sarif = tmp_path / "validate.html", tmp_path / "out.sarif"
    r = CliRunner().invoke(main, ["validate", str(logs), "--html", str(page), "--sarif",
                                  str(sarif)])
    assert r.exit_code == 1, r.output
    errors = _open(browser, page, "validate-report")
    assert errors == []
    assert browser.find_element(By.ID, "verdict").text.startswith("verdict: VIOLATION")
    link = browser.find_element(By.CSS_SELECTOR, ".violation a.source")
    file, line = link.text.rsplit(":", 1)
    assert Path(file).exists() and int(line) > 0
    assert link.get_attribute("href").endswith(f"#L{line}")
    # the SARIF log written beside it places the same violation on the same lines
    (result,) = json.loads(sarif.read_text())["runs"][0]["results"]
    places = [(x["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1],
               x["physicalLocation"]["region"]["startLine"])
              for x in result["locations"] + result.get("relatedLocations", [])]
    assert (Path(file).name, int(line)) in places
    hit = browser.find_element(By.CSS_SELECTOR, ".violation pre.context b.hit")
    assert hit.text.split()[0] == line
    assert browser.find_element(By.ID, "views-chart").find_elements(By.CSS_SELECTOR,
                                                                   ".series")


def test_prove_and_zoo_reports_show_a_row_per_verdict(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "prove.html"
    r = CliRunner().invoke(main, ["prove", "membership", "--depth", "2", "--no-proof",
                                  "--json", "--html", str(page)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert _open(browser, page, "prove-report") == []
    assert browser.find_element(By.ID, "verdict").text.startswith("verdict: OK")
    shown = [(row.find_elements(By.TAG_NAME, "td")[0].text,
              row.find_elements(By.TAG_NAME, "td")[1].text.split(" ")[0])
             for row in browser.find_elements(By.CSS_SELECTOR, "table.proofs tr")[1:]]
    assert shown == [(s["spec"], s["verdict"]) for m in doc["models"] for s in m["specs"]]

    page = tmp_path / "zoo.html"
    r = CliRunner().invoke(main, ["zoo", "--profile", "hz-3.7", "--json", "--html", str(page)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert _open(browser, page, "zoo-profile-report") == []
    assert browser.find_element(By.ID, "verdict").text.startswith("verdict: OK, zoo of profile")
    declared = browser.find_elements(By.CSS_SELECTOR, "#models tr.declared")
    assert len(declared) == sum(len(m["broken"]) for m in doc["models"]) > 0
    assert [row.find_element(By.CSS_SELECTOR, "td.finding").text for row in declared] == [
        b["finding"] for m in doc["models"] for b in m["broken"]]


def _walk(steps: int = 60) -> tuple[Any, Any]:
    """A random walk of `steps` steps of the membership model with 7 members (5, and 2 that
    join): the first seed whose walk goes that far, the steps in a fixed order."""
    import random

    from partsafe.checker.engine.result import Trace
    from partsafe.checker.protocols import catalog
    from partsafe.checker.report import canonical

    model = catalog.get("membership").make("fixed", {
        "members": 5, "joiners": 2, "crashes": 2, "joins": 2, "suspicions": 3, "losses": 2,
        "publishes": 4})
    init = next(iter(model.init_states()))
    for seed in range(100):
        rng, state, path = random.Random(seed), init, []
        while len(path) < steps:
            successors = sorted(model.successors(state), key=lambda s: canonical(s[0]))
            if not successors:
                break
            action, state = rng.choice(successors)
            path.append((action, state))
        if len(path) == steps:
            return model, Trace(init, 0, path)
    raise AssertionError(f"no walk of {steps} steps")


def test_sixty_steps_and_seven_lanes_stay_legible(browser: Any, tmp_path: Path) -> None:
    """A 60-step run of 7 members drawn, then measured as Chromium lays it out: no text covers
    another, and every text is inside the picture."""
    from itertools import combinations

    from partsafe.checker.render import swimlane

    model, trace = _walk()
    d = swimlane.diagram(model, trace, title="a walk of 60 steps", broken=60,
                         sentence="the last step")
    assert (len(d.lanes), len(d.rows)) == (7, 60) and d.arrows
    picture = tmp_path / "walk.svg"
    picture.write_text(swimlane.to_svg(d), encoding="utf-8")
    assert _open(browser, picture, "swimlane-60-steps-7-lanes") == []
    width, height = browser.execute_script(
        "const s = document.documentElement; return [s.width.baseVal.value, "
        "s.height.baseVal.value];")
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('text')).map(t => { const b = t.getBBox();"
        " return [b.x, b.y, b.x + b.width, b.y + b.height, t.textContent]; });")
    assert len(texts) > 2 * 60
    outside = [t[4] for t in texts if t[0] < 0 or t[1] < 0 or t[2] > width or t[3] > height]
    assert outside == []
    covered = [(a[4], b[4]) for a, b in combinations(texts, 2)
               if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5
               and b[1] < a[3] - 0.5]
    assert covered == []
    # the labels move along their arrows to free places: most arrows keep theirs
    from selenium.webdriver.common.by import By

    labelled = len(browser.find_elements(By.CSS_SELECTOR, "text.arrow-label"))
    assert labelled >= 0.8 * len(d.arrows), (labelled, len(d.arrows))
