"""Memory over one training step, event by event, with the peak marked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.render.figures.style import COLORS, gb_text, new_figure

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


def step_memory(scenario: Any) -> StepMemory:
    """Memory over one step of ``scenario``, as its kind draws it (``scenario.step_memory()``).

    A kind that draws one says how, in its own folder (``kinds/<kind>/figures.py``): the training kind the
    state resident throughout and the activations built and freed layer by layer, the activation kind the
    segment inputs and the one live segment of checkpointing. A kind that draws none refuses, saying why.
    """
    if scenario.is_sweep:
        raise ValueError("step_memory draws one scenario, not a sweep")
    data: StepMemory = scenario.step_memory()
    return data


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
