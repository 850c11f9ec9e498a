"""Checkpoints: a search saved at a level end and resumed gives what one search in one go gives;
a checkpoint of another search, other code or other hashing is refused with a clear message."""

from __future__ import annotations

import json
import math
import os
import pickle
import signal
import subprocess
import sys
import time
from array import array
from pathlib import Path
from unittest.mock import patch

import pytest
from searches import same

from partsafe.checker.actor.model import CRASHED, World
from partsafe.checker.engine import checkpoint as ck
from partsafe.checker.engine.bfs import Bounds, Result, Trace, explore
from partsafe.checker.engine.checkpoint import Checkpoint, CheckpointError
from partsafe.checker.engine.fingerprints import fingerprint
from partsafe.checker.engine.model import Goal, Lasso
from partsafe.checker.engine.rebuild import goal_step
from partsafe.checker.protocols.catalog import get
from partsafe.checker.protocols.twophase import TwoPhase


@pytest.fixture(autouse=True)
def _seed(monkeypatch: pytest.MonkeyPatch) -> None:
    # one process hashes alike throughout: the seed only has to be named for the header
    monkeypatch.setenv("PYTHONHASHSEED", "7")


def resumed(make, tmp_path: Path, depth: int, **kwargs) -> Result:
    """A search of `make()` stopped at `depth` with a checkpoint, then resumed to its end."""
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    first = explore(make(), bounds=Bounds(max_depth=depth), checkpoint=saved, **kwargs)
    assert first.result == "incomplete" and first.depth == depth
    assert saved.exists() and ck.read_header(saved.path)["depth"] == depth
    again = explore(make(), checkpoint=saved, **kwargs)
    assert again.resumed_at == depth
    return again


def test_a_resumed_search_is_the_search_in_one_go(tmp_path: Path) -> None:
    again = resumed(lambda: TwoPhase(3), tmp_path, 4)
    same(again, explore(TwoPhase(3)))
    assert (again.result, again.distinct_states, again.depth) == ("ok", 80, 10)
    assert not (tmp_path / "search.ck").exists()  # a verdict: nothing left to resume


def test_a_violation_after_the_resume_has_the_shortest_trace(tmp_path: Path) -> None:
    again = resumed(lambda: TwoPhase(3, "tm-commit-early"), tmp_path, 2)
    assert again.result == "violation"
    same(again, explore(TwoPhase(3, "tm-commit-early")))


class _Loop(TwoPhase):
    """0 -> 1 -> 2 -> 3 -> 1, and 0 -> 4: a cycle whose first edges come before depth 2."""

    def __init__(self) -> None:
        self.scope = {}
        self.edges = {0: (1, 4), 1: (2,), 2: (3,), 3: (1,), 4: ()}

    def init_states(self):  # type: ignore[no-untyped-def]
        return [0]

    def successors(self, state):  # type: ignore[no-untyped-def]
        return [(("to", t), t) for t in self.edges[state]]

    def representative(self, state):  # type: ignore[no-untyped-def]
        return state

    def properties(self):  # type: ignore[no-untyped-def]
        return []

    def goals(self):  # type: ignore[no-untyped-def]
        return []

    def finished(self, state):  # type: ignore[no-untyped-def]
        return True

    def lassos(self):  # type: ignore[no-untyped-def]
        return [Lasso("FINITE", "round the loop", lambda prev, action, nxt: action == ("to", 2))]


def test_the_edges_for_lassos_survive_a_resume(tmp_path: Path) -> None:
    """The cycle 1 -> 2 -> 3 -> 1 is closed only with the edges found before the checkpoint."""
    again = resumed(_Loop, tmp_path, 2)
    (v,) = again.violations
    assert v.spec == "FINITE" and [a for a, _ in v.trace.steps] == [
        ("to", 1), ("to", 2), ("to", 3), ("to", 1)]


def test_edges_spilled_to_disk_survive_a_resume_and_go_with_the_verdict(tmp_path: Path) -> None:
    """With edges spilled beside the checkpoint (every 2 here), the resumed search cuts off what
    the stopped one wrote after its save and closes the same cycle; a verdict removes them."""
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    with patch("partsafe.checker.engine.edges.SPILL", 2):
        explore(_Loop(), bounds=Bounds(max_depth=2), checkpoint=saved)
        assert (saved.edges / "src").stat().st_size == 8 * 3  # the edges of depths 0 and 1
        with (saved.edges / "marks").open("ab") as f:
            f.write(b"\x01")  # a stray edge, written after the save by a process killed then
        again = explore(_Loop(), checkpoint=saved)
    (v,) = again.violations
    assert [a for a, _ in v.trace.steps] == [("to", 1), ("to", 2), ("to", 3), ("to", 1)]
    assert not saved.exists() and not saved.edges.exists()


