"""What only the activation kind draws: memory over one step with checkpoint segments."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.render.figures.step import StepMemory
from mlsysim_nb.render.figures.style import as_bytes, capacity_bytes

__all__ = ["segments_step"]


def segments_step(scenario: Any) -> StepMemory:
    """Memory over one step with ``k`` checkpoint segments: forward keeps segment inputs, backward recomputes.

    No state: the forward pass keeps each segment's input and discards the rest, the backward pass recomputes
    one segment at a time. The peak is ``checkpointed_activations``.
    """
    if scenario.checkpoint_segments is None:
        raise ValueError(
            "step_memory needs a single-device training scenario with activations given, "
            "or an activation scenario with checkpoint_segments"
        )
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
