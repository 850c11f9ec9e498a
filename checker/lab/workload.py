"""The lab's client workload, run as a script in a process of its own, with the folder of the
`hazelcast-python-client` of the server's major first on its path (checker/lab/releases.py).
It imports nothing of partsafe, so that it runs beside any client.

``write``: puts `--entries` entries into the map ``lab``, then one more every `--interval`
seconds until the file `--stop` appears, each key written once (``k<n>``, value ``v<n>``), and
appends one JSON line per put to `--history`: ``{"op": "put", "key", "value", "start", "end",
"ok", "error"}`` (times in ms since the epoch). A put that raised or timed out is not
acknowledged (``"ok": false``): it may or may not have taken effect.

``verify``: reads back every acknowledged put of `--history`, and appends one ``{"op": "get",
…, "ok"}`` line each (``ok``: the value read is the value put), then prints one JSON summary.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import json
import os
import sys
import time
from typing import Any, TextIO

MAP_NAME = "lab"


def _compat() -> None:
    """hazelcast-python-client 3.12 imports ``collections.Sequence`` and its siblings, which
    Python 3.10 moved to ``collections.abc`` only: give them back their old names."""
    for name in ("Sequence", "Iterable", "Mapping", "MutableMapping", "Set", "Callable",
                 "Hashable", "MutableSet", "MutableSequence"):
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))


def _client(addresses: list[str], cluster: str, timeout: float) -> Any:
    _compat()
    import hazelcast

    if hazelcast.__version__.startswith("3."):
        config = hazelcast.ClientConfig()
        config.group_config.name = cluster
        for address in addresses:
            config.network_config.addresses.append(address)
        config.network_config.connection_attempt_limit = 1000
        config.set_property("hazelcast.client.invocation.timeout.seconds", str(int(timeout)))
        return hazelcast.HazelcastClient(config)
    return hazelcast.HazelcastClient(cluster_name=cluster, cluster_members=addresses,
                                     invocation_timeout=timeout,
                                     cluster_connect_timeout=120.0)


def _now() -> int:
    return int(time.time() * 1000)


def _put(store: Any, key: str, value: str, out: TextIO) -> None:
    start = _now()
    error = ""
    try:
        store.put(key, value)
    except Exception as exc:  # every client error is an unacknowledged write
        error = f"{type(exc).__name__}: {exc}"[:200]
    out.write(json.dumps({"op": "put", "key": key, "value": value, "start": start,
                          "end": _now(), "ok": not error, "error": error}) + "\n")
    out.flush()


def write(args: argparse.Namespace) -> int:
    client = _client(args.addresses, args.cluster, args.timeout)
    store = client.get_map(MAP_NAME).blocking()
    n = 0
    with open(args.history, "a", encoding="utf-8") as out:
        for n in range(args.entries):
            _put(store, f"k{n}", f"v{n}", out)
        print(json.dumps({"loaded": args.entries}), flush=True)
        while not os.path.exists(args.stop):
            n += 1
            _put(store, f"k{n}", f"v{n}", out)
            time.sleep(args.interval)
    client.shutdown()
    return 0


def verify(args: argparse.Namespace) -> int:
    acked: dict[str, str] = {}
    with open(args.history, encoding="utf-8") as history:
        for line in history:
            record = json.loads(line)
            if record["op"] == "put" and record["ok"]:
                acked[record["key"]] = record["value"]
    client = _client(args.addresses, args.cluster, args.timeout)
    store = client.get_map(MAP_NAME).blocking()
    lost: list[str] = []
    with open(args.history, "a", encoding="utf-8") as out:
        for key, value in acked.items():
            start = _now()
            try:
                got = store.get(key)
                error = ""
            except Exception as exc:
                got, error = None, f"{type(exc).__name__}: {exc}"[:200]
            ok = got == value
            if not ok:
                lost.append(key)
            out.write(json.dumps({"op": "get", "key": key, "value": got, "start": start,
                                  "end": _now(), "ok": ok, "error": error}) + "\n")
    size = store.size()
    client.shutdown()
    print(json.dumps({"acknowledged": len(acked), "lost": lost[:50], "lost_count": len(lost),
                      "size": size}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("mode", choices=["write", "verify"])
    parser.add_argument("--addresses", nargs="+", required=True)
    parser.add_argument("--cluster", default="lab")
    parser.add_argument("--history", required=True)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--stop", default="")
    args = parser.parse_args(argv)
    return write(args) if args.mode == "write" else verify(args)


if __name__ == "__main__":
    sys.exit(main())
