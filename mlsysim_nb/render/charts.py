"""Memory bar charts: a pure breakdown, a matplotlib figure, and a PNG ``<img>`` for the repr.

matplotlib is imported here only, on first use, and only its object-oriented
API is used (``Figure`` + Agg canvas, no ``pyplot`` state), so embedding a
chart in a repr never touches the notebook's current figure.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import textwrap
from typing import TYPE_CHECKING, Any

from mlsysim_nb.model.presentation import MemoryChart
from mlsysim_nb.render.numbers import format_bytes, format_result
from mlsysim_nb.render.plain import one_line

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = [
    "alt_text",
    "chart_text",
    "memory_bar",
    "memory_breakdown",
    "part_color",
    "png_img",
    "shown_parts",
    "size_text",
    "value_text",
]

#: The colour of a part no kind declares.
UNDECLARED_COLOR = "#999999"

#: characters of the chart's title per line: the 6.4-inch figure's axes hold about 70 at 10 points
_TITLE_WIDTH = 68


def part_color(part: str, chart: MemoryChart | None = None) -> str:
    """A part's colour: the chart's own, else the one its kind declares (``COLORS`` in the kind's folder)."""
    from mlsysim_nb import kinds

    own = chart.colors.get(part) if chart is not None else None
    return own or kinds.all_colors().get(part, UNDECLARED_COLOR)


def memory_breakdown(scenario: Scenario) -> MemoryChart | None:
    """The parts of a scenario's memory, as pure data (the scenario's own :class:`MemoryChart`, zero parts left out)."""
    chart: MemoryChart | None = scenario.memory_chart()
    return None if chart is None else shown_parts(chart)


def _is_zero(size: Any) -> bool:
    try:
        return bool(float(size) == 0)
    except (TypeError, ValueError):  # an array (a sweep): every part stays
        return False


def shown_parts(chart: MemoryChart) -> MemoryChart:
    """``chart`` without its zero-size parts (no 0 B master copy in a bar or a legend)."""
    bars = tuple((label, {k: v for k, v in parts.items() if not _is_zero(v)}) for label, parts in chart.bars)
    return dataclasses.replace(chart, bars=bars)


def size_text(size_bytes: float) -> str:
    """A part's or a bar's size as the derivation spells it (``286.9 GB``): one formatter for chart and text."""
    return format_bytes(size_bytes)


def chart_text(text: str) -> str:
    r"""Text for a matplotlib label, written as every repr writes a name (:func:`~mlsysim_nb.render.plain.one_line`).

    On one line, with controls, bidirectional marks and lone surrogates as visible escapes (no font has their
    glyphs, and a surrogate stops the renderer), and a ``$`` a dollar sign, never the start of mathtext.

    >>> print(chart_text("A\ud800 $5\nGPU"))
    A\ud800 \$5⏎GPU
    """
    return one_line(text).replace("$", r"\$")


_plain = chart_text


def new_axes(ax: Any = None, *, size: tuple[float, float] = (6.4, 3.6)) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes, or a new white figure (OO API, no pyplot state)."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=72, facecolor="white", layout="constrained")
    return fig, fig.add_subplot()


def _gb(x: float) -> float:
    return x / 1e9


#: How a chart's unit is drawn: the axis scale (base units per axis unit), the axis label, and the value's base unit.
_SCALES = {"byte": (1e9, "GB", "byte"), "second": (1.0, "s", "second")}


def value_text(chart: MemoryChart, value: float) -> str:
    """A part's or a bar's value as the derivation spells it, in the chart's unit."""
    return size_text(value) if chart.unit == "byte" else format_result(_SCALES[chart.unit][2], value)


def memory_bar(breakdown: MemoryChart, ax: Any = None, *, title: str = "") -> Any:
    """Draw ``breakdown`` as horizontal stacked bars in GB, with the capacity line; returns the Figure.

    The title is the chart's caption (the verdict) unless ``title`` is given. Zero-size parts are left
    out; every label is plain text (a ``$`` in a device's name is a dollar sign).
    """
    breakdown = shown_parts(breakdown)
    title = "\n".join(textwrap.wrap(_plain(title or breakdown.caption), _TITLE_WIDTH))  # a long verdict wraps
    lines = title.count("\n") + 1 if title else 0
    if ax is None:
        from matplotlib.figure import Figure

        bars = breakdown.bars
        top = 0.3 + 0.3 * min(lines, 1) + 0.17 * max(lines - 1, 0)  # room for the caption over the capacity label
        height = 1.3 + 0.5 * len(bars) + top - 0.3
        fig = Figure(figsize=(6.4, height), dpi=72, facecolor="white")
        # fixed margins in inches (constrained layout would triple the render time)
        fig.subplots_adjust(left=1.45 / 6.4, right=0.97, top=1 - top / height, bottom=0.95 / height)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ax.set_facecolor("white")
    labels = [label for label, _ in breakdown.bars]
    capacity = breakdown.capacity
    # how many GB one character of a total's label spans: the axes run to 1.18 x the widest bar or line
    # (margins below) over about 340 of the figure's 461 points, at about 5.5 points a character
    scale, axis_label, _ = _SCALES[breakdown.unit]
    widest = max([float(sum(parts.values())) for _, parts in breakdown.bars] + [float(capacity or 0)])
    gb_per_char = widest / scale * 1.18 * 5.5 / 340
    seen: set[str] = set()
    for row, (_, parts) in enumerate(breakdown.bars):
        left = 0.0
        for part, size in parts.items():
            width = size / scale
            ax.barh(
                row,
                width,
                left=left,
                color=part_color(part, breakdown),
                edgecolor="white",
                label=None if part in seen else _plain(part),
                height=0.6,
            )
            seen.add(part)
            left += width
        total = sum(parts.values())
        text = f" {value_text(breakdown, total)}"
        if capacity and left <= capacity / scale <= left + gb_per_char * (len(text) + 1):
            left = capacity / scale  # the capacity line would run through the label: the label goes past it
        ax.text(left, row, text, va="center", ha="left", fontsize=9, color="#1a1a1a")
    if capacity:
        ax.axvline(_gb(capacity), color="#1a1a1a", linestyle="--", linewidth=1.2)
        # a line near the right edge takes its label on its left, so the label stays inside the figure
        align = "right" if capacity > 0.6 * widest else "center"
        ax.text(
            _gb(capacity),
            1.01,
            _plain(breakdown.capacity_label),
            transform=ax.get_xaxis_transform(),
            fontsize=8,
            ha=align,
            va="bottom",
            color="#1a1a1a",
        )
    ax.set_yticks(range(len(labels)), labels=[_plain(label) for label in labels])
    ax.invert_yaxis()
    ax.set_xlabel(axis_label, color="#1a1a1a")
    ax.margins(x=0.18)
    ax.tick_params(colors="#1a1a1a", labelsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.legend(loc="lower center", fontsize=8, frameon=False, ncols=min(4, len(seen)), bbox_to_anchor=(0.5, 0.0))
    if title:
        ax.set_title(title, fontsize=10, color="#1a1a1a", loc="left", pad=16 if capacity else 6)
    return fig


def alt_text(breakdown: MemoryChart) -> str:
    """The numbers of the chart in words, for the ``alt`` attribute (spelled as the derivation spells them)."""
    parts = []
    for label, sizes in shown_parts(breakdown).bars:
        inner = ", ".join(f"{part} {value_text(breakdown, v)}" for part, v in sizes.items())
        parts.append(f"{label}: {value_text(breakdown, sum(sizes.values()))} ({inner})")
    if breakdown.capacity:
        parts.append(f"capacity line at {size_text(breakdown.capacity)} ({breakdown.capacity_label})")
    caption = f" {breakdown.caption}." if breakdown.caption else ""
    kind = "Memory" if breakdown.unit == "byte" else "Time"
    return f"{kind} bar chart." + caption + " " + "; ".join(parts) + "."


def png_img(scenario: Scenario) -> str:
    """The scenario's chart as an ``<img>`` with a base64 PNG and ``alt`` text listing the numbers.

    A kind's companion chart (an iteration's time by cause) follows the memory bar as a second ``<img>``.
    """
    breakdown = memory_breakdown(scenario)
    if breakdown is None:
        return ""
    companion = scenario.companion_chart()
    charts = [breakdown] if companion is None else [breakdown, shown_parts(companion)]
    return "".join(_chart_img(chart) for chart in charts)


def _chart_img(breakdown: MemoryChart) -> str:
    """One chart as an ``<img>``: a base64 PNG and its numbers in words."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = memory_bar(breakdown)
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None}, pil_kwargs={"optimize": True})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    alt = html.escape(one_line(alt_text(breakdown)), quote=True)
    return f'<img class="msn-chart" src="data:image/png;base64,{data}" alt="{alt}">'
