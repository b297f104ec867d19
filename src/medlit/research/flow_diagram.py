"""The PRISMA-style flow of a job drawn as a small SVG: one drawing for the exported report and
the web page alike.

Records identified, articles screened and studies included run down the left; what was
removed (not English, duplicates) and what was excluded at screening (by reason) stand in
boxes beside them, an arrow to each. The drawing is self-contained: no script, no style sheet,
no font or image fetched, no link; every text is escaped. It carries a ``<title>`` and a
``<desc>`` (every count in words) for assistive technology, and the report keeps the counts
as a table under it.

::

    svg = flow_svg(flow_of(job))              # the SVG document
    line = flow_image_markdown(flow_of(job))  # ![...](data:image/svg+xml;base64,...)
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

if TYPE_CHECKING:
    from medlit.research.screening import Flow

__all__ = ["flow_alt", "flow_image_markdown", "flow_steps", "flow_svg"]

_BOX_W, _BOX_H, _GAP = 220, 56, 36
_SIDE_X, _SIDE_W, _LINE = 276, 262, 18
_WIDTH = _SIDE_X + _SIDE_W + 2
_INK, _PAPER, _FONT = "#1f2933", "#ffffff", "sans-serif"


def flow_steps(flow: Flow) -> list[tuple[str, int]]:
    """Each step of the flow and its count, in reading order (the report's table rows)."""
    return [
        ("Records identified", flow.identified),
        ("Not English (removed)", flow.not_english),
        ("Duplicates removed", flow.duplicates_removed),
        ("Articles screened", flow.screened),
        *((f"Excluded: {reason}", count) for reason, count in flow.excluded.items()),
        ("Included (evidence)", flow.included),
    ]


def flow_alt(flow: Flow) -> str:
    """The flow in one sentence: every step with its count."""
    return "PRISMA-style flow of records: " + "; ".join(f"{s}: {n}" for s, n in flow_steps(flow))


def _text(
    x: float, y: float, text: str, *, size: int, bold: bool = False, middle: bool = False
) -> str:
    attrs = f'x="{x:g}" y="{y:g}" font-size="{size}" fill="{_INK}"'
    if bold:
        attrs += ' font-weight="bold"'
    if middle:
        attrs += ' text-anchor="middle"'
    return f"<text {attrs}>{escape(text)}</text>"


def _box(x: float, y: float, w: float, h: float, *, dashed: bool = False) -> str:
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    return (
        f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="6" fill="{_PAPER}" '
        f'stroke="{_INK}" stroke-width="1.2"{dash}/>'
    )


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    """A line with its head drawn as a triangle at (x2, y2): horizontal or vertical only."""
    if x1 == x2:  # down
        head = f"{x2 - 5:g},{y2 - 9:g} {x2 + 5:g},{y2 - 9:g} {x2:g},{y2:g}"
        end = (x2, y2 - 9)
    else:  # right
        head = f"{x2 - 9:g},{y2 - 5:g} {x2 - 9:g},{y2 + 5:g} {x2:g},{y2:g}"
        end = (x2 - 9, y2)
    return (
        f'<line x1="{x1:g}" y1="{y1:g}" x2="{end[0]:g}" y2="{end[1]:g}" stroke="{_INK}" '
        f'stroke-width="1.2"/><polygon points="{head}" fill="{_INK}"/>'
    )


def _side_lines(flow: Flow) -> list[tuple[str, list[str]]]:
    excluded = [f"{reason}: {count}" for reason, count in flow.excluded.items()]
    return [
        ("Removed", [f"Not English: {flow.not_english}", f"Duplicates: {flow.duplicates_removed}"]),
        ("Excluded", excluded or ["none excluded"]),
    ]


def flow_svg(flow: Flow) -> str:
    """The flow as a standalone SVG document (UTF-8 text, no XML declaration)."""
    main = [
        ("Records identified", flow.identified),
        ("Articles screened", flow.screened),
        ("Included (evidence)", flow.included),
    ]
    side = _side_lines(flow)
    side_h = [max(_BOX_H, 16 + _LINE * (len(lines) + 1)) for _, lines in side]
    row_h = [max(_BOX_H, side_h[i] if i < len(side) else 0) + _GAP for i in range(len(main))]
    height = sum(row_h) - _GAP + 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" '
        f'width="{_WIDTH}" height="{height}" role="img" aria-labelledby="flow-title flow-desc" '
        f'font-family="{_FONT}">',
        '<title id="flow-title">Flow of records</title>',
        f'<desc id="flow-desc">{escape(flow_alt(flow))}</desc>',
        f'<rect x="0" y="0" width="{_WIDTH}" height="{height}" fill="{_PAPER}"/>',
    ]
    y, mid = 1, 1 + _BOX_W / 2
    for i, (label, count) in enumerate(main):
        parts += [
            _box(1, y, _BOX_W, _BOX_H),
            _text(mid, y + 23, label, size=14, bold=True, middle=True),
            _text(mid, y + 44, str(count), size=16, middle=True),
        ]
        if i < len(side):
            title, lines = side[i]
            parts.append(_box(_SIDE_X, y, _SIDE_W, side_h[i], dashed=True))
            parts += [
                _text(_SIDE_X + 10, y + 21 + k * _LINE, text, size=13 if k else 14, bold=not k)
                for k, text in enumerate([title, *lines])
            ]
            parts.append(_arrow(1 + _BOX_W, y + _BOX_H / 2, _SIDE_X - 1, y + _BOX_H / 2))
        if i < len(main) - 1:
            parts.append(_arrow(mid, y + _BOX_H, mid, y + row_h[i] - 1))
        y += row_h[i]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def flow_image_markdown(flow: Flow) -> str:
    """The flow as one Markdown image line, the SVG embedded as a base64 ``data:`` URI (shown
    by Markdown viewers and by medlit's web page; nothing is fetched)."""
    data = base64.b64encode(flow_svg(flow).encode("utf-8")).decode("ascii")
    alt = flow_alt(flow).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"![{alt}](data:image/svg+xml;base64,{data})"
