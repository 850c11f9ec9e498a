"""`partsafe conform --profile`: the release profile a design is judged under, taken from the
release a product's logs print when none is given (`profiles.profile_of_release`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.refimpl.profiles import profile_of_release


def _log(version: str, second: int = 1) -> str:
    """A member's start and its first member list, as Hazelcast `version` prints them (JUL)."""
    prefix = f"[127.0.0.1]:5701 [lab] [{version}]"
    return (f"Dec 02, 2026 12:05:0{second} AM com.hazelcast.core.LifecycleService\n"
            f"INFO: {prefix} [127.0.0.1]:5701 is STARTING\n"
            f"Dec 02, 2026 12:05:0{second + 1} AM com.hazelcast.internal.cluster.ClusterService\n"
            f"INFO: {prefix} \n\nMembers {{size:1, ver:1}} [\n"
            "\tMember [127.0.0.1]:5701 - 1753f331-78ae-4a7f-95e0-90f72254fd08 this\n]\n\n")


def _conform(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["conform", "membership", *args, "--json"])
    return r.exit_code, (json.loads(r.stdout) if r.exit_code != 2 else {"error": r.output})


@pytest.mark.parametrize(("product", "version", "profile"), [
    ("hazelcast", "3.7.8", "hz-3.7"), ("hazelcast", "3.12.2", "hz-3.9"),
    ("hazelcast", "3.9", "hz-3.9"), ("hazelcast", "4.0.3", None), ("hazelcast", "4.2.8", "hz-4.1"),
    ("hazelcast", "5.5.0", "hz-5"), ("hazelcast", "3.6", None),
    ("ignite", "3.1.0", "ignite-3-zone"), ("ignite", "3.0.0", "ignite-3-table"),
    ("hazelcast", "x.y", None)])
def test_each_release_line_has_its_profile(product: str, version: str,
                                           profile: str | None) -> None:
    assert profile_of_release(product, version) == profile


def test_the_profile_is_the_one_of_the_release_the_logs_print(tmp_path: Path) -> None:
    (tmp_path / "m.log").write_text(_log("3.12.2"))
    code, doc = _conform(str(tmp_path / "m.log"))
    assert code == 0 and doc["verdict"] == "conforms"
    assert doc["profile"] == "hz-3.9" and "hazelcast 3.12.2" in doc["profile_from"]
    code, doc = _conform(str(tmp_path / "m.log"), "--profile", "hz-5")
    assert code == 0 and doc["profile"] == "hz-5" and doc["profile_from"] == ""
    (tmp_path / "m.log").write_text(_log("4.0.3"))
    code, doc = _conform(str(tmp_path / "m.log"))
    assert doc["profile"] == "fixed" and "which no profile models" in doc["profile_from"]


def test_a_profile_that_cannot_judge_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(_log("3.12.2"))
    (tmp_path / "b.log").write_text(_log("5.5.0").replace("5701", "5702"))
    code, doc = _conform(str(tmp_path / "a.log"), str(tmp_path / "b.log"))
    assert code == 2 and "releases of several profiles" in doc["error"]
    assert "hazelcast 3.12.2: hz-3.9" in doc["error"] and "--profile" in doc["error"]
    code, doc = _conform(str(tmp_path / "a.log"), "--profile", "ignite-3-zone")
    assert code == 2 and "does not cover model membership" in doc["error"]
    code, doc = _conform(str(tmp_path / "a.log"), "--profile", "hz-9")
    assert code == 2 and "unknown profile 'hz-9'" in doc["error"]
