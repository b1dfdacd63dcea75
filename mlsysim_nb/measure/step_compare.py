"""The model's step timeline set against PyTorch's measured one: the peaks, and the bytes by group at each peak.

PyTorch's memory profiler and the model sort bytes differently, so both are read in five groups:

================  =============================================  ==============================================
group             the model's categories                         the profiler's categories
================  =============================================  ==============================================
weights           weights                                        parameters
optimizer state   optimizer state, master copy                   optimizer state
gradients         gradients                                      gradients
saved             saved activations                              activations, inputs
transients        rebuilt activations, backward, forward and     autograd detail, temporaries, unknown
                  optimizer transients
================  =============================================  ==============================================

The profiler files a saved tensor that descends from no parameter (token ids, the rotary tables, a
recomputed layer's input) under inputs, and what the backward pass creates (the gradients it passes on, a
recomputed layer's tensors) under autograd detail; AdamW's temporaries are unknown to it.

Not predicted, and bounded: AdamW's step counters (one 4-byte FP32 tensor per parameter tensor, in the
optimizer state: under 0.01 % of it for the lab's models), and the small tensors the framework makes
(masks, position ids, scalars: a few kilobytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.measure.step_results import StepMeasurement

__all__ = ["GROUPS", "StepComparison", "compare_step"]

#: Each group's categories: the model's, then the profiler's.
GROUPS = {
    "weights": (("weights",), ("parameters",)),
    "optimizer state": (("optimizer state", "master copy"), ("optimizer state",)),
    "gradients": (("gradients",), ("gradients",)),
    "saved": (("saved activations",), ("activations", "inputs")),
    "transients": (
        (
            "rebuilt activations",
            "backward transients",
            "forward transients",
            "gathered weights",
            "optimizer temporaries",
        ),
        ("autograd detail", "temporaries", "unknown"),
    ),
}


@dataclass(frozen=True)
class StepComparison:
    """Predicted and measured peaks of one step, their phases, and each group's bytes at each peak."""

    predicted_peak: float
    measured_peak: float
    predicted_phase: str
    measured_phase: str
    predicted_groups: dict[str, float]
    measured_groups: dict[str, float]
    sum_of_parts: float

    @property
    def peak_error(self) -> float:
        """(predicted − measured) / measured."""
        return (self.predicted_peak - self.measured_peak) / self.measured_peak

    def group_errors(self, floor: float = 0.0) -> dict[str, float]:
        """Each group's (predicted − measured) / measured at the peaks, for groups measured above ``floor`` bytes."""
        return {g: (self.predicted_groups[g] - m) / m for g, m in self.measured_groups.items() if m > floor}


def compare_step(measured: StepMeasurement, timeline: Any) -> StepComparison:
    """Set the model's ``timeline`` (``scenario.step_timeline()``) against a measured step."""
    point = timeline.peak_point
    at = measured.at_peak
    predicted = {g: sum(point.bytes.get(c, 0.0) for c in mine) for g, (mine, _) in GROUPS.items()}
    got = {g: sum(at[c] for c in theirs) for g, (_, theirs) in GROUPS.items()}
    return StepComparison(timeline.peak, measured.peak, timeline.peak_phase, measured.peak_phase, predicted, got,
                          timeline.sum_of_parts)  # fmt: skip
