"""The log side: the event vocabulary, and logs of real clusters turned into events and back.

Public API (each name is loaded on first use):

- `Event`, `Source`, `to_dict`, `from_dict`, `read_jsonl`, `write_jsonl`: the events shared by
  the explorer, the Z3 models and the log parser, and their canonical JSON Lines form;
- `Scanner`, `Accounting`: a log file read line by line into events, every line accounted for
  (parsed, ignored or reported): Hazelcast's logs in any layout, Apache Ignite 3's (`ignite`);
- `expand`, `InputError`: the files a list of paths names (directories, gzip files);
- `LogWriter`, `IgniteLogWriter`: events written back as Hazelcast log text, and as Apache
  Ignite 3 log text.

This package imports nothing of `partsafe.checker`.
"""

from partsafe._api import lazy_api

_API = {
    "Event": "events", "Source": "events", "to_dict": "events", "from_dict": "events",
    "read_jsonl": "events", "write_jsonl": "events",
    "Scanner": "scanner", "Accounting": "scanner",
    "expand": "inputs", "InputError": "inputs",
    "LogWriter": "writer", "IgniteLogWriter": "ignite_writer",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)
