"""Small line charts for the reports (drawsvg, the swim lanes' library): the frontier per depth
and the states found per second of an exploration, a member's member list versions over time in
a log."""

from __future__ import annotations

from collections.abc import Sequence

import drawsvg as draw

from partsafe.checker.render.swimlane import FONT, cut

WIDTH, HEIGHT = 520, 220
PAD_LEFT, PAD_BOTTOM, PAD_TOP, PAD_RIGHT = 70, 40, 30, 20


def line_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], *, title: str,
               x_label: str, y_label: str, steps: bool = False) -> str:
    """An SVG chart of one or more named series of (x, y) points; `steps` draws each series as a
    staircase (a value that holds until the next point)."""
    svg = draw.Drawing(WIDTH, HEIGHT, font_family=FONT)
    svg.append(draw.Rectangle(0, 0, WIDTH, HEIGHT, fill="white"))
    svg.append(draw.Text(cut(title, 70), 13, PAD_LEFT, 18, font_weight="bold"))
    points = [p for _, pts in series for p in pts]
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    svg.append(draw.Rectangle(PAD_LEFT, PAD_TOP, plot_w, plot_h, fill="none", stroke="#999"))
    if not points:
        svg.append(draw.Text("no data", 12, PAD_LEFT + plot_w / 2, PAD_TOP + plot_h / 2,
                             text_anchor="middle", fill="#777"))
        return str(svg.as_svg())
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    y1 = max(max(p[1] for p in points), 1)
    span = (x1 - x0) or 1

    def at(x: float, y: float) -> tuple[float, float]:
        return (PAD_LEFT + (x - x0) / span * plot_w, PAD_TOP + plot_h - y / y1 * plot_h)

    colors = ("#1f4e8c", "#b00020", "#2d8a2d", "#8a5a00", "#6a3d9a", "#555555")
    for k, (name, pts) in enumerate(series):
        if not pts:
            continue
        coords: list[float] = []
        for i, (x, y) in enumerate(pts):
            if steps and i:
                coords += at(x, pts[i - 1][1])
            coords += at(x, y)
        color = colors[k % len(colors)]
        svg.append(draw.Lines(*coords, fill="none", stroke=color, stroke_width=1.8,
                              class_="series"))
        if len(series) > 1:
            svg.append(draw.Text(cut(name, 24), 10, WIDTH - PAD_RIGHT - 4,
                                 PAD_TOP + 14 + 13 * k, text_anchor="end", fill=color))
    for frac in (0, 0.5, 1):
        y = y1 * frac
        _, py = at(x0, y)
        svg.append(draw.Text(f"{y:,.0f}", 9, PAD_LEFT - 6, py + 3, text_anchor="end"))
    for x in (x0, (x0 + x1) / 2, x1):
        px, _ = at(x, 0)
        svg.append(draw.Text(f"{x:,.4g}", 9, px, PAD_TOP + plot_h + 14, text_anchor="middle"))
    svg.append(draw.Text(cut(x_label, 40), 10, PAD_LEFT + plot_w / 2, HEIGHT - 6,
                         text_anchor="middle", fill="#444"))
    svg.append(draw.Text(cut(y_label, 30), 10, 12, PAD_TOP + plot_h / 2, fill="#444",
                         transform=f"rotate(-90 12 {PAD_TOP + plot_h / 2})",
                         text_anchor="middle"))
    return str(svg.as_svg())
