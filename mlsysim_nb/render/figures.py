"""Figures drawn from the memory model: ZeRO's partition, pipeline timelines, memory over one step.

Each figure is two functions: a pure one that computes its data from a scenario's public numbers (or, for
the pipeline, from the schedule's rules), and one that draws that data with matplotlib's object-oriented
API on a white, fixed-dpi :class:`~matplotlib.figure.Figure` (no ``pyplot`` state). Tests assert on the
data and on the drawn artists, not on pixels.

* :func:`zero_partition` / :func:`zero_partition_figure`: what each ZeRO stage (Rajbhandari et al. 2020,
  Sec. 5 and Figure 1) shards across the ``N_d`` data-parallel devices, with the bytes per device of each
  part read from the scenario (``weights_per_device``, ``gradients_per_device``, ...).
* :func:`pipeline_schedule` / :func:`pipeline_timeline`: the 1F1B schedule and the interleaved one
  (Narayanan et al. 2021, Sec. 2.2), simulated op by op on ``p`` devices with ``n`` micro-batches and ``m``
  chunks per device. Its bubble, measured on the simulated timeline, is ``(p − 1)/(m·n)`` of the ideal time
  (Narayanan et al.'s ``(p − 1)/m`` with ``v`` chunks, in this course's letters), and the first device's
  peak of micro-batches in flight is ``p·(1 + (p − 1)/(p·m))`` (``p`` for 1F1B), Korthikanti et al.'s
  Sec. 4.2.3 factor that ``ParallelTrainingScenario.micro_batches_in_flight`` uses.
* :func:`step_memory` / :func:`step_memory_figure`: memory over one training step, event by event, with
  the peak marked. For a single-device training scenario the state (weights, gradients, optimizer state,
  master copy) is resident throughout, as the package's ``training_total`` counts it, and the activations
  are split evenly over the ``L`` layers; for an activation scenario with checkpoint segments, the segment
  inputs and the one live segment that ``checkpointed_activations`` counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PipelineOp",
    "PipelineSchedule",
    "StepMemory",
    "ZeroPartition",
    "bubble_fraction_formula",
    "pipeline_schedule",
    "pipeline_schedule_for",
    "pipeline_timeline",
    "step_memory",
    "step_memory_figure",
    "zero_partition",
    "zero_partition_figure",
]

#: The state's parts, in drawing order: (label, the per-device property, the property naming its shards).
_ZERO_PARTS = (
    ("weights", "weights_per_device", "weight_shards"),
    ("gradients", "gradients_per_device", "gradient_shards"),
    ("optimizer state", "optimizer_state_per_device", "optimizer_shards"),
    ("master copy", "master_weights_per_device", "optimizer_shards"),
)
_COLORS = {
    "weights": "#4C72B0",
    "gradients": "#DD8452",
    "optimizer state": "#55A868",
    "master copy": "#8172B3",
    "activations": "#C44E52",
    "adapter state": "#937860",
    "forward": "#4C72B0",
    "backward": "#55A868",
}
_DPI = 72


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=_DPI, facecolor="white", layout="constrained")


def _bytes(q: Any) -> float:
    """A pint quantity (or a plain number of bytes) as a float number of bytes."""
    return float(q.to("byte").magnitude) if hasattr(q, "to") else float(q)


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB ({x / 2**30:,.2f} GiB)"


def _capacity(scenario: Any) -> float | None:
    hardware = getattr(scenario, "hardware", None)
    return None if hardware is None else _bytes(hardware.memory.capacity)


# -- ZeRO's partition ------------------------------------------------------------------------------------


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
    """The data of ZeRO's picture for a ``ParallelTrainingScenario``: each stage is ``variant(zero_stage=…)``."""
    if scenario.is_sweep:
        raise ValueError("zero_partition draws one layout, not a sweep")
    data_parallel = int(scenario.data_parallel)
    if data_parallel < 2:
        msg = f"ZeRO shards across data-parallel devices: data_parallel must be at least 2, got {data_parallel}"
        raise ValueError(msg)
    per_device: dict[int, dict[str, float]] = {}
    sharded: dict[int, dict[str, bool]] = {}
    for stage in stages:
        s = scenario.variant(zero_stage=stage)
        per_device[stage] = {label: _bytes(getattr(s, prop)) for label, prop, _ in _ZERO_PARTS}
        sharded[stage] = {label: int(getattr(s, shards)) > 1 for label, _, shards in _ZERO_PARTS}
    return ZeroPartition(
        data_parallel=data_parallel,
        parts=tuple(label for label, _, _ in _ZERO_PARTS),
        per_device=per_device,
        sharded=sharded,
        capacity=_capacity(scenario),
    )


