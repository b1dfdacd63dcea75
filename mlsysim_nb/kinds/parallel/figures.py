"""What only the many-device kind draws: ZeRO's partition of the state over the data-parallel devices."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.render.figures.style import as_bytes, capacity_bytes
from mlsysim_nb.render.figures.zero import ZeroPartition

__all__ = ["ZERO_PARTS", "zero_partition"]

#: The state's parts, in drawing order: (label, the per-device property, the property naming its shards).
ZERO_PARTS = (
    ("weights", "weights_per_device", "weight_shards"),
    ("gradients", "gradients_per_device", "gradient_shards"),
    ("optimizer state", "optimizer_state_per_device", "optimizer_shards"),
    ("master copy", "master_weights_per_device", "optimizer_shards"),
)


def zero_partition(scenario: Any, stages: tuple[int, ...] = (0, 1, 2, 3)) -> ZeroPartition:
    """ZeRO's picture (Rajbhandari et al. 2020, Sec. 5, Figure 1): each stage is ``variant(zero_stage=…)``."""
    data_parallel = int(scenario.data_parallel)
    if data_parallel < 2:
        msg = f"ZeRO shards across data-parallel devices: data_parallel must be at least 2, got {data_parallel}"
        raise ValueError(msg)
    per_device: dict[int, dict[str, float]] = {}
    sharded: dict[int, dict[str, bool]] = {}
    for stage in stages:
        s = scenario.variant(zero_stage=stage)
        per_device[stage] = {label: as_bytes(getattr(s, prop)) for label, prop, _ in ZERO_PARTS}
        sharded[stage] = {label: int(getattr(s, shards)) > 1 for label, _, shards in ZERO_PARTS}
    return ZeroPartition(
        data_parallel=data_parallel,
        parts=tuple(label for label, _, _ in ZERO_PARTS),
        per_device=per_device,
        sharded=sharded,
        capacity=capacity_bytes(scenario),
    )
