"""Swim-lane diagrams of a run: one lane per member (node, raft peer, the metastore), time flowing
down, each message an arrow from the step that sent it to the step that delivered it.

`diagram` reads a run (a counterexample replayed, a run matched to a trace) into a `Diagram`:
its lanes, one row per step with the action and the state it changed on each lane, and the
arrows. `to_svg` draws it as one self-contained SVG with drawsvg. What the diagram shows:

- a step's action in the left column, and a mark on the lane that took it: a delivery is the
  arrow's head; a crash is a red cross, a restart a circle, a join a green triangle, anything
  else (a timer, a suspicion, a shutdown request) a box with the action's kind;
- beside each lane at each step, what changed in that member's state (the member list and
  version, the partition table, the raft term, role and configuration, the assignments: what
  `describe_state` shows of it), and at the top each member's initial state;
- arrows from the send to the delivery, labelled with the message; a lost message ends in a
  cross where it was lost; one still in flight at the end runs to the bottom, dashed;
- the step that breaks the spec in a red band, and the spec's sentence below the lanes.

Text from a model or a log is data: drawsvg escapes it, and control bytes, which XML forbids,
become U+FFFD. The layout keeps 60 steps and 7 lanes legible: rows of 30 px, lanes of 190 px,
texts cut to their column with the whole in a tooltip, a state's change written right of the
step's box, and each arrow's label at the first place along the arrow that no text holds (none
free: the arrow's tooltip says it). No text covers another.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import drawsvg as draw

from partsafe.checker.engine.model import Model
from partsafe.checker.engine.result import Trace

#: the described state's entries that are not a member's lane
NOT_LANES = ("network", "budget left")
ROW = 30
LANE = 190
LEFT = 330
HEADER = 120
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
#: a monospace character's advance, in ems, as wide as the widest of `FONT`'s fallbacks
#: (DejaVu Sans Mono's 0.602): what the layout reserves for a text
EM = 0.62
#: the half-width of a step's box on its lane
BOX = 38
#: the kinds of step drawn without a mark on their lane (a delivery is its arrow's head), and
#: those with a mark smaller than a box
UNMARKED = ("deliver", "reorder", "drop")
SMALL_MARKS = ("crash", "restart", "join")
#: where an arrow's label may sit, as a fraction of the way from sender to receiver, in the
#: order tried: the first place no text already holds
LABEL_AT = (0.5, 0.35, 0.65, 0.2, 0.8)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    """`text` without the control bytes XML forbids (each becomes U+FFFD)."""
    return _CONTROL.sub("\ufffd", text)


def cut(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    text = clean(text)
    return text if len(text) <= width else text[:width - 1] + "…"


@dataclass
class Arrow:
    """A message from lane `src` (sent at row `sent`, 0 for the initial state) to lane `dst`,
    delivered at row `delivered` (None: still in flight at the end), or lost there."""

    src: str
    dst: str
    label: str
    sent: int
    delivered: int | None
    lost: bool = False


@dataclass
class Row:
    """One step: its action, the lane that took it, its kind, what it changed on each lane."""

    action: str
    lane: str | None
    kind: str
    changes: dict[str, str] = field(default_factory=dict)


@dataclass
class Diagram:
    """A run as lanes, rows and arrows; `broken` is the row that breaks the spec (1-based) and
    `sentence` the spec's words for it."""

    title: str
    lanes: list[str]
    initial: dict[str, str]
    rows: list[Row]
    arrows: list[Arrow]
    broken: int | None = None
    sentence: str | None = None


def _summary(value: Any) -> str:
    """A member's described state in one line."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_summary(v)}" for k, v in value.items()
                         if v not in (None, [], {}, False, ""))
    if isinstance(value, list | tuple):
        return "[" + ",".join(_summary(v) for v in value) + "]"
    return str(value)


def changed(before: Any, after: Any) -> str:
    """What changed in a member's described state, in one line."""
    if isinstance(before, dict) and isinstance(after, dict):
        return ", ".join(f"{k}={_summary(v)}" for k, v in after.items() if before.get(k) != v)
    return _summary(after)