_STAGE_WORDS = {0: "replicated", 1: "optimizer sharded", 2: "+ gradients", 3: "+ weights"}


def zero_partition_figure(partition: ZeroPartition, *, max_devices: int = 8) -> Any:
    """One panel per ZeRO stage: a stacked bar per data-parallel device, sharded parts hatched.

    Bar heights are GB per device. With more than ``max_devices`` devices the first ``max_devices − 1`` and
    the last are drawn (every device holds the same bytes; a sharded part is a different ``1/N_d`` on each).
    """
    n = partition.data_parallel
    shown = list(range(n)) if n <= max_devices else [*range(max_devices - 1), n - 1]
    stages = sorted(partition.per_device)
    fig = _figure(2.6 * len(stages), 3.8)
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
                color=_COLORS[part],
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

    handles = [Patch(color=_COLORS[p], label=p) for p in partition.parts]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    suffix = f" · dashed: device capacity {partition.capacity / 1e9:,.1f} GB" if partition.capacity else ""
    fig.suptitle(f"ZeRO over N_d = {n} devices (hatched: sharded, each device holds a different 1/{n}){suffix}",
                 fontsize=10)  # fmt: skip
    return fig


# -- pipeline schedules ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PipelineOp:
    """One forward (``"F"``) or backward (``"B"``) pass of one chunk of one micro-batch on one device."""

    device: int
    kind: str
    micro_batch: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class PipelineSchedule:
    """A simulated pipeline step: ``p`` devices, ``n`` micro-batches, ``m`` chunks per device (``m = 1``: 1F1B).

    Times are in units of one micro-batch's forward pass through one whole stage (``L/p`` layers); a chunk's
    pass takes ``1/m`` of it. Communication is taken to be instantaneous.
    """

    stages: int
    micro_batches: int
    chunks: int
    forward_time: float
    backward_time: float
    ops: tuple[PipelineOp, ...] = field(repr=False)

    @property
    def makespan(self) -> float:
        """Time from the first forward pass to the last backward pass."""
        return max(op.end for op in self.ops)

    @property
    def ideal_time(self) -> float:
        """The busy time of one device: ``n·(t_f + t_b)``, with no idle time at all."""
        return self.micro_batches * (self.forward_time + self.backward_time)

    @property
    def bubble_fraction(self) -> float:
        """Idle time over ideal time, measured on the timeline: ``(makespan − ideal)/ideal``."""
        return (self.makespan - self.ideal_time) / self.ideal_time

    def in_flight(self, device: int) -> list[tuple[float, float]]:
        """``(time, micro-batches in flight)`` after each event on ``device``, in whole-stage micro-batches.

        A chunk's micro-batch is in flight from the start of its forward pass to the end of its backward pass
        (its activations are kept that long); each chunk counts ``1/m`` of a stage's micro-batch.
        """
        events = [(op.start, 1) if op.kind == "F" else (op.end, -1) for op in self.ops if op.device == device]
        net: dict[float, int] = {}
        for time, delta in events:  # a backward ending as a forward starts frees its micro-batch first
            net[time] = net.get(time, 0) + delta
        count, out = 0, [(0.0, 0.0)]
        for time in sorted(net):
            count += net[time]
            out.append((time, count / self.chunks))
        return out

    def peak_in_flight(self, device: int = 0) -> float:
        """The most micro-batches (whole-stage equivalents) whose activations ``device`` holds at once."""
        return max(count for _, count in self.in_flight(device))


def bubble_fraction_formula(stages: int, micro_batches: int, chunks: int = 1) -> float:
    """Narayanan et al. (2021), Sec. 2.2: the bubble is ``(p − 1)/n`` of the ideal time, divided by ``m`` chunks.

    >>> round(bubble_fraction_formula(8, 64), 4), round(bubble_fraction_formula(8, 64, 3), 4)
    (0.1094, 0.0365)
    """
    return (stages - 1) / (chunks * micro_batches)


