"""Memory over one training step, event by event, with the peak marked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.render.figures.style import COLORS, as_bytes, capacity_bytes, gb_text, new_figure

__all__ = ["StepMemory", "step_memory", "step_memory_figure"]


@dataclass(frozen=True)
class StepMemory:
    """Memory over one training step: constant resident parts, and a curve that changes event by event.

    ``times`` and ``curve`` are the curve's breakpoints (bytes from each time on, until the next);
    ``phases`` are ``(label, start, end)``. ``peak`` is the most memory in use (resident plus curve).
    """

    resident: tuple[tuple[str, float], ...]
    curve_label: str
    times: tuple[float, ...]
    curve: tuple[float, ...]
    phases: tuple[tuple[str, float, float], ...]
    capacity: float | None
    title: str = ""
    boundaries: tuple[float, ...] = ()

    @property
    def resident_total(self) -> float:
        """The bytes resident for the whole step."""
        return sum(size for _, size in self.resident)

    @property
    def peak(self) -> float:
        """The most memory in use at any time in the step."""
        return self.resident_total + max(self.curve)

    @property
    def peak_time(self) -> float:
        """The first time the peak is reached."""
        top = max(self.curve)
        return next(t for t, c in zip(self.times, self.curve, strict=True) if c == top)


def _segments_step(scenario: Any) -> StepMemory:
    """An activation scenario with ``k`` checkpoint segments: forward keeps segment inputs, backward recomputes."""
    layers, k = int(scenario.workload.layers), int(scenario.checkpoint_segments)
    if layers % k:
        raise ValueError(f"step_memory draws segments that divide the {layers} layers evenly, got k = {k}")
    boundary = as_bytes(scenario.segment_input)
    layer = as_bytes(scenario.per_token_activations) / layers
    per = int(scenario.segment_layers)
    t, held = 0.0, 0.0
    times, curve, phases = [0.0], [0.0], []
    for seg in range(k):  # forward: a segment's layers live while it runs; its input is kept
        held += boundary
        for i in range(per):
            t += 1
            times.append(t)
            curve.append(held + (i + 1) * layer)
        if seg != k - 1:  # the next segment starts: this one's layers are discarded, its output is the next input
            times.append(t)
            curve.append(held)
    phases.append(("forward", 0.0, t))
    start = t
    for seg in reversed(range(k)):  # backward: recompute the segment from its input, then free layer by layer
        base = (seg + 1) * boundary
        if seg != k - 1:
            for i in range(per):
                t += 1
                times.append(t)
                curve.append(base + (i + 1) * layer)
        for i in range(per):
            t += 2
            times.append(t)
            curve.append(base + (per - i - 1) * layer - (boundary if i == per - 1 else 0.0))
    phases.append(("backward, recomputing each segment", start, t))
    return StepMemory(
        (),
        "saved activations",
        tuple(times),
        tuple(curve),
        tuple(phases),
        capacity_bytes(scenario),
        f"{scenario.workload.name}: k = {k} checkpoint segments",
        boundaries=tuple(float(per * j) for j in range(1, k)),
    )


def step_memory(scenario: Any) -> StepMemory:
    """Memory over one step of a single-device training scenario, or of an activation scenario with segments.

    Training scenario (``TrainingStateFitScenario`` with ``activations`` given): the weights, gradients,
    optimizer state and master copy are resident throughout, as ``training_total`` counts them (the gradient
    buffer allocated for the whole step, as when gradients persist between steps); the forward pass adds
    ``activations/L`` per layer, the backward pass frees it layer by layer, then the optimizer step updates
    the state in place. The peak, at the end of the forward pass, is ``training_total``.

    Activation scenario with ``checkpoint_segments``: no state; the forward pass keeps each segment's input
    and discards the rest, the backward pass recomputes one segment at a time. The peak is
    ``checkpointed_activations``.
    """
    if scenario.is_sweep:
        raise ValueError("step_memory draws one scenario, not a sweep")
    if getattr(scenario, "checkpoint_segments", None) is not None and hasattr(scenario, "segment_input"):
        return _segments_step(scenario)
    acts = getattr(scenario, "activations", None)
    if acts is None or callable(acts) or not hasattr(scenario, "training_total"):
        raise ValueError(
            "step_memory needs a single-device training scenario with activations given, "
            "or an activation scenario with checkpoint_segments"
        )
    if getattr(scenario, "adapter_mode", False):  # the frozen base, and the adapters' own state
        parts = [("weights", scenario.weights), ("adapter state", scenario.adapter_state)]
    else:
        parts = [
            ("weights", scenario.weights),
            ("gradients", scenario.gradients),
            ("optimizer state", scenario.optimizer_state),
            ("master copy", scenario.master_weights),
        ]
    resident = tuple((label, as_bytes(q)) for label, q in parts if as_bytes(q) > 0)
    if abs(sum(size for _, size in resident) - as_bytes(scenario.total)) > 1e-6 * as_bytes(scenario.total):
        raise ValueError("the state's parts do not add up to its total")  # pragma: no cover - a model change
    layers = int(scenario.workload.layers)
    layer = as_bytes(acts) / layers
    times, curve = [0.0], [0.0]
    for i in range(layers):
        times.append(i + 1.0)
        curve.append((i + 1) * layer)
    for i in range(layers):
        times.append(layers + 2.0 * (i + 1))
        curve.append((layers - i - 1) * layer)
    backward_end = 3.0 * layers
    update = max(2.0, layers / 8)  # the optimizer step's width is schematic
    times.append(backward_end + update)
    curve.append(0.0)
    phases = (("forward", 0.0, float(layers)), ("backward", float(layers), backward_end),
              ("optimizer step", backward_end, backward_end + update))  # fmt: skip
    return StepMemory(resident, "saved activations", tuple(times), tuple(curve), phases, capacity_bytes(scenario),
                      f"{scenario.workload.name}: one training step")  # fmt: skip


def step_memory_figure(data: StepMemory, ax: Any = None) -> Any:
    """The resident parts as stacked bands, the saved activations on top, phases labelled, peak marked."""
    if ax is None:
        fig = new_figure(8.0, 3.8)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    end = data.times[-1]
    base = 0.0
    for label, size in data.resident:
        ax.fill_between([0, end], base / 1e9, (base + size) / 1e9, color=COLORS.get(label, "#999999"),
                        label=f"{label} {size / 1e9:,.1f} GB", gid=f"resident:{label}", linewidth=0)  # fmt: skip
        base += size
    ys = [(base + c) / 1e9 for c in data.curve]
    ax.fill_between(data.times, base / 1e9, ys, step="post", color=COLORS["activations"], alpha=0.8,
                    label=data.curve_label, gid="curve", linewidth=0)  # fmt: skip
    ax.step(data.times, ys, where="post", color="black", linewidth=0.8)
    peak = data.peak / 1e9
    ax.plot([data.peak_time], [peak], marker="v", color="black", gid="peak", linestyle="none")
    ax.annotate(f"peak {gb_text(data.peak)}", (data.peak_time, peak), xytext=(6, 4), textcoords="offset points",
                fontsize=8)  # fmt: skip
    top = peak
    if data.capacity is not None:
        ax.axhline(data.capacity / 1e9, color="black", linestyle="--", linewidth=1, gid="capacity")
        ax.text(end, data.capacity / 1e9, f"capacity {data.capacity / 1e9:,.1f} GB ", ha="right", va="bottom",
                fontsize=8)  # fmt: skip
        top = max(top, data.capacity / 1e9)
    for label, start, stop in data.phases:
        ax.axvline(start, color="grey", linewidth=0.6, linestyle=":")
        ax.text((start + stop) / 2, top * 1.12, label, ha="center", va="bottom", fontsize=8)
    for b in data.boundaries:
        ax.axvline(b, color="grey", linewidth=0.4, linestyle=":")
    ax.set_ylim(0, top * 1.25)
    ax.set_xlim(0, end)
    ax.set_ylabel("memory in use (GB)")
    ax.set_xlabel("time through one step (a layer's forward = 1, its backward = 2)")
    ax.set_xticks([])
    if data.title:
        ax.set_title(data.title, fontsize=10, pad=18)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    return fig
