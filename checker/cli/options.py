"""Options several commands share, and the parsing of option values that click's types do not
cover: the scope options of `partsafe check` and its list of variants, ``--only KIND=NODES``,
``--size 2G``."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import NoReturn, TypeVar

import click

from partsafe.checker.protocols import catalog
from partsafe.refimpl import profiles

F = TypeVar("F", bound=Callable[..., object])

def fail(message: str) -> NoReturn:
    """End the command with exit status 2: `message` (what is wrong, naming the option or the
    input) under the command's usage line."""
    raise click.UsageError(message)


STRICT_HELP = ("fail on the known findings of the faithful planner too (by default they are "
               "reported and do not fail the run)")

#: every scope parameter of the catalogue's models, by option name, with its help: the first
#: model that has it gives the help and the default shown
SCOPE_PARAMS: dict[str, str] = {}
for _entry in catalog.MODELS.values():
    for _name, _param in _entry.params.items():
        if _name == "replicas":
            continue  # its own option: the planner reads it too
        SCOPE_PARAMS.setdefault(_name, f"{_param.help} ({_entry.name}, default {_param.default})")


def variants_epilog() -> str:
    """`partsafe check --help`'s closing paragraph: the variants of every model (the variant
    tables of refimpl/variants.py, by way of the catalog), which click does not rewrap."""
    lines = ["\b", "Variants (--variant; fixed is the current design):"]
    for models, names in catalog.variant_groups():
        lines += textwrap.wrap(", ".join(names), width=78, break_on_hyphens=False,
                               initial_indent=f"  {', '.join(models)}: ",
                               subsequent_indent="      ")
    return "\n".join(lines)


def profile_option(func: F) -> F:
    """``--profile NAME``: the release profile whose rules the protocols follow
    (refimpl/profiles.py)."""
    return click.option(
        "--profile", default="fixed", show_default=True, metavar="PROFILE",
        help=f"release profile: the rules a shipped release line's code follows "
             f"({', '.join(profiles.PROFILES)}); `partsafe profiles` lists them")(func)


def parse_profile(name: str) -> profiles.Profile:
    """The profile `--profile NAME` names; a usage error naming the known ones otherwise."""
    try:
        return profiles.get(name)
    except ValueError as exc:
        fail(f"--profile: {exc}")


def scope_options(func: F) -> F:
    """A ``--NAME INTEGER`` option for each of `SCOPE_PARAMS`, in the catalogue's order."""
    for name, help_text in reversed(SCOPE_PARAMS.items()):
        func = click.option(f"--{name}", type=int, default=None, help=help_text)(func)
    return func


def parse_only(values: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """``--only KIND=NODES`` options as a map from fault kind to nodes."""
    only: dict[str, frozenset[str]] = {}
    for value in values:
        kind, sep, nodes = value.partition("=")
        names = frozenset(n.strip() for n in nodes.split(",") if n.strip())
        if not sep or not kind or not names:
            fail(f"--only {value}: expected KIND=NODES, such as crash=A or shutdown=B,C")
        if kind in only:
            fail(f"--only {value}: {kind} is named twice")
        only[kind] = names
    return only


_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_size(text: str) -> int:
    """``2G``, ``500M``, ``64k``, ``1.5GB`` or a plain number of bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise click.BadParameter(f"{text!r} is not a size: give bytes, or a number with K, M, G "
                                 "or T (2G, 500M, 64k)", param_hint="--size")
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


_DURATION_UNITS = {"": 1, "MS": 1, "S": 1000, "M": 60_000, "MIN": 60_000}


def parse_duration_ms(text: str, option: str = "--max-skew") -> int:
    """``200ms``, ``1.5s``, ``2m`` or a plain number of milliseconds, as whole milliseconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _DURATION_UNITS:
        raise click.BadParameter(f"{text!r} is not a duration: give milliseconds, or a number "
                                 "with ms, s or m (0, 200ms, 1.5s)", param_hint=option)
    return round(float(m.group(1)) * _DURATION_UNITS[unit])


#: `--baseline FILE` on check and validate (`cli/views.gate`, `partsafe.checker.baseline`)
baseline_option = click.option(
    "--baseline", "baseline_file", type=click.Path(dir_okay=False),
    help="fail only on findings this baseline does not record, and list the recorded ones no "
         "longer seen (`partsafe baseline update` writes it); a check searches on past the "
         "violations it records")

#: `--sarif FILE` on validate and conform (`partsafe.checker.sarif`)
sarif_option = click.option(
    "--sarif", "sarif_file", type=click.Path(dir_okay=False, writable=True),
    help="also write a SARIF 2.1.0 log: each finding a result at its log file and line, for "
         "code-review tools (GitHub code scanning)")
