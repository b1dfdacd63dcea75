"""How a ``ParallelTrainingScenario`` presents itself: its sections, headline, chart and controls, as data.

The scenario class (:mod:`mlsysim_nb.kinds.parallel.model`) holds the model; this mixin holds
what the display, comparison, control and sweep modules read from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from mlsysim_nb.kinds.training.view import TrainingLike, recipe
from mlsysim_nb.model.notation import RECORD_QUANTITIES
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec, Verdict
from mlsysim_nb.model.protocol import ScenarioLike
from mlsysim_nb.render.numbers import capacity_text, format_bytes, format_share

if TYPE_CHECKING:
    from mlsysim_nb.records.hardware import HardwareNode

__all__ = ["ParallelLike", "ParallelView"]

_S = SectionSpec
_SECTIONS = (
    _S("Layout", (("model_parallel", "model_parallel"), ("devices", "devices")), "devices"),
    _S(
        "State of one model replica, before the t·p split",
        (
            ("replica_weights", "replica_weights"),
            ("gradient_width", "gradient_width"),
            ("replica_gradients", "replica_gradients"),
            ("replica_optimizer_state", "replica_optimizer_state"),
            ("replica_master_weights", "replica_master_weights"),
        ),
        "replica_weights",
    ),
    _S(
        "Sharding across the N_d replicas (ZeRO)",
        (
            ("optimizer_shards", "optimizer_shards"),
            ("gradient_shards", "gradient_shards"),
            ("weight_shards", "weight_shards"),
        ),
        "optimizer_shards",
    ),
    _S(
        "Experts: split over the e devices of an expert-parallel group",
        (
            ("expert_share", "expert_share"),
            ("expert_data_parallel", "expert_data_parallel"),
            ("expert_optimizer_shards", "expert_optimizer_shards"),
            ("expert_gradient_shards", "expert_gradient_shards"),
            ("expert_weight_shards", "expert_weight_shards"),
        ),
        "expert_share",
        when="has_experts",
    ),
    _S(
        "State per device",
        (
            ("weights_per_device", "weights_per_device"),
            ("gradients_per_device", "gradients_per_device"),
            ("optimizer_state_per_device", "optimizer_state_per_device"),
            ("master_weights_per_device", "master_weights_per_device"),
            ("state_per_device", "state_per_device"),
        ),
        "state_per_device",
    ),
    _S(
        "Activations per layer (Korthikanti Table 2, from the layer table)",
        (
            ("replicated_bytes_coefficient", "replicated_bytes_coefficient"),
            ("sharded_bytes_coefficient", "sharded_bytes_coefficient"),
            ("layer_score_coefficient", "layer_score_coefficient"),
            ("sequence_shards", "sequence_shards"),
            ("layer_activations", "layer_activations"),
        ),
        "layer_activations",
        when="has_activations",
    ),
    _S(
        "Activations of the first pipeline stage's layers (Korthikanti Table 2, Sec. 4.2.3)",
        (
            ("stage_layers", "stage_layers"),
            ("interleave_factor", "interleave_factor"),
            ("micro_batches_in_flight", "micro_batches_in_flight"),
            ("first_stage_layer_activations", "first_stage_layer_activations"),
        ),
        "first_stage_layer_activations",
        when="has_activations",
    ),
    _S(
        "The layers around the stack: the first and the last pipeline stage (Korthikanti Sec. 4.3)",
        (
            ("first_stage_activations", "first_stage_activations"),
            ("last_stage_micro_batches", "last_stage_micro_batches"),
            ("last_stage_activations", "last_stage_activations"),
            ("activations_per_device", "activations_per_device"),
        ),
        "activations_per_device",
        when="has_output",
    ),
    _S(
        "Activations per device: the first stage's layers; the layers around the stack (Korthikanti Sec. 4.3) are "
        "not counted, as the workload gives no vocabulary",
        (("activations_per_device", "activations_per_device"),),
        "activations_per_device",
        when="output_unsized",
    ),
    _S(
        "Fit on one device",
        (
            ("total_per_device", "total_per_device"),
            ("device_memory_share", "device_memory_share"),
            ("fits", "fits_per_device"),
            ("training_fits", "training_fits_per_device"),
        ),
        "total_per_device",
    ),
    _S(
        "Data-parallel communication per step",
        (
            ("trained_parameters", "trained_parameters"),
            ("stored_parameters", "stored_parameters"),
            ("gradient_allreduce_traffic", "gradient_allreduce_traffic"),
            ("zero_traffic_multiple", "zero_traffic_multiple"),
            ("data_parallel_traffic", "data_parallel_traffic"),
        ),
        "data_parallel_traffic",
    ),
    _S(
        "Tensor-parallel communication",
        (("tensor_parallel_traffic_per_layer", "tensor_parallel_traffic_per_layer"),),
        "tensor_parallel_traffic_per_layer",
    ),
    _S(
        "Expert all-to-all and the work per token",
        (
            ("routed_tokens_per_device", "routed_tokens_per_device"),
            ("expert_all_to_all_traffic_per_layer", "expert_all_to_all_traffic_per_layer"),
            ("training_flops_per_token", "training_flops_per_token"),
        ),
        "expert_all_to_all_traffic_per_layer",
        when="has_expert_traffic",
    ),
)
_NOTES = (
    (
        "Equation",
        (
            "Weights, gradients, optimizer state and master copy are split by t·p, then sharded across the N_d "
            "replicas by the ZeRO stage (Rajbhandari et al. 2020); a mixture of experts' routed experts are split "
            "over the e devices of an expert-parallel group, the N_d/e replicas holding the same experts sharding "
            "them (Rajbhandari et al. 2022, DeepSpeed-MoE). Activations are those of the device that holds the "
            "most. The first pipeline stage's layers: Korthikanti et al. (2022) Table 2 per layer, its coefficients "
            "read off the workload's own layer in the layer table, times L/p layers, times the p micro-batches in "
            "flight (times 1 + (p − 1)/(p·m) when interleaved), with the embedding's rows; the last stage holds "
            "fewer micro-batches but the final norm, the output layer and the loss's FP32 logits (Sec. 4.3); with "
            "p = 1 one device holds all of it. The state counts every expert (total parameters); the work per "
            "token counts the k experts a token uses (active parameters)."
        ),
    ),
    (
        "Assumptions",
        (
            "Parameters split evenly over t·p, embeddings and norms included (Megatron-LM replicates latent "
            "attention's down projections too: 924M of DeepSeek-V3's 671B, counted split); at least p micro-batches "
            "per step; "
            "under expert parallelism routing is balanced (each device's experts see s·b·k token copies); "
            "the micro-batch is the activation scenario's; in an adapter run only the adapters carry gradients, "
            "optimizer state and master copy, and ZeRO stage 3 also shards the frozen base. Gradients are kept "
            "at the weights' width unless gradient_bytes_per_value says otherwise: 16 bytes per parameter for "
            "mixed-precision Adam, ZeRO's convention; Megatron-LM's distributed optimizer and DeepSpeed keep FP32 "
            "gradients, 18 bytes per parameter (gradient_bytes_per_value=4)."
        ),
    ),
    (
        "Excludes",
        (
            "The input- and output-layer activations (Korthikanti Sec. 4.3) where the workload gives no vocabulary "
            "(a reference-style workload: the derivation says so), communication buffers, the pipeline bubble's idle "
            "time, allocator reserve and fragmentation; communication is volume, not time."
        ),
    ),
)
_HOLDS = "fits: every device holds its share"
_OVERFLOWS = "does not fit: a device needs more than its memory"
_COMPARISON_ROWS = (
    "devices",
    "state_per_device",
    "activations_per_device",
    "total_per_device",
    "device_memory_share",
    "fits_per_device",
    "training_fits_per_device",
    "data_parallel_traffic",
    "tensor_parallel_traffic_per_layer",
)


class ParallelLike(ScenarioLike, Protocol):
    """What the many-device view reads of its scenario, beyond every scenario's face."""

    @property
    def state(self) -> TrainingLike:
        """The ``state`` field."""
        ...

    @property
    def activations(self) -> Any:
        """The ``activations`` field."""
        ...

    @property
    def recompute(self) -> Any:
        """The ``recompute`` field."""
        ...

    @property
    def data_parallel(self) -> Any:
        """The ``data_parallel`` field."""
        ...

    @property
    def zero_stage(self) -> Any:
        """The ``zero_stage`` field."""
        ...

    @property
    def tensor_parallel(self) -> Any:
        """The ``tensor_parallel`` field."""
        ...

    @property
    def sequence_parallel(self) -> Any:
        """The ``sequence_parallel`` field."""
        ...

    @property
    def expert_parallel(self) -> Any:
        """The ``expert_parallel`` field."""
        ...

    @property
    def pipeline_parallel(self) -> Any:
        """The ``pipeline_parallel`` field."""
        ...

    @property
    def interleave(self) -> Any:
        """The ``interleave`` field."""
        ...

    @property
    def hardware(self) -> HardwareNode | None:
        """The device."""
        ...

    @property
    def workload(self) -> Any:
        """The network being trained."""
        ...

    @property
    def devices(self) -> Any:
        """Devices in the run."""
        ...

    @property
    def fits(self) -> Any:
        """Whether one device holds its share of the state."""
        ...

    @property
    def training_fits(self) -> Any:
        """Whether one device holds its share of the run."""
        ...

    def layout(self) -> str:
        """The layout in the course's notation."""
        ...

    def binding_device(self) -> str:
        """Which device the per-device figures describe."""
        ...


