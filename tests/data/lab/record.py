"""Record the corpus of real runs under tests/data/lab/: each row of `RUNS` is one `partsafe
lab` run, kept as its members' logs (gzip), its journal and a summary (``run.json``).

    python tests/data/lab/record.py              # every run (about an hour on 2 cores)
    python tests/data/lab/record.py hz312-info   # the runs whose name starts so

The runs are real clusters started here (checker/lab/), so a recording is what that release
printed under that schedule; the seeds make the schedule, not the cluster's timing, repeatable.
The tests (tests/lab/test_corpus.py) judge the recordings; this script only records. FINE and
FINEST Hazelcast runs use 61 partitions instead of Hazelcast's 271 so that a recording stays
small. Apache Ignite 3 runs (`IGNITE_RUNS`) are the embedded nodes of ignite-runner 3.1.0.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

from partsafe.checker.lab.faults import parse_faults
from partsafe.checker.lab.ignite import resolve_ignite, run_ignite_lab
from partsafe.checker.lab.releases import resolve
from partsafe.checker.lab.run import LabConfig, LabReport, run_lab

HERE = Path(__file__).resolve().parent

#: (name, release, members, faults, seed, level)
RUNS: tuple[tuple[str, str, int, str, int, str], ...] = (
    ("hz312-info-kill-master-join", "3.12.2", 3, "kill:master,join", 1, "INFO"),
    ("hz312-info-restart-shutdown", "3.12.2", 3, "restart,shutdown", 2, "INFO"),
    ("hz312-info-pause", "3.12.2", 3, "pause", 3, "INFO"),
    ("hz312-info-join-kill", "3.12.2", 3, "join,kill", 4, "INFO"),
    ("hz312-fine-kill-master-restart", "3.12.2", 3, "kill:master,restart", 5, "FINE"),
    ("hz312-finest-shutdown-join", "3.12.2", 3, "shutdown,join", 6, "FINEST"),
    ("hz312-finest-pause", "3.12.2", 3, "pause", 7, "FINEST"),
    ("hz312-fine-restart-master", "3.12.2", 3, "restart:master", 8, "FINE"),
    ("hz42-info-kill-join", "4.2.8", 3, "kill,join", 11, "INFO"),
    ("hz42-info-restart-master", "4.2.8", 3, "restart:master", 12, "INFO"),
    ("hz42-info-shutdown-master-join", "4.2.8", 3, "shutdown:master,join", 13, "INFO"),
    ("hz42-info-pause-master", "4.2.8", 3, "pause:master", 14, "INFO"),
    ("hz42-fine-kill-master-restart", "4.2.8", 3, "kill:master,restart", 15, "FINE"),
    ("hz42-finest-shutdown-pause", "4.2.8", 3, "shutdown,pause", 16, "FINEST"),
    ("hz42-finest-join-kill", "4.2.8", 3, "join,kill", 17, "FINEST"),
    ("hz55-info-kill-master-join", "5.5.0", 3, "kill:master,join", 21, "INFO"),
    ("hz55-info-restart-shutdown", "5.5.0", 3, "restart,shutdown", 22, "INFO"),
    ("hz55-info-pause-join", "5.5.0", 3, "pause,join", 23, "INFO"),
    ("hz55-info-shutdown-master", "5.5.0", 3, "shutdown:master", 24, "INFO"),
    ("hz55-fine-kill-restart", "5.5.0", 3, "kill,restart", 25, "FINE"),
    ("hz55-finest-pause-master", "5.5.0", 3, "pause:master", 26, "FINEST"),
    ("hz55-finest-shutdown-join", "5.5.0", 3, "shutdown,join", 27, "FINEST"),
    ("hz55-fine-kill-master", "5.5.0", 3, "kill:master", 28, "FINE"),
    ("hz53-info-restart-kill", "5.3.8", 3, "restart,kill", 31, "INFO"),
    ("hz53-fine-pause-shutdown", "5.3.8", 3, "pause,shutdown", 32, "FINE"),
    ("hz57-info-kill-master-join", "5.7.0", 3, "kill:master,join", 33, "INFO"),
    ("hz57-finest-restart", "5.7.0", 3, "restart", 34, "FINEST"),
    # each member in a network namespace of its own (root)
    ("hz312-info-partition", "3.12.2", 3, "partition", 35, "INFO"),
    ("hz55-fine-partition-master", "5.5.0", 3, "partition:master", 36, "FINE"),
)


#: Apache Ignite 3 runs: (name, release, nodes, faults, seed, level); node 1 holds the
#: metastorage, so the faults strike the others (checker/lab/ignite.py)
IGNITE_RUNS: tuple[tuple[str, str, int, str, int, str], ...] = (
    ("ig31-info-restart-join", "3.1.0", 3, "restart:2,join", 41, "INFO"),
    ("ig31-info-kill-shutdown", "3.1.0", 4, "kill:3,shutdown:4", 42, "INFO"),
    ("ig31-fine-pause-restart", "3.1.0", 3, "pause:3,restart:2", 43, "FINE"),
)


def record(name: str, version: str, members: int, faults: str, seed: int, level: str) -> None:
    def progress(message: str) -> None:
        print(f"  {name}: {message}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix=f"lab-{name}-") as tmp:
        steps = parse_faults(faults, members)
        report: LabReport
        if name.startswith("ig"):
            product = "ignite"
            ignite = resolve_ignite(version)
            report = run_ignite_lab(ignite, Path(tmp), members, steps, seed, level, rows=100,
                                    progress=progress)
            profile, partitions, backups = ignite.profile, report.partitions, None
        else:
            product = "hazelcast"
            release = resolve("hazelcast", version)
            config = LabConfig(release, Path(tmp), members, steps, seed, level, entries=300,
                               gap=2.0, partitions=271 if level == "INFO" else 61, judge=False)
            report = run_lab(config, progress)
            profile, partitions, backups = release.profile, config.partitions, config.backups
        target = HERE / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for log in sorted(Path(tmp).glob("member-*.log")):
            with open(log, "rb") as src, gzip.open(target / f"{log.name}.gz", "wb", 9) as dst:
                shutil.copyfileobj(src, dst)
        shutil.copy(Path(tmp) / "journal.jsonl", target / "journal.jsonl")
        summary = {"name": name, "product": product, "release": f"{product} {version}",
                   "version": version, "profile": profile, "members": members,
                   "faults": faults, "seed": seed, "level": level, "partitions": partitions,
                   "backups": backups, "data": report.data, "seconds": report.seconds}
        (target / "run.json").write_text(json.dumps(summary, indent=1) + "\n")


def main(prefixes: list[str]) -> int:
    chosen = [r for r in (*RUNS, *IGNITE_RUNS)
              if not prefixes or any(r[0].startswith(p) for p in prefixes)]
    if not chosen:
        print(f"no run starts with {' or '.join(prefixes)}", file=sys.stderr)
        return 2
    for row in chosen:
        print(f"recording {row[0]}", file=sys.stderr)
        record(*row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