def diagram(model: Model[Any], trace: Trace, *, title: str, broken: int | None = None,
            sentence: str | None = None) -> Diagram:
    """The swim lanes of `trace`, a run of `model` (see the module's docstring); `broken` the
    step (1-based) that breaks the spec, if any."""
    states = [trace.init] + [s for _, s in trace.steps]
    described = [model.describe_state(s) for s in states]
    lanes = [k for k in described[0] if k not in NOT_LANES]
    net = getattr(model, "net", None)
    describe_message = getattr(getattr(model, "protocol", None), "describe_message", repr)

    def in_flight(state: Any) -> Counter[tuple[str, str, Hashable]]:
        if net is None:
            return Counter()
        return Counter(net.messages(state.network))

    arrows: list[Arrow] = []
    pending: dict[tuple[str, str, Hashable], list[Arrow]] = {}

    def sent(message: tuple[str, str, Hashable], row: int) -> None:
        src, dst, msg = message
        for end in (src, dst):
            if end not in lanes:
                lanes.append(end)
        arrow = Arrow(src, dst, clean(describe_message(msg)), row, None)
        arrows.append(arrow)
        pending.setdefault(message, []).append(arrow)

    before = in_flight(trace.init)
    for message, count in before.items():
        for _ in range(count):
            sent(message, 0)
    rows: list[Row] = []
    for k, (action, state) in enumerate(trace.steps, start=1):
        text, node = model.describe_action(action)
        kind = str(action[0])
        after = in_flight(state)
        gone: Counter[tuple[str, str, Hashable]] = Counter()
        if kind in ("deliver", "reorder", "drop") and len(action) == 4:
            message = (action[1], action[2], action[3])
            queue = pending.get(message)
            if queue:
                arrow = queue.pop(0)
                arrow.delivered, arrow.lost = k, kind == "drop"
            gone[message] += 1
        for message, count in (after - (before - gone)).items():
            for _ in range(count):
                sent(message, k)
        before = after
        changes = {lane: changed(described[k - 1].get(lane), described[k].get(lane))
                   for lane in lanes if described[k - 1].get(lane) != described[k].get(lane)}
        rows.append(Row(clean(text), node, kind, {k2: v for k2, v in changes.items() if v}))
    initial = {lane: _summary(described[0].get(lane, "")) for lane in lanes}
    return Diagram(clean(title), lanes, initial, rows, arrows, broken,
                   clean(sentence) if sentence else None)


