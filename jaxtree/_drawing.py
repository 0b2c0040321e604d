"""Labels of a drawn tree that never overlap (:func:`jaxtree.export.plot_tree`): long labels
wrapped between factors, and, where the Axes is too small for them, a smaller font and the
row of leaves staggered over two or three heights, each step checked on the laid-out figure
(:func:`text_overlaps`) rather than estimated."""

from __future__ import annotations

import warnings


def wrap_label(text: str, width: int = 22) -> str:
    """A leaf's label on lines of about ``width`` characters, broken only between factors
    (after ``·``) or before a top-level ``+``/``-`` (never inside parentheses)."""
    cuts, depth = [], 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and (ch == "·" or (ch == " " and text[i + 1: i + 2] in ("+", "-"))):
            cuts.append(i + 1)
    lines, start, last = [], 0, 0
    for c in cuts + [len(text)]:
        if c - start > width and last > start:
            lines.append(text[start:last].strip())
            start = last
        last = c
    lines.append(text[start:].strip())
    return "\n".join(line for line in lines if line)


def text_overlaps(fig, texts, pad: float = 1.5) -> list:
    """Pairs ``(i, j)`` of the drawn ``texts`` whose boxes (their bbox patch when they have
    one), grown by ``pad`` pixels, intersect on the canvas; lays the figure out first (any
    canvas, a closed figure's too)."""
    fig.draw_without_rendering()
    boxes = [(t.get_bbox_patch() or t).get_window_extent().padded(pad) for t in texts]
    return [(a, b) for a in range(len(boxes)) for b in range(a + 1, len(boxes))
            if boxes[a].x0 < boxes[b].x1 and boxes[b].x0 < boxes[a].x1
            and boxes[a].y0 < boxes[b].y1 and boxes[b].y0 < boxes[a].y1]


UNTANGLE_STEPS = ((9, 22, 1), (9, 22, 2), (8, 22, 2), (8, 14, 2), (7, 14, 2), (7, 14, 3),
                  (6, 14, 3), (6, 10, 3), (5, 10, 3))
"""``(font size, wrap width, rows of leaves)`` tried in turn by :func:`untangle`."""


def untangle(fig, texts: dict, raw: dict, pos: dict, edges: list) -> None:
    """Tries :data:`UNTANGLE_STEPS` (the row of leaves staggered over 2 or 3 heights, a
    smaller font, narrower lines) until no two labels overlap; warns when even the last does
    not fit them (an ``ax`` too small for the tree)."""
    items = list(texts.values())
    leaves = sorted(raw, key=lambda s: pos[s][0])  # one row, left to right
    if not items:
        return
    ax = items[0].axes
    top, bottom = ax.get_ylim()[1], ax.get_ylim()[0]
    for size, width, rows in UNTANGLE_STEPS:
        for s, t in texts.items():
            t.set_fontsize(size)
            if s in raw:
                t.set_text(wrap_label(raw[s], width))
        step = 0.0
        if rows > 1:  # a row's height in data units: the tallest label, measured
            fig.draw_without_rendering()
            inv = ax.transData.inverted()
            tall = max(texts[s].get_bbox_patch().get_window_extent().height for s in leaves)
            step = 1.15 * abs(inv.transform((0, tall))[1] - inv.transform((0, 0))[1])
        shifted = dict(pos)
        for n, s in enumerate(leaves):
            shifted[s] = (pos[s][0], pos[s][1] + step * (n % rows))
        for s, t in texts.items():
            t.set_position((shifted[s][0], -shifted[s][1]))
        for parent, child, line in edges:
            line.set_data([shifted[parent][0], shifted[child][0]],
                          [-shifted[parent][1], -shifted[child][1]])
        ax.set_ylim(min(bottom, -max(d for _, d in shifted.values()) - 0.8), top)
        if not text_overlaps(fig, items):
            return
    warnings.warn("plot_tree: the axes are too small for this tree's labels, some overlap; "
                  "pass a larger ax, or none (the figure is then sized to the tree).",
                  UserWarning, stacklevel=4)
