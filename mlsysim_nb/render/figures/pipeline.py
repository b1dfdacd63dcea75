"""Pipeline schedules, 1F1B and interleaved (Narayanan et al. 2021, Sec. 2.2), simulated op by op; timelines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlsysim_nb.render.figures.style import COLORS, new_figure

__all__ = [
    "PipelineOp",
    "PipelineSchedule",
    "bubble_fraction_formula",
    "pipeline_schedule",
    "pipeline_schedule_for",
    "pipeline_timeline",
]


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
        fig = new_figure(max(7.0, 0.18 * schedule.makespan * m + 2), 0.5 * p + 2.2)
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
            color=COLORS["forward" if op.kind == "F" else "backward"],
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
        handles=[Patch(color=COLORS["forward"], label="forward"), Patch(color=COLORS["backward"], label="backward"),
                 Patch(color="#DDDDDD", label="idle (bubble)")],
        loc="outside lower center", fontsize=8, ncols=3, frameon=False,
    )  # fmt: skip
    if flight_ax is not None:
        steps = schedule.in_flight(0)
        flight_ax.step([t for t, _ in steps], [c for _, c in steps], where="post", color="black", gid="in_flight")
        peak = schedule.peak_in_flight(0)
        flight_ax.axhline(peak, color=COLORS["activations"], linestyle="--", linewidth=1, gid="peak_in_flight")
        flight_ax.text(0, peak, f" peak {peak:g} micro-batches", va="bottom", fontsize=8,
                       color=COLORS["activations"])  # fmt: skip
        flight_ax.set_ylim(0, peak * 1.35)
        flight_ax.set_ylabel("in flight,\ndevice 1", fontsize=8)
        flight_ax.set_xlabel("time (a micro-batch's forward through one stage = 1, its backward = 2)")
    else:
        ax.set_xlabel("time (a micro-batch's forward through one stage = 1, its backward = 2)")
    return fig
