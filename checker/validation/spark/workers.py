"""What runs in Spark's Python workers: scanning a file's needed lines (stage 3), and the shards,
warnings and tallies per key (stage 4), as Arrow batches of the schemas below. Spark pickles these
functions and the module is imported by name in every worker (on a cluster, from the zip
`runtime` ships).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from partsafe.checker.validation.shards import (
    Tally,
    Violation,
    allowed,
    dispatch,
    judged_specs,
    parts,
    routes,
    run_shard,
    stamped,
    view_key,
    warnings_of,
)
from partsafe.specs import forms
from partsafe.traces.events import UNKNOWN_MEMBER, MemberListInstalled, dumps, from_dict
from partsafe.traces.scanner import Scanner

if TYPE_CHECKING:
    import pyarrow as pa

#: the rows the scanning stage writes, one schema for every kind of row
SCANNED = ("kind string, file int, line long, member string, type string, t long, fi int, "
           "first long, pos long, part int, key string, routed boolean, json string, "
           "text string")


def scan_batches(files: list[tuple[str, str]]
                 ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function of stage 3: needed lines (file, line, value), sorted by file and
    line, to scanned rows. `files` are (name, format) by index; an event is routed to the parts
    of the specs its file's form judges (`shards.dispatch`)."""

    def scan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:

        kinds = file_forms(files)
        ps = parts(judged_specs(kinds))
        made: dict[frozenset[str], dict[str, list[Any]]] = {}
        out = _Rows()
        current: int | None = None
        pending: list[tuple[int, bytes]] = []

        def flush(index: int, lines: list[tuple[int, bytes]]) -> Iterator[pa.RecordBatch]:
            name, fmt = files[index]
            scanner = Scanner()
            events = scanner.scan_needed(name, lines, fmt)
            table: dict[str, list[Any]] | None = None
            for (t, fi, first, pos), ev in stamped(index, events, one_stream=fmt == "jsonl"):
                if table is None:  # an event file's header, read before its first event
                    judged = allowed(kinds[index], scanner.declared.get(name))
                    table = made.setdefault(judged, dispatch(ps, judged))
                text = dumps(ev)
                view = view_key(ev) if isinstance(ev, MemberListInstalled) else None
                out.add("event", index, ev.source.line if ev.source else 0, ev.member, ev.TYPE,
                        t, fi, first, pos, None, None, None, text, view)
                for p in table.get(ev.TYPE, ()):
                    route = routes(p, ev)
                    if route is not None:
                        out.add("route", index, 0, ev.member, ev.TYPE, t, fi, first, pos,
                                p.index, route[0], route[1], text, None)
                if out.full():
                    yield out.batch()
            if name in scanner.declared or name in scanner.configs:
                head = {"specs": scanner.declared.get(name), "config": scanner.configs.get(name)}
                out.add("declared", index, 0, None, None, None, None, None, None, None, None,
                        None, json.dumps(head), None)
            acc = scanner.accounting
            out.add("parsed", index, acc.parsed_lines, None, None, None, None, None, None,
                    None, None, None, None, None)
            for m in acc.malformed:
                out.add("malformed", index, m.line, None, None, None, None, None, None, None,
                        None, None, None, m.reason)
            for n in acc.notes:
                out.add("note", index, n.line, n.member, None, None, None, None, None, None,
                        None, None, None, n.message)

        for batch in batches:
            cols = batch.to_pydict()  # values are bytes: a log need not be valid UTF-8
            for index, line, value in zip(cols["file"], cols["line"], cols["value"],
                                          strict=True):
                if index != current:
                    if current is not None:
                        yield from flush(current, pending)
                    current, pending = index, []
                pending.append((line, value))
        if current is not None:
            yield from flush(current, pending)
        if out.rows:
            yield out.batch()

    return scan