def _device_order(device: int, p: int, n: int, m: int) -> list[tuple[str, int, int]]:
    """The order in which ``device`` runs its passes, as Megatron-LM's schedules do: ``(kind, micro-batch, chunk)``.

    1F1B (``m = 1``): ``p − device − 1`` warm-up forwards, then one forward and one backward in turn, then the
    remaining backwards. Interleaved: ``2·(p − device − 1) + (m − 1)·p`` warm-up chunk forwards, then the same
    alternation; forwards go through the chunks ``p`` micro-batches at a time, backwards through the chunks in
    reverse.
    """
    total = n * m

    def which(k: int, backward: bool) -> tuple[int, int]:
        group, within = divmod(k, p * m)
        chunk = (k // p) % m
        return group * p + within % p, (m - 1 - chunk) if backward else chunk

    warmup = (p - device - 1) if m == 1 else 2 * (p - device - 1) + (m - 1) * p
    warmup = min(warmup, total)
    order: list[tuple[str, int, int]] = [("F", *which(k, backward=False)) for k in range(warmup)]
    for k in range(total - warmup):
        order.append(("F", *which(warmup + k, backward=False)))
        order.append(("B", *which(k, backward=True)))
    order.extend(("B", *which(k, backward=True)) for k in range(total - warmup, total))
    return order


def pipeline_schedule(
    stages: int, micro_batches: int, chunks: int = 1, *, forward_time: float = 1.0, backward_time: float = 2.0
) -> PipelineSchedule:
    """Simulate one step of the 1F1B (``chunks = 1``) or interleaved schedule, pass by pass.

    ``stages`` devices, ``micro_batches`` per step (at least ``stages``, as the memory model assumes; a
    multiple of ``stages`` when interleaved, as Megatron-LM requires), ``chunks`` per device. Chunk ``c`` of
    device ``d`` is virtual stage ``c·p + d``; a forward waits for the previous virtual stage's forward, a
    backward for the next one's backward (the last virtual stage's for its own forward). Each pass starts
    as soon as its device is free and its input has arrived. Backward passes take twice the forward's time
    by default, as in Narayanan et al.'s figures; the bubble fraction does not depend on it.
    """
    p, n, m = int(stages), int(micro_batches), int(chunks)
    if p < 1 or m < 1:
        raise ValueError(f"stages and chunks must be at least 1, got {p} and {m}")
    if n < p:
        raise ValueError(f"micro_batches must be at least the {p} stages (the memory model assumes it), got {n}")
    if m > 1 and n % p:
        raise ValueError(f"the interleaved schedule needs micro_batches to be a multiple of the {p} stages, got {n}")
    tf, tb = forward_time / m, backward_time / m
    last = p * m - 1
    orders = [_device_order(d, p, n, m) for d in range(p)]
    done: dict[tuple[str, int, int], float] = {}  # (kind, micro-batch, virtual stage) -> end time
    free = [0.0] * p
    nxt = [0] * p
    ops: list[PipelineOp] = []
    while any(nxt[d] < len(orders[d]) for d in range(p)):
        progressed = False
        for d in range(p):
            while nxt[d] < len(orders[d]):
                kind, mb, chunk = orders[d][nxt[d]]
                vs = chunk * p + d
                if kind == "F":
                    dep = ("F", mb, vs - 1) if vs > 0 else None
                else:
                    dep = ("B", mb, vs + 1) if vs < last else ("F", mb, vs)
                if dep is not None and dep not in done:
                    break
                start = max(free[d], done[dep] if dep is not None else 0.0)
                end = start + (tf if kind == "F" else tb)
                done[(kind, mb, vs)] = end
                free[d] = end
                ops.append(PipelineOp(d, kind, mb, chunk, start, end))
                nxt[d] += 1
                progressed = True
        if not progressed:  # pragma: no cover - the schedules above cannot deadlock
            raise RuntimeError("the pipeline schedule deadlocked")
    return PipelineSchedule(p, n, m, forward_time, backward_time, tuple(ops))


def pipeline_schedule_for(scenario: Any, micro_batches: int, **times: float) -> PipelineSchedule:
    """The schedule of a ``ParallelTrainingScenario``'s pipeline: its ``p`` and ``m``, with ``n`` micro-batches."""
    return pipeline_schedule(int(scenario.pipeline_parallel), micro_batches, int(scenario.interleave), **times)


def pipeline_timeline(schedule: PipelineSchedule, ax: Any = None, *, title: str = "") -> Any:
    """Forward and backward passes as boxes over time, one row per device, the idle time shaded; returns the Figure.

    Each box is labelled with its micro-batch (and chunk, when interleaved). Below the rows, the first
    device's micro-batches in flight are drawn as a step line with its peak marked.
    """
    p, n, m = schedule.stages, schedule.micro_batches, schedule.chunks
    if ax is None:
        fig = _figure(max(7.0, 0.18 * schedule.makespan * m + 2), 0.5 * p + 2.2)
        ax, flight_ax = fig.subplots(2, 1, height_ratios=(p, 2.2), sharex=True)
    else:
        fig, flight_ax = ax.figure, None
    ax.axvspan(0, schedule.makespan, color="#DDDDDD", zorder=0, gid="idle")
    for op in schedule.ops:
        light = 1.0 - 0.35 * (op.chunk / max(m - 1, 1)) if m > 1 else 1.0
        ax.barh(
            op.device,
            op.end - op.start,
            left=op.start,
            height=0.8,
            color=_COLORS["forward" if op.kind == "F" else "backward"],
            alpha=light,
            edgecolor="white",
            linewidth=0.5,
            gid=f"{op.kind}:{op.device}:{op.micro_batch}:{op.chunk}",
        )
        if op.end - op.start >= 0.3:
            ax.text((op.start + op.end) / 2, op.device, str(op.micro_batch + 1), ha="center", va="center",
                    fontsize=6, color="white")  # fmt: skip
    ax.set_yticks(range(p), [f"device {d + 1}" for d in range(p)])
    ax.set_ylim(p - 0.5, -0.5)
    ax.set_xlim(0, schedule.makespan)
    measured, formula = schedule.bubble_fraction, bubble_fraction_formula(p, n, m)
    name = "1F1B" if m == 1 else f"interleaved, m = {m} chunks per device"
    ax.set_title(
        title
        or f"{name}: p = {p}, n = {n} micro-batches · grey = bubble, {measured:.1%} of the ideal time "
        f"((p − 1)/(m·n) = {formula:.1%})",
        fontsize=9,
    )
    from matplotlib.patches import Patch

    fig.legend(
        handles=[Patch(color=_COLORS["forward"], label="forward"), Patch(color=_COLORS["backward"], label="backward"),
                 Patch(color="#DDDDDD", label="idle (bubble)")],
        loc="outside lower center", fontsize=8, ncols=3, frameon=False,
    )  # fmt: skip
    if flight_ax is not None:
        steps = schedule.in_flight(0)
        flight_ax.step([t for t, _ in steps], [c for _, c in steps], where="post", color="black", gid="in_flight")
        peak = schedule.peak_in_flight(0)
        flight_ax.axhline(peak, color=_COLORS["activations"], linestyle="--", linewidth=1, gid="peak_in_flight")
        flight_ax.text(0, peak, f" peak {peak:g} micro-batches", va="bottom", fontsize=8,
                       color=_COLORS["activations"])  # fmt: skip
        flight_ax.set_ylim(0, peak * 1.35)
        flight_ax.set_ylabel("in flight,\ndevice 1", fontsize=8)
        flight_ax.set_xlabel("time (a micro-batch's forward through one stage = 1, its backward = 2)")
    else:
        ax.set_xlabel("time (a micro-batch's forward through one stage = 1, its backward = 2)")
    return fig


# -- memory over one step --------------------------------------------------------------------------------


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
    boundary = _bytes(scenario.segment_input)
    layer = _bytes(scenario.per_token_activations) / layers
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
        _capacity(scenario),
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
    resident = tuple((label, _bytes(q)) for label, q in parts if _bytes(q) > 0)
    if abs(sum(size for _, size in resident) - _bytes(scenario.total)) > 1e-6 * _bytes(scenario.total):
        raise ValueError("the state's parts do not add up to its total")  # pragma: no cover - a model change
    layers = int(scenario.workload.layers)
    layer = _bytes(acts) / layers
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
    return StepMemory(resident, "saved activations", tuple(times), tuple(curve), phases, _capacity(scenario),
                      f"{scenario.workload.name}: one training step")  # fmt: skip


def step_memory_figure(data: StepMemory, ax: Any = None) -> Any:
    """The resident parts as stacked bands, the saved activations on top, phases labelled, peak marked."""
    if ax is None:
        fig = _figure(8.0, 3.8)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    end = data.times[-1]
    base = 0.0
    for label, size in data.resident:
        ax.fill_between([0, end], base / 1e9, (base + size) / 1e9, color=_COLORS.get(label, "#999999"),
                        label=f"{label} {size / 1e9:,.1f} GB", gid=f"resident:{label}", linewidth=0)  # fmt: skip
        base += size
    ys = [(base + c) / 1e9 for c in data.curve]
    ax.fill_between(data.times, base / 1e9, ys, step="post", color=_COLORS["activations"], alpha=0.8,
                    label=data.curve_label, gid="curve", linewidth=0)  # fmt: skip
    ax.step(data.times, ys, where="post", color="black", linewidth=0.8)
    peak = data.peak / 1e9
    ax.plot([data.peak_time], [peak], marker="v", color="black", gid="peak", linestyle="none")
    ax.annotate(f"peak {_gb(data.peak)}", (data.peak_time, peak), xytext=(6, 4), textcoords="offset points",
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