class ParallelView:
    """The presentation of a many-device scenario (a mixin of :class:`ParallelTrainingScenario`)."""

    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = _NOTES
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def default_title(self: ParallelLike) -> str:
        """``"GPT-3 (175B), 16-bit + FP32 master + Adam on 64 × NVIDIA A100"``."""
        device = ("device" if self.devices == 1 else "devices") if self.hardware is None else f"× {self.hardware.name}"
        return f"{self.workload.name}, {recipe(self.state)} on {self.devices} {device}"

    def headline(self: ParallelLike) -> Headline:
        """The layout, memory per device against the device, and whether one device holds it."""
        if self.is_sweep:
            swept = self.swept_fields() or ["the state's fields"]
            return Headline(f"{self.workload.name}, a sweep over {', '.join(swept)}")
        used = format_bytes(self.magnitude("total_per_device"))
        if self.hardware is None:
            devices = f"{self.devices} device" if self.devices == 1 else f"{self.devices} devices"
            head = f"{self.workload.name}, {recipe(self.state)} on {devices}, {self.layout()}"
            return Headline(f"{head}: {used} per device", Verdict("no device to fit against"))
        head = f"{self.workload.name}, {recipe(self.state)} on {self.devices} × {self.hardware.name}, {self.layout()}"
        share = format_share(self.magnitude("device_memory_share"))
        cap = format_bytes(self.magnitude("capacity"), binary=True)
        line = f"{head}: {used} per device, {share} of {cap}"
        if self.activations is None:
            ok = bool(self.fits)
            verdict = (
                "fits: every device holds its share" if ok else "does not fit: a device needs more than its memory"
            )
            return Headline(line, Verdict(verdict, ok))
        if self.training_fits:
            return Headline(line, Verdict("the run fits: every device holds its share", ok=True))
        if self.fits:
            return Headline(line, Verdict("the state fits; the run does not", ok=False))
        return Headline(line, Verdict(_OVERFLOWS, ok=False))

    def zero_partition(self, stages: tuple[int, ...] = (0, 1, 2, 3)) -> Any:
        """What each ZeRO stage shards over the data-parallel devices (``mlsysim_nb.kinds.parallel.figures``)."""
        from mlsysim_nb.kinds.parallel.figures import zero_partition

        return zero_partition(self, stages)

    def memory_chart(self: ParallelLike) -> MemoryChart:
        """One device's memory (the stage that holds the most), part by part, against its capacity."""
        m = self.magnitude
        parts = {
            "weights": m("weights_per_device"),
            "gradients": m("gradients_per_device"),
            "optimizer state": m("optimizer_state_per_device"),
            "master copy": m("master_weights_per_device"),
        }
        if self.activations is not None:
            parts["activations"] = m("activations_per_device")
        # the device that holds the most activations: the first pipeline stage's or the last's
        bars: tuple[tuple[str, dict[str, Any]], ...] = ((self.binding_device(), parts),)
        return MemoryChart.against(bars, self.hardware, self.headline())

    def binding_device(self: ParallelLike) -> str:
        """Which device the per-device figures describe: ``"one device"``, ``"first stage"`` or ``"last stage"``."""
        if self.activations is None or self.is_sweep or int(self.pipeline_parallel) == 1:
            return "one device"
        if not self.flag("has_output"):
            return "first stage"
        first, last = self.magnitude("first_stage_activations"), self.magnitude("last_stage_activations")
        return "last stage" if last > first else "first stage"

    def sweep_quantity(self: ParallelLike) -> str:
        """What a sweep plots and fits by default: memory per device."""
        return "total_per_device"

    def fit_questions(self: ParallelLike) -> dict[str, tuple[str, str]]:
        """The verdict, the quantity it holds against the device, and what it is about (for a sweep's words)."""
        return {
            "fits": ("state_per_device", "a device's share of the state"),
            "training_fits": ("total_per_device", "a device's share of the run"),
        }

    def input_rows(self: ParallelLike) -> list[tuple[str, str, str]]:
        """The recipe and the device, from ``state``, and the geometry, from ``activations``."""
        from mlsysim_nb.records.workloads import workload_rows

        rows = workload_rows(self.workload)
        if self.activations is not None:
            a = self.activations
            rows.append(("activations.micro_batch", "micro-batch per replica", str(a.micro_batch)))
            rows.append(("activations.sequence", "sequence length", str(a.magnitude("sequence"))))
            width = a.magnitude("precision_bytes")
            rows.append(("activations.precision_bytes", "activation width b_act", f"{width:g} B"))
            if self.workload.reference_style:  # a workload with an architecture gives its own MLP width (ffn_dim)
                rows.append(("activations.ffn_multiple", "feed-forward multiple f", str(a.ffn_multiple)))
        if self.hardware is not None:
            rows.append(
                (
                    "hardware.memory.capacity",
                    RECORD_QUANTITIES["capacity"].label,
                    capacity_text(self.hardware.memory.capacity),
                )
            )
        return rows

    def controls(self: ParallelLike) -> list[Any]:
        """Device, the layout (N_d, ZeRO stage, t, SP, p, m) and the recomputation strategy."""
        from mlsysim_nb.model import controls as c

        device = c.catalog_control(
            self.state, "hardware", bind=lambda s, node: {"state": s.state.variant(hardware=node)}
        )
        experts = ("expert_parallel",) if self.workload.experts else ()  # only a mixture of experts splits them
        fields = ("data_parallel", "zero_stage", "tensor_parallel", "sequence_parallel", *experts,
                  "pipeline_parallel", "interleave", "recompute")  # fmt: skip
        return [device, *(c.field_control(self, name) for name in fields)]

    def layout(self: ParallelLike) -> str:
        """The layout in the course's notation: ``N_d=1 (ZeRO 0) × t=8 + SP × p=8, selective recomputation``."""
        sp = " + SP" if np.any(self.sequence_parallel) and np.any(np.asarray(self.tensor_parallel) > 1) else ""
        interleave = f" (m={self.interleave})" if np.any(np.asarray(self.interleave) > 1) else ""
        experts = f", e={self.expert_parallel}" if np.any(np.asarray(self.expert_parallel) > 1) else ""
        return (
            f"N_d={self.data_parallel}{experts} (ZeRO {self.zero_stage}) × t={self.tensor_parallel}{sp} × "
            f"p={self.pipeline_parallel}{interleave}, {self.recompute} recomputation"
        )
