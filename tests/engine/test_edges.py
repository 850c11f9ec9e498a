"""The edges kept for lasso properties: in memory, then on disk (checker/engine/edges.py)."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import explore
from partsafe.checker.engine.checkpoint import CheckpointError
from partsafe.checker.engine.edges import EdgeLog, EdgeLogError
from partsafe.checker.protocols.catalog import get


def fill(log: EdgeLog, edges: range) -> None:
    for e in edges:
        log.src.append(e)
        log.dst.append(e + 100)
        log.marks.append(e % 2)
        log.maybe_spill()


def read(log: EdgeLog, size: int) -> list[tuple[int, int, int]]:
    out = []
    for src, dst, marks in log.chunks(size):
        assert src.dtype == np.uint64 and marks.dtype == np.uint8
        out.extend(zip(src.tolist(), dst.tolist(), marks.tolist(), strict=True))
    return out


def test_edges_over_the_spill_go_to_disk_and_read_back_in_order(tmp_path: Path) -> None:
    log = EdgeLog(tmp_path / "edges", spill=3)
    fill(log, range(1, 8))
    assert (log.on_disk, len(log.src), len(log)) == (6, 1, 7)
    assert (tmp_path / "edges" / "dst").stat().st_size == 6 * 8
    assert read(log, 4) == [(e, e + 100, e % 2) for e in range(1, 8)]
    log.close()
    assert (tmp_path / "edges").exists()  # a checkpoint's edges stay with it


def test_a_log_without_a_directory_spills_to_a_temporary_one_removed_on_close() -> None:
    log = EdgeLog(spill=2)
    fill(log, range(1, 4))
    assert log.directory is not None and log.directory.exists() and log.on_disk == 2
    where = log.directory
    log.close()
    assert not where.exists() and len(log) == 0


def test_a_resume_cuts_off_what_was_written_after_the_save(tmp_path: Path) -> None:
    log = EdgeLog(tmp_path / "edges", spill=100)
    fill(log, range(1, 5))
    count = log.saved()
    fill(log, range(5, 9))
    log.flush()
    again = EdgeLog(tmp_path / "edges")
    again.resume(count)
    assert read(again, 3) == [(e, e + 100, e % 2) for e in range(1, 5)]


def test_a_fresh_start_empties_what_an_earlier_search_left(tmp_path: Path) -> None:
    log = EdgeLog(tmp_path / "edges", spill=1)
    fill(log, range(1, 3))
    fresh = EdgeLog(tmp_path / "edges", spill=1)
    fresh.start()
    fill(fresh, range(7, 8))
    assert read(fresh, 10) == [(7, 107, 1)]


def test_a_resume_with_edges_cut_short_is_refused(tmp_path: Path) -> None:
    log = EdgeLog(tmp_path / "edges", spill=1)
    fill(log, range(1, 3))
    with pytest.raises(CheckpointError, match="missing or cut short"):
        EdgeLog(tmp_path / "edges").resume(5)


def test_a_search_in_workers_spills_its_edges_and_judges_the_same() -> None:
    """The Ignite model keeps every edge for IGN-FINITE; spilled every 1,000 edges, from the
    workers' batches, the search has the same states, verdict and goals."""
    entry = get("ignite-rebalance")
    whole = explore(entry.make("fixed", {}))
    flushes = []
    real = EdgeLog.flush

    def counted(log: EdgeLog) -> None:
        flushes.append(len(log.src))
        real(log)

    with (patch("partsafe.checker.engine.edges.SPILL", 1000),
          patch.object(EdgeLog, "flush", counted)):
        spilled = explore(entry.make("fixed", {}), workers=2)
    assert len(flushes) > 10 and max(flushes) < 2000
    assert whole.result == "ok" and not whole.violations
    assert (whole.distinct_states, whole.depth) == (12_704, 59)
    assert (spilled.result, spilled.distinct_states, spilled.transitions) == (
        whole.result, whole.distinct_states, whole.transitions)
    assert [g.reached for g in spilled.goals] == [g.reached for g in whole.goals]


def test_edges_that_cannot_be_written_are_a_clear_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory should be")
    log = EdgeLog(blocked / "edges", spill=1)
    with pytest.raises(EdgeLogError, match="cannot write the edges kept for lasso properties"):
        fill(log, range(1, 2))
    assert len(log.src) == 1 and log.on_disk == 0  # nothing lost, nothing counted


def test_check_exits_2_naming_where_the_edges_could_not_go(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with patch("partsafe.checker.engine.edges.SPILL", 100), patch("tempfile.tempdir", str(blocked)):
        r = CliRunner().invoke(main, ["check", "ignite-rebalance", "--no-progress"],
                               catch_exceptions=False)
    assert r.exit_code == 2 and "cannot write the edges" in r.stderr and str(blocked) in r.stderr