class _Rows:
    """Rows of the SCANNED schema, gathered into Arrow batches."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *row: Any) -> None:
        self.rows.append(row)

    def full(self) -> bool:
        return len(self.rows) >= 8192

    def batch(self) -> pa.RecordBatch:
        import pyarrow as pa

        schema = arrow_schema(SCANNED)
        columns = list(zip(*self.rows, strict=True))
        self.rows = []
        return pa.RecordBatch.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
            schema=schema)


VIOLATIONS = ("spec string, member string, message string, files array<string>, "
              "lines array<long>, t long, fi int, first long, pos long, part int, key string, "
              "certainty string, order string, note string")
MEMBERS = ("member string, kind string, message string, files array<string>, "
           "lines array<long>, t long, fi int, first long, pos long, starts int, "
           "uuids array<string>, migrations string")


def file_forms(files: Sequence[tuple[str, str]]) -> list[str]:
    """The recorded form of each file (name, format), by index."""
    return [forms.form_of(fmt) for _, fmt in files]


def run_shards(specs: Sequence[str], config: dict[str, Any] | None = None,
               max_skew_ms: int | None = None) -> Callable[[pa.Table], pa.Table]:
    """The applyInArrow function of stage 4 per (part, key): one `Shard` of that part's
    monitor over the group's routes in order-key order, to VIOLATIONS rows; `specs` are those
    of the validation (`shards.judged_specs` of its files' forms), so part numbers agree, and
    each monitor is built for the cluster's settings `config`; each violation carries its
    verdict under clock skew (`shards.skewed`, over this group's events alone)."""
    def run(table: pa.Table) -> pa.Table:
        import pyarrow as pa

        ps = parts(specs, config)
        rows = sorted(zip(table.column("t").to_pylist(), table.column("fi").to_pylist(),
                          table.column("first").to_pylist(), table.column("pos").to_pylist(),
                          table.column("routed").to_pylist(), table.column("json").to_pylist(),
                          table.column("part").to_pylist(), strict=True))
        part = ps[rows[0][6]]
        key = table.column("key")[0].as_py()
        found = run_shard(part, [((t, fi, first, pos), from_dict(json.loads(text)), routed)
                                 for t, fi, first, pos, routed, text, _ in rows], key,
                          max_skew_ms)
        return pa.Table.from_pylist([_violation_row(v) for v in found],
                                    schema=arrow_schema(VIOLATIONS))

    return run


def _violation_row(v: Violation) -> dict[str, Any]:
    """A violation as a row of VIOLATIONS."""
    t, fi, first, pos = v.at
    return {"spec": v.spec, "member": v.member, "message": v.message,
            "files": [s.file for s in v.sources], "lines": [s.line for s in v.sources],
            "t": t, "fi": fi, "first": first, "pos": pos, "part": v.part, "key": v.key,
            "certainty": v.certainty, "order": json.dumps(list(v.order)), "note": v.note}


def run_members(stuck_ms: int) -> Callable[[pa.Table], pa.Table]:
    """The applyInArrow function per member: its tally (none for the events that name no
    member) and its warnings, to MEMBERS rows."""
    def run(table: pa.Table) -> pa.Table:
        import pyarrow as pa

        rows = sorted(zip(table.column("t").to_pylist(), table.column("fi").to_pylist(),
                          table.column("first").to_pylist(), table.column("pos").to_pylist(),
                          table.column("json").to_pylist(), strict=True))
        events = [((t, fi, first, pos), from_dict(json.loads(text)))
                  for t, fi, first, pos, text in rows]
        member = events[0][1].member
        out: list[dict[str, Any]] = []
        if member != UNKNOWN_MEMBER:  # events no member can be named for make no member's tally
            tally = Tally()
            for _, ev in events:
                tally.add(ev)
            out.append({"member": member, "kind": "tally", "starts": tally.starts,
                        "uuids": sorted(tally.uuids),
                        "migrations": json.dumps(tally.migrations)})
        for (t, fi, first, pos), n in warnings_of(events, stuck_ms):
            out.append({"member": n.member, "kind": n.kind, "message": n.message,
                        "files": [s.file for s in n.sources],
                        "lines": [s.line for s in n.sources],
                        "t": t, "fi": fi, "first": first, "pos": pos})
        return pa.Table.from_pylist(out, schema=arrow_schema(MEMBERS))

    return run


def arrow_schema(ddl: str) -> pa.Schema:
    """The Arrow schema of one of the DDL strings above (workers have no Spark session)."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(),
             "boolean": pa.bool_(), "array<string>": pa.list_(pa.string()),
             "array<long>": pa.list_(pa.int64())}
    return pa.schema([(name, kinds[kind]) for name, kind in
                      (c.split(" ", 1) for c in ddl.split(", "))])