def test_the_checkpoint_command_counts_the_edges_beside_the_file(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    with patch("partsafe.checker.engine.edges.SPILL", 2):
        explore(_Loop(), bounds=Bounds(max_depth=2), checkpoint=saved)
    info = json.loads(partsafe("checkpoint", str(saved.path), "--json").stdout)
    assert info["edge_bytes"] == 3 * 17
    shown = " ".join(partsafe("checkpoint", str(saved.path)).stdout.split())  # table wraps
    assert "MB of edges in search.ck.edges/" in shown


def test_edges_missing_from_a_checkpoint_are_reported(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    with patch("partsafe.checker.engine.edges.SPILL", 2):
        explore(_Loop(), bounds=Bounds(max_depth=2), checkpoint=saved)
    (saved.edges / "dst").unlink()
    with pytest.raises(CheckpointError, match="edges of this checkpoint are missing"):
        explore(_Loop(), checkpoint=saved)


def test_an_actor_model_with_symmetry_and_revision_ranks_resumes(tmp_path: Path) -> None:
    """The Ignite model keeps every edge for IGN-FINITE, revisions as ranks and one state of
    each mirrored pair; the current source's variant breaks IGN-CONVERGE at depth 41, found
    again after a resume at 20."""
    entry = get("ignite-rebalance")
    again = resumed(lambda: entry.make("ig-source-keeps-append", {}), tmp_path, 20)
    same(again, explore(entry.make("ig-source-keeps-append", {})))
    assert [(v.spec, v.trace.depth) for v in again.violations] == [("IGN-CONVERGE", 41)]


def test_a_crashed_node_is_crashed_again_after_a_resume() -> None:
    """The actor layer compares a crashed node's state by identity: an unpickled one is an equal
    string only, until the model restores it."""
    world = World(("x", CRASHED), frozenset(), (), (), ())
    loaded = pickle.loads(pickle.dumps(world))
    model = get("membership").make("fixed", {})
    (back,) = model.restore([loaded])
    assert back.nodes[1] is CRASHED and back == world


def test_a_time_bound_stops_at_the_level_end_and_saves(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    first = explore(TwoPhase(3), bounds=Bounds(max_seconds=1e-9), checkpoint=saved)
    assert first.result == "incomplete" and "saved at depth 1" in str(first.incomplete_reason)
    again = explore(TwoPhase(3), checkpoint=saved)
    same(again, explore(TwoPhase(3)))
    assert (again.result, again.distinct_states, again.depth) == ("ok", 80, 10)


def test_saves_come_every_so_many_seconds(tmp_path: Path) -> None:
    told: list[int] = []
    saved = Checkpoint(tmp_path / "search.ck", every=0.0, notify=lambda p: told.append(p["depth"]),
                       share=math.inf)
    r = explore(TwoPhase(2), checkpoint=saved)
    assert told == list(range(1, r.depth + 1))  # every level end, with every=0
    assert saved.last_save > 0


def test_a_long_save_puts_the_next_one_off(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=600.0)
    assert not saved.due(599.0) and saved.due(600.0)
    saved.last_save = 100.0  # at most 5% of the time: the next save 2,000 s after this one
    assert not saved.due(1999.0) and saved.due(2000.0)
    told: list[int] = []
    saved = Checkpoint(tmp_path / "search.ck", every=0.0, notify=lambda p: told.append(p["depth"]))
    saved.last_save = 1e6
    r = explore(TwoPhase(2), bounds=Bounds(max_depth=3), checkpoint=saved)
    assert r.result == "incomplete" and told == [3]  # only the save at the depth bound


@pytest.mark.parametrize("other, needle", [
    (lambda: TwoPhase(4), "another search"),
    (lambda: TwoPhase(3, "tm-commit-early"), "another search"),
])
def test_a_checkpoint_of_another_search_is_refused(tmp_path: Path, other, needle: str) -> None:
    saved = Checkpoint(tmp_path / "search.ck")
    explore(TwoPhase(3), bounds=Bounds(max_depth=2), checkpoint=saved)
    with pytest.raises(CheckpointError, match=needle):
        explore(other(), checkpoint=saved)
    with pytest.raises(CheckpointError, match="another search"):
        explore(TwoPhase(3), symmetry=False, checkpoint=saved)


def test_a_checkpoint_of_other_code_or_hashing_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = Checkpoint(tmp_path / "search.ck")
    explore(TwoPhase(3), bounds=Bounds(max_depth=2), checkpoint=saved)
    with monkeypatch.context() as m:
        m.setattr(ck, "code_digest", lambda: "0" * 64)
        with pytest.raises(CheckpointError, match="other partsafe code"):
            explore(TwoPhase(3), checkpoint=saved)
    with monkeypatch.context() as m:
        m.setattr(ck, "hash_probe", lambda: 1)
        with pytest.raises(CheckpointError, match="hashes differently"):
            explore(TwoPhase(3), checkpoint=saved)
    with monkeypatch.context() as m:
        m.setenv("PYTHONHASHSEED", "8")
        with pytest.raises(CheckpointError, match="PYTHONHASHSEED=7"):
            explore(TwoPhase(3), checkpoint=saved)


def test_the_code_digest_is_of_the_code_at_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources edited on disk while a search runs do not change what its checkpoints claim."""
    saved = Checkpoint(tmp_path / "search.ck")
    monkeypatch.setattr(ck, "code_digest", lambda: "edited")
    explore(TwoPhase(3), bounds=Bounds(max_depth=2), checkpoint=saved)
    assert ck.read_header(saved.path)["code"] == saved.code != "edited"


def test_saving_needs_a_fixed_hash_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONHASHSEED")
    with pytest.raises(CheckpointError, match="PYTHONHASHSEED"):
        explore(TwoPhase(3), checkpoint=Checkpoint(tmp_path / "search.ck", every=0.0))


def test_a_file_that_is_no_checkpoint_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "search.ck"
    bad.write_text("not a pickle")
    with pytest.raises(CheckpointError, match="not a partsafe checkpoint"):
        explore(TwoPhase(3), checkpoint=Checkpoint(bad))



def test_a_truncated_checkpoint_is_refused(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=0.0)
    explore(TwoPhase(3), bounds=Bounds(max_depth=4), checkpoint=saved)
    data = saved.path.read_bytes()
    saved.path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(CheckpointError, match="damaged"):
        explore(TwoPhase(3), checkpoint=saved)


def test_the_columns_are_written_out_of_the_body_and_read_back_whole(tmp_path: Path) -> None:
    """Arrays go to the file straight from memory, after a layout of their type codes and sizes,
    and come back as arrays of the same type and content."""
    saved = Checkpoint(tmp_path / "search.ck")
    wide, narrow = array("Q", range(1, 1 << 20)), array("B", b"marks")
    saved.save({"model": "m"}, {}, {"edges": (wide, narrow), "again": wide})
    with saved.path.open("rb") as f:
        pickle.load(f)
        assert pickle.load(f) == [("Q", 8 * len(wide)), ("B", 5)]
    body = saved.load({"model": "m"})
    assert body["edges"] == (wide, narrow) and body["again"] is body["edges"][0]
    assert type(body["edges"][0]) is array and body["edges"][0].typecode == "Q"

# --- the command ------------------------------------------------------------------------------


def partsafe(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    return subprocess.run([sys.executable, "-m", "partsafe", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_check_saves_and_resumes_in_new_processes(tmp_path: Path) -> None:
    """Each process gets its own hash seed unless the command fixes it: the resumed search only
    matches the first one's fingerprints because partsafe starts itself under the file's seed."""
    path = tmp_path / "search.ck"
    first = partsafe("check", "twophase", "--checkpoint", str(path), "--max-depth", "4", "--json")
    assert first.returncode == 3 and path.exists(), first.stderr
    assert json.loads(first.stdout)["result"] == "incomplete"
    info = json.loads(partsafe("checkpoint", str(path), "--json").stdout)
    assert (info["model"], info["depth"], info["resumable_here"]) == ("twophase", 4, True)
    assert info["edge_bytes"] == 0  # TwoPhase has no lasso property: no edges kept
    assert info["states"] == json.loads(first.stdout)["distinct_states"]
    shown = partsafe("checkpoint", str(path))
    assert "depth 4" in shown.stdout and "resumable here" in shown.stdout
    again = partsafe("check", "twophase", "--checkpoint", str(path), "--json", "--progress")
    doc = json.loads(again.stdout)
    assert again.returncode == 0, again.stderr
    whole = json.loads(partsafe("check", "twophase", "--json").stdout)
    assert doc["resumed_at_depth"] == 4 and "resuming" in again.stderr
    assert (doc["distinct_states"], doc["transitions"], doc["goals"]) == (
        whole["distinct_states"], whole["transitions"], whole["goals"])
    assert (doc["result"], doc["distinct_states"], doc["depth"]) == ("ok", 80, 10)
    assert not path.exists()


def test_check_with_a_bad_checkpoint_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "search.ck"
    bad.write_text("not a pickle")
    r = partsafe("check", "twophase", "--checkpoint", str(bad))
    assert r.returncode == 2 and "--checkpoint" in r.stderr and "search.ck" in r.stderr
    assert "Traceback" not in r.stderr
    r = partsafe("checkpoint", str(bad))
    assert r.returncode == 2 and "not a partsafe checkpoint" in r.stderr
    r = partsafe("check", "--checkpoint", str(tmp_path / "x.ck"))
    assert r.returncode == 2 and "need a MODEL" in r.stderr
    r = partsafe("check", "twophase", "--checkpoint", str(tmp_path / "x.ck"),
                 "--checkpoint-every", "0")
    assert r.returncode == 2 and "--checkpoint-every" in r.stderr


# --- signals ----------------------------------------------------------------------------------


class _Signalled(TwoPhase):
    """TwoPhase that sends itself `signum` at its `at`-th expansion, mid-level."""

    def __init__(self, rms: int, at: int | None, signum: int = signal.SIGTERM) -> None:
        super().__init__(rms)
        self.at, self.signum, self.calls = at, signum, 0

    def successors(self, state):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == self.at:
            os.kill(os.getpid(), self.signum)
        return super().successors(state)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_within_the_level_and_the_resume_ends_the_search(
        tmp_path: Path, signum: int) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    one_go = explore(_Signalled(6, None), symmetry=False)
    handler = signal.getsignal(signum)
    first = explore(_Signalled(6, 3000, signum), symmetry=False, checkpoint=saved)
    assert first.result == "incomplete" and signal.Signals(signum).name in str(
        first.incomplete_reason)
    assert "still to expand" in str(first.incomplete_reason) and saved.exists()
    assert signal.getsignal(signum) == handler  # the search puts the handlers back
    header = ck.read_header(saved.path)
    assert 0 < header["depth"] < one_go.depth and header["states"] == first.distinct_states
    again = explore(_Signalled(6, None), symmetry=False, checkpoint=saved)
    assert again.resumed_at == header["depth"]
    same(again, one_go)


def test_check_saves_on_sigterm_and_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "search.ck"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    proc = subprocess.Popen([sys.executable, "-m", "partsafe", "check", "twophase", "--rms", "9",
                             "--no-symmetry", "--checkpoint", str(path), "--checkpoint-every",
                             "1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # the first save says the search has begun, its handlers set (the whole search takes
    # about 95 s)
    deadline = time.monotonic() + 120
    while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert path.exists(), "the search saved no checkpoint"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    doc = json.loads(out)
    assert doc["result"] == "incomplete" and "stopped by SIGTERM" in doc["incomplete_reason"]
    assert ck.read_header(path)["states"] == doc["distinct_states"]


def test_the_command_starts_itself_again_only_when_hashing_differs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ck, "_address_hashing", lambda: False)
    monkeypatch.delenv("PARTSAFE_CHECKPOINT_RESTARTED", raising=False)
    assert ck.rehash_environment("7") is None  # the seed is set, None hashes by value
    env = ck.rehash_environment("8")
    assert env is not None and env["PYTHONHASHSEED"] == "8"
    assert env["PARTSAFE_CHECKPOINT_RESTARTED"] == "1"
    monkeypatch.setenv("PARTSAFE_CHECKPOINT_RESTARTED", "1")
    assert ck.rehash_environment("8") is None  # once at most: the probe tells the rest


def test_a_new_checkpoint_takes_the_seed_set_or_a_random_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "new.ck"
    assert ck.hash_seed_for(path) == "7"
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert ck.hash_seed_for(path).isdigit()
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    explore(TwoPhase(2), bounds=Bounds(max_depth=1), checkpoint=Checkpoint(path))
    monkeypatch.setenv("PYTHONHASHSEED", "9")
    assert ck.hash_seed_for(path) == "7"  # the file's, whatever is set now


class _Mirror(TwoPhase):
    """Two counters that may each go from 0 to 1, interchangeable: (1, 0) and (0, 1) are one
    state under symmetry."""

    def __init__(self) -> None:
        self.scope = {}

    def init_states(self):  # type: ignore[no-untyped-def]
        return [(0, 0)]

    def successors(self, state):  # type: ignore[no-untyped-def]
        return [(("inc", i), (*state[:i], 1, *state[i + 1:])) for i in (0, 1) if not state[i]]

    def representative(self, state):  # type: ignore[no-untyped-def]
        return tuple(sorted(state))


def test_a_goal_step_is_found_again_from_the_other_member_of_a_symmetry_class() -> None:
    """A search resumed from a checkpoint may keep (1, 0) where the rebuilt trace reaches
    (0, 1): the step that reached the goal from (1, 0), ("inc", 1), is not enabled there, and
    the step to a state of the same class that reaches the goal is taken instead."""
    model = _Mirror()
    both = Goal("both", "both counters at 1", lambda prev, action, nxt: nxt == (1, 1))
    trace = Trace((0, 1), 0, [])
    step = goal_step(model, model.representative, trace, both, ("inc", 1),
                     fingerprint((1, 1)))
    assert step == (("inc", 0), (1, 1))
    never = Goal("never", "", lambda prev, action, nxt: False)
    with pytest.raises(RuntimeError, match="goal never"):
        goal_step(model, model.representative, trace, never, ("inc", 1), fingerprint((1, 1)))
