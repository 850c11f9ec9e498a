"""Swim lanes, charts and HTML reports: what they draw of a run, and that text from a model, a
log or a file stays text."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker import artifact
from partsafe.checker.cli.main import main
from partsafe.checker.render import charts, swimlane

DATA = Path(__file__).parent.parent / "data"
SVG = "{http://www.w3.org/2000/svg}"
#: saved counterexamples of three protocol families
ARTIFACTS = ["membership_hz39_claim_leaves_out_an_accepter", "ignite_zone_two_leaders",
             "hz41_finalize_failed_mig_atomic"]


def _diagram(name: str) -> tuple[swimlane.Diagram, ET.Element]:
    doc = json.loads((DATA / f"{name}.json").read_text())
    model, trace, message = artifact.replay(doc, name)
    d = swimlane.diagram(model, trace, title=f"{doc['model']} breaks {doc['spec']}",
                         broken=trace.depth, sentence=message)
    return d, ET.fromstring(swimlane.to_svg(d).split("?>", 1)[1])


def _classed(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


@pytest.mark.parametrize("name", ARTIFACTS)
def test_a_swim_lane_has_a_lane_per_member_an_arrow_per_message_and_the_broken_step(
        name: str) -> None:
    d, root = _diagram(name)
    doc = json.loads((DATA / f"{name}.json").read_text())
    members = [k for k in doc["steps"][0]["state"] if k not in swimlane.NOT_LANES]
    assert d.lanes[:len(members)] == members
    assert len(_classed(root, "lane")) == len(d.lanes)
    deliveries = [s for s in doc["steps"] if s["action"].startswith(("deliver", "reorder"))]
    delivered = [a for a in d.arrows if a.delivered is not None and not a.lost]
    assert len(delivered) == len(deliveries)  # every delivery has its send
    assert len(_classed(root, "arrow")) == len(d.arrows)
    assert len(_classed(root, "step")) == len(doc["steps"])
    assert len(_classed(root, "broken")) == 1
    assert _classed(root, "sentence")[0].text == swimlane.cut(doc["message"], 180) or \
        doc["message"].startswith(_classed(root, "sentence")[0].text.rstrip("…"))


def test_a_message_is_drawn_from_the_step_that_sent_it_to_the_one_that_delivered_it() -> None:
    d, _ = _diagram("membership_hz39_claim_leaves_out_an_accepter")
    doc = json.loads((DATA / "membership_hz39_claim_leaves_out_an_accepter.json").read_text())
    for a in d.arrows:
        if a.delivered is None:
            continue
        step = doc["steps"][a.delivered - 1]  # the artifact lists step 1 first
        assert step["action"].endswith(f"{a.src}→{a.dst}")
        assert a.sent < a.delivered


def test_text_from_a_model_or_a_log_is_inert_in_a_picture() -> None:
    hostile = '<script>alert("x")</script> & \x01\x1b'
    d = swimlane.Diagram(hostile, [hostile, "B"], {hostile: hostile}, [
        swimlane.Row(hostile, hostile, "timer", {hostile: hostile})],
        [swimlane.Arrow(hostile, "B", hostile, 0, 1)], broken=1, sentence=hostile)
    svg = swimlane.to_svg(d)
    root = ET.fromstring(svg.split("?>", 1)[1])  # well-formed XML: no control byte survives
    assert not list(root.iter(f"{SVG}script"))
    assert "<script>" not in svg and "\x01" not in svg
    chart = charts.line_chart([(hostile, [(0, 1), (1, 2)])], title=hostile, x_label=hostile,
                              y_label=hostile)
    assert "<script>" not in chart


def test_check_draws_the_counterexample_and_writes_its_report(tmp_path: Path) -> None:
    svg, page = tmp_path / "ce.svg", tmp_path / "ce.html"
    r = CliRunner().invoke(main, ["check", "membership", "--variant", "hz38-unordered-members",
                                  "--svg", str(svg), "--html", str(page)])
    assert r.exit_code == 1, r.output
    root = ET.fromstring(svg.read_text().split("?>", 1)[1])
    assert len(_classed(root, "lane")) == 4 and _classed(root, "broken")
    text = page.read_text()
    assert "MEM-VIEW-ORDER" in text and 'id="verdict"' in text
    assert "verdict: VIOLATION" in text
    assert text.count("<svg") == 3  # the swim lanes and two charts of the search
    assert "http://" not in re.sub(r'xmlns(:xlink)?="[^"]+"', "", text)  # nothing fetched


def test_a_clean_check_draws_nothing_and_says_so(tmp_path: Path) -> None:
    svg = tmp_path / "none.svg"
    r = CliRunner().invoke(main, ["check", "twophase", "--svg", str(svg)])
    assert r.exit_code == 0
    assert not svg.exists() and "no violation, so no diagram" in r.output


def test_replay_and_conform_draw_their_runs(tmp_path: Path) -> None:
    svg = tmp_path / "replay.svg"
    name = DATA / "ignite_zone_two_leaders.json"
    r = CliRunner().invoke(main, ["replay", str(name), "--svg", str(svg)])
    assert r.exit_code == 1 and svg.exists()
    logs = [str(DATA / "logs" / f"hz_0{k}.log") for k in (6, 7, 8)]
    conformed = tmp_path / "conform.svg"
    r = CliRunner().invoke(main, ["conform", "membership", *logs, "--svg", str(conformed),
                                  "--json"])
    assert r.exit_code == 0, r.output
    run = json.loads(r.stdout)["run"]
    root = ET.fromstring(conformed.read_text().split("?>", 1)[1])
    # one step drawn for each step of the matched run, logged or not (B's log ends before A
    # suspects it: a crash, unlogged)
    assert len(_classed(root, "step")) == len(run) >= 5
    assert sum(step["record"] is None for step in run) >= 1


def test_a_validate_report_links_each_violation_to_its_line_and_escapes_the_log(
        tmp_path: Path) -> None:
    """A log whose member list holds a host name with markup in it: the report shows it as
    text, and links the violation to its file and line."""
    from partsafe.traces import events as ev
    from partsafe.traces.writer import LogWriter

    a, b = "10.0.0.1:5701", "10.0.0.2:5701"
    found = [ev.MemberListInstalled(member=b, version=3, members=(a, b), master=a, order=0),
             ev.MemberListInstalled(member=b, version=2, members=(a, b), master=a, order=1)]
    folder = tmp_path / "logs"
    folder.mkdir()
    out = (folder / "b.log").open("w")
    LogWriter().write(found, lambda m: out)
    out.close()
    text = (folder / "b.log").read_text()
    hostile = text.replace("[dev]", '[<script>alert("x")</script>\x01]', 1)
    (folder / "b.log").write_text(hostile)
    page = tmp_path / "report.html"
    r = CliRunner().invoke(main, ["validate", str(folder), "--html", str(page)])
    assert r.exit_code == 1, r.output
    body = page.read_text()
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert "\x01" not in body
    link = re.search(r'<a class="source" href="file://[^"]+b\.log#L(\d+)"', body)
    assert link is not None
    # the lines around it: the linked line in bold, with its number
    assert re.search(rf'<b class="hit">\s*{link[1]}  ', body)


def test_zoo_and_prove_reports_list_their_verdicts(tmp_path: Path) -> None:
    page = tmp_path / "prove.html"
    r = CliRunner().invoke(main, ["prove", "membership", "--depth", "2", "--no-proof",
                                  "--html", str(page)])
    assert r.exit_code == 0, r.output
    body = page.read_text()
    assert "MEM-VIEW-ORDER" in body and "bounded" in body


def test_each_junit_case_names_the_html_report_written_beside_it(tmp_path: Path) -> None:
    for args in (["check", "membership", "--variant", "hz38-unordered-members"],
                 ["validate", str(DATA / "logs")]):
        page, junit = tmp_path / "report.html", tmp_path / "report.xml"
        r = CliRunner().invoke(main, [*args, "--html", str(page), "--junit", str(junit)])
        assert r.exit_code in (0, 1), r.output
        cases = list(ET.parse(junit).getroot().iter("testcase"))
        assert cases and all(
            c.find("properties/property[@name='html_report']").get("value") == str(page)
            for c in cases)
        assert page.exists()
