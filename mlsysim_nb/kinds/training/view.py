"""How a ``TrainingStateFitScenario`` presents itself: its sections, headline, chart and controls, as data.

The scenario class (:mod:`mlsysim_nb.kinds.training.model`) holds the model; this mixin holds
what the display, comparison, control and sweep modules read from it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mlsysim_nb.formula import format_number
from mlsysim_nb.kinds.training.physics import ADAPTER_SHAPE, DEFAULT_ADAPTER_RANK
from mlsysim_nb.model.evaluator import is_array
from mlsysim_nb.model.knob import label_and_help
from mlsysim_nb.model.notation import RECORD_QUANTITIES
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec, Verdict
from mlsysim_nb.model.protocol import ScenarioLike
from mlsysim_nb.records.workloads import workload_rows
from mlsysim_nb.render.numbers import capacity_text, format_bytes, format_share
from mlsysim_nb.units import Q_

if TYPE_CHECKING:
    from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
    from mlsysim_nb.records.hardware import HardwareNode
    from mlsysim_nb.records.workloads import Workload

__all__ = ["EXAMPLE_WRITE_BANDWIDTH", "TrainingLike", "TrainingView", "recipe"]

#: Example storage bandwidth for the checkpoint-write step (a datacentre NVMe drive).
EXAMPLE_WRITE_BANDWIDTH = Q_(5, "GB/s")

_WIDTH_NAMES = {4: "FP32", 2: "16-bit", 1: "FP8"}
_OPTIMIZER_NAMES = {8: "Adam", 4: "SGD + momentum", 2: "8-bit Adam", 0: "plain SGD"}

_S = SectionSpec
_SECTIONS = (
    _S(
        "Parameter state",
        (
            ("weights", "weights"),
            ("gradients", "gradients"),
            ("optimizer_state", "optimizer_state"),
            ("optimizer_values_per_parameter", "optimizer_values_per_parameter"),
            ("master_weights", "master_weights"),
            ("bytes_per_trained_parameter", "bytes_per_trained_parameter"),
            ("total", "total"),
            ("copies", "copies"),
            ("frozen_share", "frozen_share"),
        ),
        "total",
    ),
    _S(
        "Adapters",
        (
            ("adapter_count", "adapter_count"),
            ("adapter_weights", "adapter_weights"),
            ("adapter_gradients", "adapter_gradients"),
            ("adapter_master", "adapter_master"),
            ("adapter_optimizer_state", "adapter_optimizer_state"),
            ("adapter_state", "adapter_state"),
            ("adapter_fraction", "adapter_fraction"),
            ("full_state", "full_state"),
            ("adapter_saved", "adapter_saved"),
            ("adapter_reduction", "adapter_reduction"),
            ("adapter_kept_share", "adapter_kept_share"),
            ("adapter_reduction_ceiling", "adapter_reduction_ceiling"),
        ),
        "adapter_state",
        when="adapter_mode",
    ),
    _S("Fit against the device", (("fits", "fits"), ("capacity_share", "capacity_share")), "capacity_share"),
    _S(
        "Activations and batch",
        (
            ("training_total", "training_total"),
            ("training_fits", "training_fits"),
            ("training_copies", "training_copies"),
            ("training_capacity_multiple", "training_capacity_multiple"),
            ("resident_batch_limit", "resident_batch_limit"),
            ("max_resident_batch", "max_resident_batch"),
            ("activations_at(2 × batch_size)", "activations_at"),
        ),
        "training_total",
        when="has_activations",
    ),
    _S(
        "Checkpoint and optimizer update",
        (
            ("checkpoint", "checkpoint"),
            ("checkpoint_write_time(5 GB/s)", "checkpoint_write_time"),
            ("updated_bytes_per_parameter", "updated_bytes_per_parameter"),
            ("update_bytes_per_parameter", "update_bytes_per_parameter"),
            ("update_traffic", "update_traffic"),
            ("update_time", "update_time"),
        ),
        "update_time",
    ),
    _S(
        "What an adapter run saves and moves",
        (
            ("adapter_checkpoint", "adapter_checkpoint"),
            ("adapter_update_traffic", "adapter_update_traffic"),
            ("adapter_update_time", "adapter_update_time"),
        ),
        "adapter_update_time",
        when="adapter_mode",
    ),
)
_NOTES = (
    (
        "Equation",
        (
            "Parameter state sums weights, gradients, optimizer state and an optional master copy; "
            "in adapter mode the base weights stay frozen and only the adapters carry training state."
        ),
    ),
    (
        "Assumptions",
        (
            "Bytes per value and per state, and the activation budget, are supplied; "
            "activation storage scales linearly with batch."
        ),
    ),
    (
        "Excludes",
        "Runtime workspaces, allocator reserve, optimizer-specific extra temporaries, and capacity safety margins.",
    ),
    (
        "How the model counts",
        (
            "gradients, optimizer_state, checkpoint, update_traffic and update_time are full-model figures even in "
            "adapter mode (an adapter run's own are the adapter_* rows); the update traffic counts the gradient read "
            "and the updated copy's read and write, not the 16-bit working copy a mixed-precision step also writes; "
            "the resident batch limit is negative, not clamped, when the state alone overflows."
        ),
    ),
)
_COMPARISON_ROWS = (
    "bytes_per_trained_parameter",
    "weights",
    "total",
    "training_total",
    "capacity_share",
    "fits",
    "training_fits",
    "max_resident_batch",
    "checkpoint",
    "update_traffic",
    "update_time",
    "adapter_checkpoint",
    "adapter_update_traffic",
)


class TrainingLike(ScenarioLike, Protocol):
    """What the training view reads of its scenario, beyond every scenario's face."""

    @property
    def workload(self) -> Workload:
        """The ``workload`` field."""
        ...

    @property
    def hardware(self) -> HardwareNode | None:
        """The ``hardware`` field."""
        ...

    @property
    def activations(self) -> Any:
        """The ``activations`` field."""
        ...

    @property
    def batch_size(self) -> int | None:
        """The ``batch_size`` field."""
        ...

    @property
    def master_bytes_per_parameter(self) -> Any:
        """The ``master_bytes_per_parameter`` field."""
        ...

    @property
    def adapter_rank(self) -> int | None:
        """The ``adapter_rank`` field."""
        ...

    @property
    def adapted_matrices(self) -> int | None:
        """The ``adapted_matrices`` field."""
        ...

    @property
    def adapter_in_dim(self) -> int | None:
        """The ``adapter_in_dim`` field."""
        ...

    @property
    def adapter_out_dim(self) -> int | None:
        """The ``adapter_out_dim`` field."""
        ...

    @property
    def adapter_mode(self) -> bool:
        """True when adapters are configured."""
        ...

    @property
    def fits(self) -> Any:
        """Whether the state fits the device."""
        ...

    @property
    def training_fits(self) -> Any:
        """Whether the run fits the device."""
        ...


