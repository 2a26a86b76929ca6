"""Bar charts as plain geometry for inline SVG, drawn on the server (no script, no assets).

Pure: labelled values in, a ``BarChart`` of coordinates and texts out; ``templates/_chart.html``
draws it with a ``<title>`` and ``<desc>`` (the accessible name and description) and prints
every value as text next to its bar, so the chart reads without colour or a pointer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Geometry in SVG user units.
LABEL_WIDTH = 220
PLOT_WIDTH = 420
VALUE_WIDTH = 70
BAR_HEIGHT = 18
BAR_GAP = 8
TOP = 8
AXIS_HEIGHT = 22
MAX_LABEL = 30


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar: its label, value text and position."""

    label: str
    value_text: str
    y: int
    width: float

    @property
    def text_y(self) -> int:
        """Return the baseline of the bar's label and value."""
        return self.y + BAR_HEIGHT - 5


@dataclass(frozen=True, slots=True)
class Tick:
    """A tick of the value axis."""

    x: float
    text: str


@dataclass(frozen=True, slots=True)
class BarChart:
    """A horizontal bar chart ready to draw."""

    title: str
    description: str
    width: int
    height: int
    plot_x: int
    plot_width: int
    axis_y: int
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def bar_chart(
    title: str, values: Sequence[tuple[str, float]], *, maximum: float = 1.0, decimals: int = 4
) -> BarChart:
    """Return a horizontal bar chart of ``values`` scaled to ``maximum`` (or the largest value).

    Args:
        title: the chart's accessible name.
        values: (label, value) pairs in drawing order; negative values draw as empty bars.
        maximum: the value at the right end of the axis (raised to the largest value).
        decimals: decimals of the printed values.

    >>> chart = bar_chart("F1", [("a", 1.0), ("b", 0.5)])
    >>> [bar.width for bar in chart.bars], chart.bars[1].value_text
    ([420.0, 210.0], '0.5000')
    """
    top = max([maximum, *(v for _, v in values)]) or 1.0
    bars = tuple(
        Bar(
            _short(label),
            f"{value:.{decimals}f}",
            TOP + n * (BAR_HEIGHT + BAR_GAP),
            round(PLOT_WIDTH * max(value, 0.0) / top, 2),
        )
        for n, (label, value) in enumerate(values)
    )
    axis_y = TOP + len(bars) * (BAR_HEIGHT + BAR_GAP)
    ticks = tuple(
        Tick(round(LABEL_WIDTH + PLOT_WIDTH * q, 2), f"{top * q:.2f}")
        for q in (0, 0.25, 0.5, 0.75, 1)
    )
    listing = "; ".join(f"{label}: {value:.{decimals}f}" for label, value in values)
    return BarChart(
        title=title,
        description=f"{len(bars)} bars. " + listing,
        width=LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH,
        height=axis_y + AXIS_HEIGHT,
        plot_x=LABEL_WIDTH,
        plot_width=PLOT_WIDTH,
        axis_y=axis_y,
        bars=bars,
        ticks=ticks,
    )