def to_svg(d: Diagram) -> str:
    """`d` as a self-contained SVG document."""
    x = {lane: LEFT + i * LANE + LANE // 2 for i, lane in enumerate(d.lanes)}
    bottom = HEADER + (len(d.rows) + 1) * ROW
    height = bottom + (70 if d.sentence else 30)
    # the last lane's notes run up to where a next lane's box would begin
    width = LEFT + len(d.lanes) * LANE + LANE // 2 - BOX
    svg = draw.Drawing(width, height, font_family=FONT)
    svg.append(draw.Rectangle(0, 0, width, height, fill="white"))
    head = draw.Marker(-0.1, -0.5, 0.9, 0.5, scale=7, orient="auto")
    head.append(draw.Lines(-0.1, -0.5, -0.1, 0.5, 0.9, 0, fill="#1f4e8c", close=True))
    svg.append(draw.Text(cut(d.title, 150), 16, 10, 24, font_weight="bold"))
    if d.broken is not None:
        y = HEADER + d.broken * ROW
        svg.append(draw.Rectangle(0, y - ROW // 2 - 2, width, ROW, fill="#fde2e1",
                                  class_="broken"))
    for lane, lx in x.items():
        svg.append(draw.Line(lx, HEADER - 30, lx, bottom, stroke="#b8b8b8",
                             stroke_dasharray="4 3", class_="lane"))
        name = draw.Text(cut(lane, 22), 14, lx, HEADER - 62, text_anchor="middle",
                         font_weight="bold", class_="lane-name")
        svg.append(name)
        start = draw.Text(cut(d.initial.get(lane, ""), 28), 10, lx, HEADER - 44,
                          text_anchor="middle", fill="#555")
        start.append_title(clean(d.initial.get(lane, "")))
        svg.append(start)
    taken = _Taken()
    for k, row in enumerate(d.rows, start=1):
        y = HEADER + k * ROW
        if row.lane in x and row.kind not in UNMARKED:
            half = BOX if row.kind not in SMALL_MARKS else 8
            taken.boxes.append((x[row.lane] - half, y - 9, x[row.lane] + half, y + 9))
    for k, row in enumerate(d.rows, start=1):
        y = HEADER + k * ROW
        label = draw.Text(cut(f"{k:>2}. {row.action}", 44), 11, 10, y + 4,
                          fill="#b00020" if k == d.broken else "#222", class_="step")
        label.append_title(clean(row.action))
        svg.append(label)
        if row.lane in x and row.kind not in UNMARKED:
            svg.append(_mark(row, x[row.lane], y))
        for lane, change in row.changes.items():
            if lane not in x:
                continue
            # right of the step's box, if the lane has one here, up to the next lane's box
            boxed = row.lane == lane and row.kind not in UNMARKED + SMALL_MARKS
            left = x[lane] + (BOX + 4 if boxed else 8)
            text = cut(change, int((x[lane] + LANE - BOX - 4 - left) / (9.5 * EM)))
            taken.add(left, y - 6, text, 9.5)
            note = draw.Text(text, 9.5, left, y - 6, fill="#2d6a2d", class_="change")
            note.append_title(clean(f"{lane}: {change}"))
            svg.append(note)
    for a in d.arrows:
        y0 = HEADER + a.sent * ROW
        y1 = HEADER + a.delivered * ROW if a.delivered is not None else bottom
        x0, x1 = x[a.src], x[a.dst]
        line = draw.Line(x0, y0, x1, y1, stroke="#b00020" if a.lost else "#1f4e8c",
                         stroke_width=1.3, marker_end=None if a.lost else head,
                         stroke_dasharray="5 4" if a.delivered is None else None,
                         class_="arrow")
        line.append_title(clean(f"{a.label} {a.src}→{a.dst}"))
        svg.append(line)
        if a.lost:
            svg.append(_cross(x1, y1, "#b00020"))
        text = cut(a.label, 24)
        for t in LABEL_AT:  # the first place free of text; none: the line's tooltip says it
            lx, ly = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t - 3
            if taken.free(lx, ly, text, 9, centred=True):
                taken.add(lx, ly, text, 9, centred=True)
                svg.append(draw.Text(text, 9, lx, ly, text_anchor="middle", fill="#1f4e8c",
                                     class_="arrow-label"))
                break
    if d.sentence:
        svg.append(draw.Text(cut(d.sentence, 180), 13, 10, bottom + 30, fill="#b00020",
                             font_weight="bold", class_="sentence"))
    return str(svg.as_svg())


class _Taken:
    """The boxes the texts and step marks drawn so far take, so that an arrow's label goes where
    it hides nothing (a text's box: its advance at `EM`, from its ascent to its descent)."""

    def __init__(self) -> None:
        self.boxes: list[tuple[float, float, float, float]] = []

    @staticmethod
    def _box(x: float, y: float, text: str, size: float,
             centred: bool) -> tuple[float, float, float, float]:
        width = len(text) * size * EM
        left = x - width / 2 if centred else x
        return left, y - size * 0.8, left + width, y + size * 0.25

    def free(self, x: float, y: float, text: str, size: float, centred: bool = False) -> bool:
        x0, y0, x1, y1 = self._box(x, y, text, size, centred)
        return all(x1 <= a0 or a1 <= x0 or y1 <= b0 or b1 <= y0
                   for a0, b0, a1, b1 in self.boxes)

    def add(self, x: float, y: float, text: str, size: float, centred: bool = False) -> None:
        self.boxes.append(self._box(x, y, text, size, centred))


def _mark(row: Row, lx: float, y: float) -> draw.DrawingElement:
    """The mark of a step that is no delivery, on the lane that took it."""
    if row.kind == "crash":
        mark = _cross(lx, y, "#b00020")
    elif row.kind == "restart":
        mark = draw.Circle(lx, y, 7, fill="white", stroke="#8a5a00", stroke_width=2)
    elif row.kind == "join":
        mark = draw.Lines(lx - 7, y - 7, lx - 7, y + 7, lx + 7, y, fill="#2d8a2d", close=True)
    else:
        mark = draw.Group()
        mark.append(draw.Rectangle(lx - BOX, y - 9, 2 * BOX, 18, rx=4, fill="#eef3fb",
                                   stroke="#1f4e8c"))
        mark.append(draw.Text(cut(row.kind, 12), 9.5, lx, y + 3, text_anchor="middle"))
    group = draw.Group(class_=f"mark {row.kind}")
    group.append(mark)
    group.append_title(clean(row.action))
    return group


def _cross(cx: float, cy: float, color: str) -> draw.Group:
    g = draw.Group()
    g.append(draw.Line(cx - 6, cy - 6, cx + 6, cy + 6, stroke=color, stroke_width=2.5))
    g.append(draw.Line(cx - 6, cy + 6, cx + 6, cy - 6, stroke=color, stroke_width=2.5))
    return g


def write(path: str, model: Model[Any], trace: Trace, *, title: str, broken: int | None = None,
          sentence: str | None = None) -> None:
    """The swim lanes of `trace` as an SVG file at `path` (OSError when it cannot be
    written)."""
    from pathlib import Path

    svg = to_svg(diagram(model, trace, title=title, broken=broken, sentence=sentence))
    Path(path).write_text(svg, encoding="utf-8")