class TrainingView:
    """The presentation of a training-state scenario (a mixin of :class:`TrainingStateFitScenario`)."""

    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = _NOTES
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def sweep_quantity(self: TrainingLike) -> str:
        """What a sweep of this scenario plots by default: the run's memory."""
        return "training_total" if self.activations is not None else "total"

    def fit_questions(self: TrainingLike) -> dict[str, tuple[str, str]]:
        """Each verdict, the quantity it holds against the device, and what it is about (for a sweep's words)."""
        run = ("training_total", "the run") if self.activations is not None else ("total", "the run (state only)")
        return {"fits": ("total", "the state"), "training_fits": run}

    def default_title(self: TrainingLike) -> str:
        """``"GPT-2 XL, 16-bit + FP32 master + Adam on NVIDIA H100"``: the recipe, named from the fields."""
        device = "" if self.hardware is None else f" on {self.hardware.name}"
        return f"{self.workload.name}, {recipe(self)}{device}"

    def headline(self: TrainingLike) -> Headline:
        """State (plus activations, when given) against the device, and whether the whole run fits."""
        m = self.magnitude
        head = f"{self.workload.name}, {recipe(self)}"
        if self.is_sweep:
            return Headline(f"{head}, a sweep over {', '.join(self.swept_fields())}")
        state = format_bytes(m("total"))
        if self.hardware is None:
            return Headline(f"{head}: {state} of parameter state", Verdict("no device to fit against"))
        cap = format_bytes(m("capacity"), binary=True)
        line = f"{head} on {self.hardware.name}: state {state}"
        if self.activations is None:
            ok = bool(self.fits)
            line += f", {format_share(m('capacity_share'))} of {cap}"
            return Headline(line, Verdict("fits" if ok else "does not fit", ok))
        at = "" if self.batch_size is None else f" at batch {format_number(self.batch_size)}"
        line += (
            f" + activations {format_bytes(m('activations'))}{at} = {format_bytes(m('training_total'))}"
            f", {format_share(m('training_capacity_multiple'))} of {cap}"
        )
        if self.training_fits:
            return Headline(line, Verdict("the run fits", ok=True))
        if self.fits:
            return Headline(line, Verdict("the state fits; the run does not", ok=False))
        return Headline(line, Verdict("does not fit: the state alone overflows", ok=False))

    def step_memory(self) -> Any:
        """Memory over one step, event by event (``mlsysim_nb.kinds.training.figures``)."""
        from mlsysim_nb.kinds.training.figures import training_step

        return training_step(self)

    def memory_chart(self: TrainingLike) -> MemoryChart:
        """One bar for this run (and one for full tuning in adapter mode) against the device's capacity."""
        m = self.magnitude
        acts = {"activations": m("activations")} if self.activations is not None else {}
        full = {
            "weights": m("weights"),
            "gradients": m("gradients"),
            "optimizer state": m("optimizer_state"),
            "master copy": m("master_weights"),
        }
        bars: tuple[tuple[str, dict[str, Any]], ...]
        if self.adapter_mode:
            bars = (
                ("this run (adapters)", {"weights": m("weights"), "adapter state": m("adapter_state"), **acts}),
                ("full tuning", {**full, **acts}),
            )
        else:
            bars = (("this run", {**full, **acts}),)
        return MemoryChart.against(bars, self.hardware, self.headline())

    def method_inputs(self: TrainingLike) -> dict[str, Any]:
        """Example arguments of the methods the derivation shows (another batch, a disk's bandwidth)."""
        extra: dict[str, Any] = {"write_bandwidth": EXAMPLE_WRITE_BANDWIDTH.m_as("byte/second")}
        if self.batch_size is not None:
            extra["at_batch_size"] = 2 * self.batch_size  # an array in a sweep over the batch
        else:
            # no batch, so no 2 × batch_size: activations_at reads batch_size and says it is missing (D9)
            extra["at_batch_size"] = 1
        return extra

    def input_rows(self: TrainingLike) -> list[tuple[str, str, str]]:
        """The inputs that come from the workload and the device, as (name, meaning, value) rows."""
        rows = workload_rows(self.workload)
        if self.hardware is not None:
            mem = self.hardware.memory
            rows.append(("hardware.memory.capacity", RECORD_QUANTITIES["capacity"].label, capacity_text(mem.capacity)))
            rows.append(("hardware.memory.bandwidth", RECORD_QUANTITIES["bandwidth"].label, f"{mem.bandwidth:~P}"))
        return rows

    def input_label(self: TrainingLike, name: str) -> str:
        """How the inputs table names a field (its declared label); the activations say at which batch they hold."""
        label = label_and_help(type(self), name)[0]
        if name == "activations" and self.batch_size is not None and not is_array(self.batch_size):
            return f"{label}, stated at batch_size = {self.batch_size}"
        return label

    def controls(self: TrainingLike) -> list[Any]:
        """Device, model, precision, optimizer, master copy, batch and adapters."""
        from mlsysim_nb.model import controls as c

        specs = [
            c.catalog_control(self, "hardware"),
            c.catalog_control(self, "workload"),
            c.field_control(self, "bytes_per_value"),
            c.field_control(self, "optimizer_bytes_per_parameter"),
            c.toggle_control(
                "master_bytes_per_parameter", "FP32 master copy", self.master_bytes_per_parameter is not None,
                lambda s, on: {"master_bytes_per_parameter": 4 if on else None},
                "keep a 4-byte master copy of every trained weight",
            ),
        ]  # fmt: skip
        if self.batch_size is not None:
            specs.append(c.field_control(self, "batch_size"))
        specs.append(
            c.toggle_control(
                "adapter_mode", "adapters (LoRA)", self.adapter_mode, _adapter_bind,
                "freeze the base; train low-rank adapters",
            )
        )  # fmt: skip
        shape_on = self.adapter_mode and self.adapter_rank is not None
        defaults = _shape_defaults(self)
        for name in ADAPTER_SHAPE[:2]:  # the rank and the matrices per layer; the widths follow the model
            spec = c.field_control(self, name, value=defaults[name], bind=_shape_bind(name))
            specs.append(dataclasses.replace(spec, disabled=not shape_on))
        return specs


