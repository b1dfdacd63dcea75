"""What each ZeRO stage shards across the data-parallel devices (Rajbhandari et al. 2020, Sec. 5, Figure 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.render.figures.style import COLORS, new_figure

__all__ = ["ZeroPartition", "zero_partition", "zero_partition_figure"]


@dataclass(frozen=True)
class ZeroPartition:
    """Bytes per device of each part of the state, and whether it is sharded, for each ZeRO stage."""

    data_parallel: int
    parts: tuple[str, ...]
    per_device: dict[int, dict[str, float]]
    sharded: dict[int, dict[str, bool]]
    capacity: float | None

    def state_per_device(self, stage: int) -> float:
        """The state one device holds at ``stage``: the sum of its parts."""
        return sum(self.per_device[stage].values())


def zero_partition(scenario: Any, stages: tuple[int, ...] = (0, 1, 2, 3)) -> ZeroPartition:
    """The data of ZeRO's picture for ``scenario``, as its kind computes it (``scenario.zero_partition(stages)``).

    The many-device kind computes it in its own folder (``kinds/parallel/figures.py``): each stage is
    ``variant(zero_stage=…)``. A kind without data-parallel devices refuses, saying why.
    """
    if scenario.is_sweep:
        raise ValueError("zero_partition draws one layout, not a sweep")
    data: ZeroPartition = scenario.zero_partition(stages)
    return data


_STAGE_WORDS = {0: "replicated", 1: "optimizer sharded", 2: "+ gradients", 3: "+ weights"}


def zero_partition_figure(partition: ZeroPartition, *, max_devices: int = 8) -> Any:
    """One panel per ZeRO stage: a stacked bar per data-parallel device, sharded parts hatched.

    Bar heights are GB per device. With more than ``max_devices`` devices the first ``max_devices − 1`` and
    the last are drawn (every device holds the same bytes; a sharded part is a different ``1/N_d`` on each).
    """
    n = partition.data_parallel
    shown = list(range(n)) if n <= max_devices else [*range(max_devices - 1), n - 1]
    stages = sorted(partition.per_device)
    fig = new_figure(2.6 * len(stages), 3.8)
    axes = fig.subplots(1, len(stages), sharey=True, squeeze=False)[0]
    top = max(partition.state_per_device(stage) for stage in stages)
    if partition.capacity is not None:
        top = max(top, partition.capacity)
    for ax, stage in zip(axes, stages, strict=True):
        bottom = [0.0] * len(shown)
        xs = list(range(len(shown)))
        for part in partition.parts:
            height = partition.per_device[stage][part] / 1e9
            is_sharded = partition.sharded[stage][part]
            ax.bar(
                xs,
                [height] * len(shown),
                bottom=bottom,
                color=COLORS[part],
                hatch="//" if is_sharded else None,
                edgecolor="white",
                linewidth=0.5,
                label=f"{part}{' (sharded)' if is_sharded else ''}",
                gid=f"zero{stage}:{part}",
            )
            bottom = [b + height for b in bottom]
        if partition.capacity is not None:
            ax.axhline(partition.capacity / 1e9, color="black", linestyle="--", linewidth=1, gid="capacity")
        ax.set_xticks(xs, [str(i + 1) if i < max_devices - 1 or n <= max_devices else str(n) for i in shown])
        if n > max_devices:
            ax.annotate("…", xy=(len(shown) - 1.5, 0), xycoords=("data", "axes fraction"), xytext=(0, -3),
                        textcoords="offset points", ha="center", va="top", fontsize=9)  # fmt: skip
        ax.set_xlabel("data-parallel device")
        total = partition.state_per_device(stage)
        ax.set_title(f"stage {stage}: {_STAGE_WORDS.get(stage, '')}\n{total / 1e9:,.2f} GB per device", fontsize=9)
        ax.set_ylim(0, top * 1.08 / 1e9)
    axes[0].set_ylabel("state per device (GB)")
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS[p], label=p) for p in partition.parts]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    suffix = f" · dashed: device capacity {partition.capacity / 1e9:,.1f} GB" if partition.capacity else ""
    fig.suptitle(f"ZeRO over N_d = {n} devices (hatched: sharded, each device holds a different 1/{n}){suffix}",
                 fontsize=10)  # fmt: skip
    return fig
