"""The memory of one training step over time, predicted and measured, on one chart: where the peak falls.

The model's timeline (``scenario.step_timeline()``: one point per phase, its largest moment) is drawn as a
step curve; a measurement (``measure_step`` or a recorded one: PyTorch's memory timeline, event by event) as
a line; both peaks are marked, and the sum a capacity check adds (state plus saved activations) is a
horizontal line. Time is in phases: each phase of the step (the forward pass, the backward pass, the
optimizer step, ``zero_grad``) takes one unit of the x axis, however long it ran, so that the two curves
line up.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.render.figures.style import new_figure

__all__ = ["segment_of", "step_peak_figure"]

_PREDICTED, _MEASURED, _SUM = "#4C72B0", "#C44E52", "#555555"


def segment_of(phase: str) -> str:
    """The step's segment a phase belongs to: ``"forward"``, ``"backward"``, ``"optimizer step"``, ``"zero_grad"``.

    Micro-batches keep their number: ``"backward, layer 2 (micro-batch 2)"`` and ``"backward 2"`` are both
    ``"backward 2"``.
    """
    micro = ""
    if "(micro-batch " in phase:
        micro = " " + phase.split("(micro-batch ")[1].rstrip(")")
    elif phase[-1].isdigit() and phase.split(" ", maxsplit=1)[0] in ("forward", "backward"):
        return phase
    if phase.startswith(("forward", "output layer")):
        return "forward" + micro
    if phase.startswith("backward"):
        return "backward" + micro
    return phase


def _predicted_xy(timeline: Any, order: list[str]) -> tuple[list[float], list[float]]:
    groups: dict[str, list[Any]] = {}
    for p in timeline.points[1:]:  # the state at rest is where every segment starts from
        groups.setdefault(segment_of(p.phase), []).append(p)
    xs, ys = [0.0], [timeline.points[0].total]
    for name, points in groups.items():
        start = float(order.index(name)) if name in order else float(len(order))
        for j, p in enumerate(points):
            xs.append(start + j / len(points))
            ys.append(p.total)
    xs.append(xs[-1] + 1.0 / max(len(groups.get("optimizer step", [1])), 1))
    ys.append(ys[-1])
    return xs, ys


def _measured_xy(measured: Any, order: list[str]) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    totals = measured.totals
    for t, total in zip(measured.times, totals, strict=True):
        for name, start, end in measured.phases:
            if start <= t <= end and name in order:
                xs.append(order.index(name) + (t - start) / max(end - start, 1e-9))
                ys.append(total)
                break
    return xs, ys


def step_peak_figure(timeline: Any, measured: Any = None, ax: Any = None, title: str = "") -> Any:
    """Predicted (step curve) and measured (line) memory over one step, both peaks marked, the sum as a line."""
    if ax is None:
        fig = new_figure(8.0, 3.8)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    if measured is not None:
        order = [name for name, _, _ in measured.phases]
    else:
        order = list(dict.fromkeys(segment_of(p.phase) for p in timeline.points[1:]))
    top = max(timeline.peak, timeline.sum_of_parts, measured.peak if measured is not None else 0.0)
    scale, unit = (1e9, "GB") if top >= 1e9 else (1e6, "MB")
    xs, ys = _predicted_xy(timeline, order)
    ax.step(xs, [y / scale for y in ys], where="post", color=_PREDICTED, linewidth=1.6, label="predicted",
            gid="predicted")  # fmt: skip
    peak_x = xs[ys.index(max(ys))] + 0.5 / max(1, sum(1 for p in timeline.points if segment_of(p.phase) ==
                                                        segment_of(timeline.peak_phase)))  # fmt: skip
    ax.plot([peak_x], [timeline.peak / scale], marker="v", color=_PREDICTED, linestyle="none", gid="predicted peak")
    ax.annotate(f"predicted peak {timeline.peak / scale:,.1f} {unit}\n({timeline.peak_phase})",
                (peak_x, timeline.peak / scale), xytext=(6, 6), textcoords="offset points", fontsize=8,
                color=_PREDICTED)  # fmt: skip
    if measured is not None:
        mx, my = _measured_xy(measured, order)
        ax.plot(mx, [y / scale for y in my], color=_MEASURED, linewidth=1.0, label="measured (PyTorch)",
                gid="measured")  # fmt: skip
        i = my.index(max(my))
        ax.plot([mx[i]], [my[i] / scale], marker="^", color=_MEASURED, linestyle="none", gid="measured peak")
        ax.annotate(f"measured peak {measured.peak / scale:,.1f} {unit}", (mx[i], my[i] / scale), xytext=(6, -14),
                    textcoords="offset points", fontsize=8, color=_MEASURED)  # fmt: skip
    ax.axhline(timeline.sum_of_parts / scale, color=_SUM, linestyle="--", linewidth=1, gid="sum",
               label=f"state + saved activations (the sum) {timeline.sum_of_parts / scale:,.1f} {unit}")  # fmt: skip
    for k, name in enumerate(order):
        ax.axvline(k, color="grey", linewidth=0.5, linestyle=":")
        ax.text(k + 0.5, top / scale * 1.17, name, ha="center", va="bottom", fontsize=8)
    ax.set_xlim(0, len(order))
    ax.set_ylim(0, top / scale * 1.3)
    ax.set_xticks([])
    ax.set_xlabel("one training step, phase by phase (each phase one unit, however long it ran)")
    ax.set_ylabel(f"memory in use ({unit})")
    if title:
        ax.set_title(title, fontsize=10, pad=18)
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    return fig