def recipe(s: TrainingLike) -> str:
    """``"FP32 + Adam"``, ``"16-bit + FP32 master + Adam"``, with ``+ adapters`` in adapter mode."""
    if s.is_sweep:
        return "a sweep"
    value = s.magnitude("bytes_per_value")
    parts = [_WIDTH_NAMES.get(value, f"{value:g} B values")]
    if s.master_bytes_per_parameter is not None:
        master = s.magnitude("master_bytes_per_parameter")
        if master == value and value in _WIDTH_NAMES:  # not "FP32 + FP32 master": say which copy each is
            parts[0] += " weights"
        parts.append(f"{_WIDTH_NAMES.get(master, f'{master:g} B')} master")
    opt = s.magnitude("optimizer_bytes_per_parameter")
    parts.append(_OPTIMIZER_NAMES.get(opt, f"{opt:g} B optimizer"))
    if s.adapter_mode:
        parts.append("adapters")
    return " + ".join(parts)


def _shape_bind(name: str) -> Any:
    """Setting one number of the adapter shape: the rest of the shape follows (a stated count is dropped)."""

    def bind(s: TrainingStateFitScenario, value: Any) -> dict[str, Any]:
        return {**_shape_defaults(s), name: value}  # the model refuses a fraction

    return bind


def _adapter_bind(s: TrainingStateFitScenario, on: Any) -> dict[str, Any]:
    if not on:
        return dict.fromkeys(("adapter_parameters", *ADAPTER_SHAPE))
    return _shape_defaults(s)


def _shape_defaults(s: TrainingLike) -> dict[str, Any]:
    """Switching to a rank-based adapter shape: fill the rest of the shape and drop a stated count."""
    width = s.workload.hidden_dim or 4096
    return {
        "adapter_parameters": None,
        "adapter_rank": s.adapter_rank or DEFAULT_ADAPTER_RANK,
        "adapted_matrices": s.adapted_matrices or 2,
        "adapter_in_dim": s.adapter_in_dim or width,
        "adapter_out_dim": s.adapter_out_dim or width,
    }
