"""The entry points: `simulate` writes a simulated cluster's logs and their manifest,
`generate` a mix of protocol lines and noise for the scan benchmarks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from partsafe.checker.validation.local import LOG_SPECS
from partsafe.checker.validation.simulate.cluster import Simulation
from partsafe.checker.validation.simulate.inject import INJECTORS
from partsafe.checker.validation.simulate.manifest import MANIFEST_NAME, Injection, Manifest

#: the most members a run writes (one open file and one noise pool each)
MAX_MEMBERS = 1000


def simulate(out: Path, *, members: int, partitions: int, events: int,
             lines: int | None = None, size: int | None = None, inject: Sequence[str] = (),
             seed: int = 1, progress: Callable[[int, int], None] | None = None,
             migrations: bool = True) -> Manifest:
    """Write the logs of a simulated cluster into `out`, one file per member, and its manifest
    (``.manifest.json``, also returned).

    `members` members (at least 2) and `partitions` partitions (at least 1); about `events`
    protocol records (more when injections need further eras to find members in the state they
    need); about `lines` lines in all, or about `size` bytes, the rest noise (default: about
    `DEFAULT_NOISE_PER_EVENT` noise lines per event). `inject` lists spec ids of
    `partsafe.checker.validation.local.LOG_SPECS`; each is injected once, after a random point, and
    recorded in the manifest. The same arguments give byte-identical files. `progress` is
    called now and then with the events and bytes written so far. Files of the same names in
    `out` are overwritten; nothing else there is touched. `migrations=False` leaves out the
    partition walks (membership lines only, but for injected ones).
    """
    if not 2 <= members <= MAX_MEMBERS:
        raise ValueError(f"members must be 2 to {MAX_MEMBERS}, not {members}")
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    if events < 1:
        raise ValueError(f"events must be at least 1, not {events}")
    if lines is not None and size is not None:
        raise ValueError("give lines or size, not both")
    for name, value in (("lines", lines), ("size", size)):
        if value is not None and value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")
    specs = [s.upper() for s in inject]
    for spec in specs:
        if spec not in LOG_SPECS or spec not in INJECTORS:
            raise ValueError(f"cannot inject {spec!r}: the specs a log can show are "
                             f"{', '.join(LOG_SPECS)}")
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    budget = (size, True) if size is not None else (lines, False) if lines is not None else None
    sim = Simulation(out, members, partitions, events, budget, seed, progress, migrations)
    # each injection is due after a random number of events, and is written at the end of the
    # first era after that in which its members can be found
    pending = sorted((sim.rng.randrange(events), i, spec) for i, spec in enumerate(specs))
    placed: dict[int, Injection] = {}
    late = 0  # eras after the events were reached, for the injections still to place
    try:
        while not (sim.done() and not pending):
            sim.era(lambda: sim.done() and not pending)
            used: set[str] = set()
            for item in list(pending):
                due, i, spec = item
                if due > sim.events:
                    break
                made = INJECTORS[spec](sim, used)
                if made is not None:
                    placed[i] = made
                    pending.remove(item)
            late += sim.done()
            if late > 100 + 10 * len(specs):  # pragma: no cover - members are found far sooner
                raise RuntimeError(f"could not inject {', '.join(s for *_, s in pending)}")
    finally:
        sim.finish()
    manifest = Manifest(
        out=str(out), seed=seed, members=members, partitions=partitions,
        requested={"events": events, "lines": lines, "size": size, "inject": specs,
                   "migrations": migrations},
        files=[f.stats for f in sim.files.values()],
        injections=[placed[i] for i in sorted(placed)],
        events=sim.events, eras=sim.eras, walks=len(sim.pools.scripts))
    manifest.lines = sum(f.lines for f in manifest.files)
    manifest.bytes = sum(f.bytes for f in manifest.files)
    (out / MANIFEST_NAME).write_text(json.dumps(manifest.as_dict(run=False), indent=1) + "\n")
    manifest.seconds = time.perf_counter() - started
    return manifest


def generate(out: Path, *, lines: int, model: str = "cluster", relevant: float = 0.02,
             seed: int = 1, members: int = 4) -> dict[str, int]:
    """About `lines` lines of logs of `members` members into `out`, about `relevant` of them
    protocol records from walks of `model`: ``cluster`` (membership and partition service, as
    `simulate`) or ``membership`` (design 002 alone: the scan benchmark's mix). Returns the counts
    (lines, events, files, runs: the cluster's incarnations)."""
    if model not in ("membership", "cluster"):
        raise ValueError(f"unknown model {model!r} for generate: membership or cluster")
    made = simulate(out, members=members, partitions=271,
                    events=max(1, round(lines * relevant)), lines=lines, seed=seed,
                    migrations=model == "cluster")
    return {"lines": made.lines, "events": made.events, "files": len(made.files),
            "runs": made.eras}
