"""Memory bar charts: a pure breakdown, a matplotlib figure, and a PNG ``<img>`` for the repr.

matplotlib is imported here only, on first use, and only its object-oriented
API is used (``Figure`` + Agg canvas, no ``pyplot`` state), so embedding a
chart in a repr never touches the notebook's current figure.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from mlsysim_nb.errors import NotApplicableError

__all__ = ["Bar", "memory_bar", "memory_breakdown", "png_img"]

#: Colours by part, colour-blind safe (Okabe-Ito) and readable on the white card.
COLORS = {
    "weights": "#0072B2",
    "frozen weights": "#0072B2",
    "gradients": "#E69F00",
    "optimizer state": "#009E73",
    "master copy": "#CC79A7",
    "adapter state": "#D55E00",
    "activations": "#56B4E9",
    "linear (per-token)": "#56B4E9",
    "attention scores": "#D55E00",
}

Bar = tuple[str, dict[str, float]]  # (bar label, {part: bytes})


def _try(fn: Any) -> float:
    try:
        return float(fn())
    except NotApplicableError:
        return 0.0


def memory_breakdown(scenario: Any) -> dict[str, Any]:
    """The parts of a scenario's memory, as pure data.

    Returns ``{"bars": [(label, {part: bytes})], "capacity": bytes or None,
    "capacity_label": str}``; a training scenario gives one bar for the run
    (and one for full tuning in adapter mode), an activation scenario one bar
    per recomputation strategy.
    """
    from mlsysim_nb.scenarios import TrainingStateFitScenario

    m = scenario.magnitude
    if isinstance(scenario, TrainingStateFitScenario):
        bars: list[Bar] = []
        acts = _try(lambda: m("activations")) if scenario.activations is not None else 0.0
        full = {
            "weights": m("weights"),
            "gradients": m("gradients"),
            "optimizer state": m("optimizer_state"),
            "master copy": m("master_weights"),
        }
        if scenario.adapter_mode:
            run = {"weights": m("weights"), "adapter state": m("adapter_state")}
            if acts:
                run["activations"] = acts
            bars.append(("this run (adapters)", run))
            bars.append(("full tuning", {**full, **({"activations": acts} if acts else {})}))
        else:
            run = {**full, **({"activations": acts} if acts else {})}
            bars.append(("this run", run))
        hw = scenario.hardware
        capacity = None if hw is None else m("capacity")
        label = "" if hw is None else f"{hw.name}: {hw.memory.capacity:~P}"
        return {"bars": bars, "capacity": capacity, "capacity_label": label}
    bars = [
        (
            "none",
            {
                "linear (per-token)": m("activations_selective"),
                "attention scores": _try(lambda: m("score_activations")),
            },
        ),
        ("selective", {"linear (per-token)": m("activations_selective")}),
        ("full", {"linear (per-token)": m("activations_full")}),
    ]
    if scenario.checkpoint_segments is not None:
        bars.append((f"{scenario.checkpoint_segments} segments", {"linear (per-token)": m("checkpointed_activations")}))
    return {"bars": bars, "capacity": None, "capacity_label": ""}


def new_axes(ax: Any = None, *, size: tuple[float, float] = (6.4, 3.6)) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes, or a new white figure (OO API, no pyplot state)."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=72, facecolor="white", layout="constrained")
    return fig, fig.add_subplot()


def _gb(x: float) -> float:
    return x / 1e9


def memory_bar(breakdown: dict[str, Any], ax: Any = None, *, title: str = "") -> Any:
    """Draw ``breakdown`` as horizontal stacked bars in GB, with the capacity line; returns the Figure."""
    if ax is None:
        from matplotlib.figure import Figure

        bars = breakdown["bars"]
        height = 1.3 + 0.5 * len(bars)
        fig = Figure(figsize=(6.4, height), dpi=72, facecolor="white")
        # fixed margins in inches (constrained layout would triple the render time)
        fig.subplots_adjust(left=1.45 / 6.4, right=0.97, top=1 - 0.3 / height, bottom=0.95 / height)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ax.set_facecolor("white")
    labels = [label for label, _ in breakdown["bars"]]
    seen: set[str] = set()
    for row, (_, parts) in enumerate(breakdown["bars"]):
        left = 0.0
        for part, size in parts.items():
            width = _gb(size)
            ax.barh(
                row,
                width,
                left=left,
                color=COLORS.get(part, "#999999"),
                edgecolor="white",
                label=None if part in seen else part,
                height=0.6,
            )
            seen.add(part)
            left += width
        ax.text(left, row, f" {left:,.1f} GB", va="center", ha="left", fontsize=9, color="#1a1a1a")
    capacity = breakdown["capacity"]
    if capacity:
        ax.axvline(_gb(capacity), color="#1a1a1a", linestyle="--", linewidth=1.2)
        ax.text(
            _gb(capacity),
            1.01,
            breakdown["capacity_label"],
            transform=ax.get_xaxis_transform(),
            fontsize=8,
            ha="center",
            va="bottom",
            color="#1a1a1a",
        )
    ax.set_yticks(range(len(labels)), labels=labels)
    ax.invert_yaxis()
    ax.set_xlabel("GB", color="#1a1a1a")
    ax.margins(x=0.18)
    ax.tick_params(colors="#1a1a1a", labelsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.legend(loc="lower center", fontsize=8, frameon=False, ncols=min(4, len(seen)), bbox_to_anchor=(0.5, 0.0))
    if title:
        ax.set_title(title, fontsize=10, color="#1a1a1a", loc="left")
    return fig


def alt_text(breakdown: dict[str, Any]) -> str:
    """The numbers of the chart in words, for the ``alt`` attribute."""
    parts = []
    for label, sizes in breakdown["bars"]:
        inner = ", ".join(f"{part} {_gb(v):,.2f} GB" for part, v in sizes.items())
        parts.append(f"{label}: {_gb(sum(sizes.values())):,.2f} GB ({inner})")
    if breakdown["capacity"]:
        parts.append(f"capacity line at {_gb(breakdown['capacity']):,.2f} GB ({breakdown['capacity_label']})")
    return "Memory bar chart. " + "; ".join(parts) + "."


def png_img(scenario: Any) -> str:
    """The scenario's chart as an ``<img>`` with a base64 PNG and ``alt`` text listing the numbers."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    breakdown = memory_breakdown(scenario)
    fig = memory_bar(breakdown)
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None}, pil_kwargs={"optimize": True})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    alt = html.escape(alt_text(breakdown), quote=True)
    return f'<img class="msn-chart" src="data:image/png;base64,{data}" alt="{alt}">'
