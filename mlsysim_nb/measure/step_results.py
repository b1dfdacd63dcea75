"""What ``measure_step`` returns: PyTorch's memory timeline of one training step, by category, with its peak."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATEGORIES", "StepMeasurement"]

#: PyTorch's memory profiler's categories (``torch.profiler._memory_profiler.Category``), in the order of the
#: rows ``export_memory_timeline`` writes, then the bytes it could not categorise.
CATEGORIES = (
    "parameters",
    "optimizer state",
    "inputs",
    "temporaries",
    "activations",
    "gradients",
    "autograd detail",
    "unknown",
)


@dataclass(frozen=True)
class StepMeasurement:
    """One measured training step: bytes in use by category at every event of PyTorch's memory timeline.

    ``times`` are microseconds from the step's start; ``bytes_by_category[name][i]`` is what category
    ``name`` held from ``times[i]`` until the next event; ``phases`` are ``(label, start, end)`` in the same
    microseconds (the forward and backward pass of each micro-batch, the optimizer step, ``zero_grad``).
    """

    model_type: str
    config: dict[str, object]
    times: tuple[float, ...]
    bytes_by_category: dict[str, tuple[float, ...]]
    phases: tuple[tuple[str, float, float], ...]

    @property
    def totals(self) -> tuple[float, ...]:
        """Bytes in use at each event: the sum over the categories."""
        columns = list(self.bytes_by_category.values())
        return tuple(sum(column[i] for column in columns) for i in range(len(self.times)))

    @property
    def peak_index(self) -> int:
        """The first event at which the step holds the most memory."""
        totals = self.totals
        return totals.index(max(totals))

    @property
    def peak(self) -> float:
        """The most bytes in use at any event of the step (PyTorch's allocations only)."""
        return self.totals[self.peak_index]

    @property
    def peak_time(self) -> float:
        """When the peak is first reached, in microseconds from the step's start."""
        return self.times[self.peak_index]

    @property
    def peak_phase(self) -> str:
        """The phase in which the peak falls."""
        return self.phase_at(self.peak_time)

    @property
    def at_peak(self) -> dict[str, float]:
        """Bytes by category at the peak (categories that hold nothing there included, as 0)."""
        i = self.peak_index
        return {name: column[i] for name, column in self.bytes_by_category.items()}

    def largest(self) -> dict[str, float]:
        """Each category's largest value over the step (reached at different times)."""
        return {name: max(column) for name, column in self.bytes_by_category.items()}

    def phase_at(self, time: float) -> str:
        """The label of the phase running at ``time`` (the last one started)."""
        label = self.phases[0][0]
        for name, start, _ in self.phases:
            if start <= time:
                label = name
        return label

    def phase_peaks(self) -> dict[str, float]:
        """The most bytes in use within each phase."""
        totals, out = self.totals, {}
        for name, start, end in self.phases:
            inside = [t for time, t in zip(self.times, totals, strict=True) if start <= time <= end]
            out[name] = max(inside) if inside else 0.0
        return out
