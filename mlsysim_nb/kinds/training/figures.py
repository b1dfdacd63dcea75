"""What only the training kind draws: memory over one training step on one device."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.render.figures.step import StepMemory
from mlsysim_nb.render.figures.style import as_bytes, capacity_bytes

__all__ = ["training_step"]


def training_step(scenario: Any) -> StepMemory:
    """Memory over one step of a single-device training scenario with ``activations`` given.

    The weights, gradients, optimizer state and master copy are resident throughout, as ``training_total``
    counts them (the gradient buffer allocated for the whole step, as when gradients persist between steps);
    the forward pass adds ``activations/L`` per layer, the backward pass frees it layer by layer, then the
    optimizer step updates the state in place. The peak, at the end of the forward pass, is ``training_total``.
    """
    acts = scenario.activations
    if acts is None:
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
