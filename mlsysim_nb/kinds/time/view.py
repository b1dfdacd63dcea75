"""How a ``TrainingTimeScenario`` presents itself: sections, headline, charts and controls, as data.

The charts are the layout's memory bar (what one device holds) and, beside it, one iteration's time stacked by
cause; the controls move the layout (device, N_d, t, SP, p, m, recomputation), the batch and the overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec, Verdict
from mlsysim_nb.model.protocol import ScenarioLike
from mlsysim_nb.render.numbers import format_result, format_share

if TYPE_CHECKING:
    from mlsysim_nb.records.hardware import HardwareNode

__all__ = ["TIME_PARTS", "TimeLike", "TimeView"]

_S = SectionSpec
_SECTIONS = (
    _S(
        "Arithmetic per iteration (Korthikanti et al. 2022, Appendix A)",
        (
            ("micro_batches", "micro_batches"),
            ("tokens_per_iteration", "tokens_per_iteration"),
            ("attended_keys", "attended_keys"),
            ("layer_forward_flops_per_token", "layer_forward_flops_per_token"),
            ("output_forward_flops_per_token", "output_forward_flops_per_token"),
            ("model_flops_per_token", "model_flops_per_token"),
            ("model_flops_per_iteration", "model_flops_per_iteration"),
            ("recompute_flops_per_token", "recompute_flops_per_token"),
            ("hardware_flops_per_iteration", "hardware_flops_per_iteration"),
        ),
        "model_flops_per_iteration",
    ),
    _S(
        "Arithmetic and memory-bound work on one device",
        (
            ("compute_time", "compute_time"),
            ("recompute_time", "recompute_time"),
            ("layer_elementwise_bytes", "layer_elementwise_bytes"),
            ("elementwise_traffic", "elementwise_traffic"),
            ("layer_operand_bytes", "layer_operand_bytes"),
            ("matrix_traffic", "matrix_traffic"),
            ("matrix_operand_time", "matrix_operand_time"),
            ("elementwise_time", "elementwise_time"),
            ("output_operand_bytes", "output_operand_bytes"),
            ("output_layer_time", "output_layer_time"),
        ),
        "compute_time",
    ),
    _S(
        "Tensor and sequence parallelism: collectives inside the node",
        (
            ("collective_cost", "collective_cost"),
            ("tensor_bandwidth", "tensor_bandwidth"),
            ("tensor_parallel_time", "tensor_parallel_time"),
        ),
        "tensor_parallel_time",
        when="tensor_split",
    ),
    _S(
        "Pipeline transfers between stages",
        (("pipeline_bandwidth", "pipeline_bandwidth"), ("pipeline_transfer_time", "pipeline_transfer_time")),
        "pipeline_transfer_time",
        when="pipelined",
    ),
    _S(
        "Expert parallelism: the all-to-alls",
        (("expert_bandwidth", "expert_bandwidth"), ("expert_time", "expert_time")),
        "expert_time",
        when="experts_split",
    ),
    _S(
        "The pipeline: ideal time and bubble (Narayanan et al. 2021)",
        (
            ("pipeline_work_time", "pipeline_work_time"),
            ("bubble_fraction", "bubble_fraction"),
            ("bubble_time", "bubble_time"),
        ),
        "bubble_time",
    ),
    _S(
        "Data parallelism: the gradient reduction between nodes",
        (("data_bandwidth", "data_bandwidth"), ("data_parallel_time", "data_parallel_time")),
        "data_parallel_time",
        when="data_split",
    ),
    _S(
        "What the iteration waits for after the pipeline",
        (
            ("exposed_data_parallel_time", "exposed_data_parallel_time"),
            ("optimizer_step_time", "optimizer_step_time"),
        ),
        "optimizer_step_time",
    ),
    _S(
        "The iteration",
        (
            ("communication_time", "communication_time"),
            ("iteration_time", "iteration_time"),
            ("model_flops_utilization", "model_flops_utilization"),
            ("hardware_flops_utilization", "hardware_flops_utilization"),
            ("tokens_per_second", "tokens_per_second"),
            ("time_to_train(train_tokens)", "time_to_train"),
        ),
        "iteration_time",
    ),
)
_NOTES = (
    (
        "Equation",
        (
            "Model FLOPs: a layer's forward pass multiplies each matrix parameter once per token (2 FLOPs) and "
            "computes the scores and their product with the values (2·s·A each, a causal mask counted whole); "
            "backward twice the forward; the output layer 2·v·h per token forward (Korthikanti et al. 2022, "
            "Appendix A: 72·B·s·L·h²·(1 + s/(6·h) + v/(12·h·L)) for their GPT layer). Hardware FLOPs add "
            "recomputation's rerun forward. Time on one device: matrix work at η_mm of the peak, then the matrix "
            "products' own operands (inputs, weights, outputs) and the element-wise bytes (forward once, backward "
            "twice, the rerun again) at η_mem of the bandwidth, four tensor-parallel collectives of s·b·h per layer "
            "and micro-batch (six with full recomputation; SP's reduce-scatters and all-gathers at κ times an "
            "all-reduce's cost), pipeline sends of "
            "s·b·h/t per virtual stage and micro-batch each way, the bubble (p − 1)/(m·n_micro) of the ideal time "
            "(Narayanan et al. 2021), the data-parallel reduction, the experts' all-to-alls and the optimizer step."
        ),
    ),
    (
        "Assumptions",
        (
            "Nothing overlapped but what data_parallel_overlap says, as Megatron-LM ran Korthikanti's layouts; "
            "work spread evenly over the devices and stages (the output layer counted as an even share); ranks "
            "laid out tensor-parallel first, then data-parallel, then pipeline, a group sharing a node when its "
            "devices fit in one. The achieved shares' defaults: "
            "Calculon's published A100 system (Isaev et al. 2023): matrix units at 90 % of peak, memory at 90 %, "
            "NVLink at 65 % with reduce-scatters and all-gathers at 1.5 times their ring volume, InfiniBand at "
            "90 %, an operation's arithmetic and memory traffic back to back; fields, never fitted to a published "
            'time. With share_curves = "calculon-a100" each class (projections, the scores\' products forward and '
            "backward, the output layer, the norms and adds, the activation, the softmax) takes the share Calculon's "
            "A100 tables give an operation of its size (kinds/time/efficiency.py); on other devices an assumption."
        ),
    ),
    (
        "Checked",
        (
            "Against Korthikanti et al. (2022) Table 5 (GPT 22B to 1T on A100 80GB): with these shares the eight "
            "iteration times come out 2 % to 10.3 % short of the measured ones (mean 7.2 %), so MFU reads high by "
            "1 to 6.5 points; what selective recomputation with SP gains over full recomputation comes within 3 "
            "points. Calculon's size-dependent tables (share_curves) make them shorter still (4.1 % to 13.5 %, mean "
            "10.0 %): the large projections run at 95 %, which outweighs the small kernels' lower shares. Lower "
            "shares of a measured run of your own, stated as fields, give its time."
        ),
    ),
    (
        "Excludes",
        (
            "Kernel launch gaps, achieved shares that depend on an operation's size (unless share_curves says "
            "so), the collectives' own memory traffic, the loss and the embedding lookups' memory traffic, the "
            "tied embedding's gradient all-reduce between the first and last stage, tensor-parallel "
            "communication overlapped with computation, stragglers and failures; the data loader."
        ),
    ),
)
_COMPARISON_ROWS = (
    "devices",
    "model_flops_per_iteration",
    "compute_time",
    "recompute_time",
    "matrix_operand_time",
    "elementwise_time",
    "output_layer_time",
    "communication_time",
    "bubble_time",
    "optimizer_step_time",
    "iteration_time",
    "model_flops_utilization",
    "hardware_flops_utilization",
)

#: An iteration's time by cause, in stacking order: (chart part, formula).
TIME_PARTS = (
    ("compute", "compute_time"),
    ("recompute", "recompute_time"),
    ("matrix operands", "matrix_operand_time"),
    ("elementwise", "elementwise_time"),
    ("output layer", "output_layer_time"),
    ("communication exposed", "communication_time"),
    ("bubble", "bubble_time"),
    ("optimizer step", "optimizer_step_time"),
)

#: A layout's fields the panel moves, in the order the many-device panel shows them.
_LAYOUT_FIELDS = ("data_parallel", "zero_stage", "tensor_parallel", "sequence_parallel", "pipeline_parallel",
                  "interleave", "recompute")  # fmt: skip
#: Tokens the derivation's time_to_train shows (GPT-3's 300 billion, Brown et al. 2020).
EXAMPLE_TRAIN_TOKENS = 300e9


def _moves_layout(name: str) -> Any:
    """A control's binding: the value sets the layout's field ``name``."""

    def bind(scenario: Any, value: Any) -> dict[str, Any]:
        return {"layout": scenario.layout.variant(**{name: value})}

    return bind


class TimeLike(ScenarioLike, Protocol):
    """What the time view reads of its scenario, beyond every scenario's face."""

    @property
    def layout(self) -> Any:
        """The ``layout`` field."""
        ...

    @property
    def global_batch_size(self) -> Any:
        """The ``global_batch_size`` field."""
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

    def time_parts(self) -> dict[str, Any]:
        """An iteration's seconds by cause."""
        ...


class TimeView:
    """The presentation of a training-time scenario (a mixin of :class:`TrainingTimeScenario`)."""

    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = _NOTES
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def default_title(self: TimeLike) -> str:
        """``"GPT-3 (175B), B = 64 on 64 × NVIDIA A100 80GB SXM: time per iteration"``."""
        return f"{self.layout.title()}, B = {self.global_batch_size}: time per iteration"

    def time_parts(self: TimeLike) -> dict[str, Any]:
        """An iteration's seconds by cause (compute, recompute, element-wise, communication, bubble, optimizer)."""
        return {part: self.magnitude(name) for part, name in TIME_PARTS}

    def headline(self: TimeLike) -> Headline:
        """The iteration time, its MFU, and the layout."""
        if self.is_sweep:
            swept = self.swept_fields() or ["the layout's fields"]
            return Headline(f"{self.workload.name}, a sweep over {', '.join(swept)}")
        head = f"{self.workload.name} on {self.devices} × {self.hardware.name}, {self.layout.layout()}"  # type: ignore[union-attr]
        try:
            time = format_result("second", self.magnitude("iteration_time"))
            mfu = format_share(self.magnitude("model_flops_utilization"))
        except NotApplicableError as err:
            return Headline(f"{head}: not timed", Verdict(f"the time needs {err.needs}", ok=None))
        line = f"{head}: {time} per iteration"
        parts = self.time_parts()
        cause = max(parts, key=lambda k: parts[k])
        if not self.layout.training_fits:  # a time for a run its devices cannot hold is said to be one
            share = format_share(self.layout.magnitude("device_memory_share"))
            verdict = f"MFU {mfu}; most of it {cause}; a run that does not fit: a device needs {share} of its memory"
            return Headline(line, Verdict(verdict, ok=False))
        return Headline(line, Verdict(f"MFU {mfu}; most of it {cause}", ok=None))

    def memory_chart(self: TimeLike) -> MemoryChart:
        """The layout's memory on one device, as the many-device kind draws it."""
        chart: MemoryChart = self.layout.memory_chart()
        return chart

    def companion_chart(self: TimeLike) -> MemoryChart | None:
        """One iteration's time on a device, stacked by cause, beside the memory bar (none if it cannot be timed)."""
        try:
            self.magnitude("iteration_time")
        except NotApplicableError:
            return None
        caption = f"one iteration: MFU {format_share(self.magnitude('model_flops_utilization'))}"
        return MemoryChart((("one iteration", self.time_parts()),), caption=caption, unit="second")

    def sweep_quantity(self: TimeLike) -> str:
        """What a sweep plots by default: the iteration time."""
        return "iteration_time"

    def method_inputs(self: TimeLike) -> dict[str, Any]:
        """The derivation's time_to_train reads 300 billion tokens (GPT-3's)."""
        return {"train_tokens": EXAMPLE_TRAIN_TOKENS}

    def input_rows(self: TimeLike) -> list[tuple[str, str, str]]:
        """The layout's inputs, and the device's peak and links."""
        rows: list[tuple[str, str, str]] = list(self.layout.input_rows())
        node = self.hardware
        if node is not None:
            for name, label in (
                ("peak_flops", "peak arithmetic (dense 16-bit)"),
                ("link_bandwidth", "link bandwidth inside a node, per device"),
                ("network_bandwidth", "network bandwidth between nodes, per device"),
                ("node_devices", "devices per node"),
            ):
                value = getattr(node, name)
                rows.append((f"hardware.{name}", label, "None" if value is None else f"{value:~P}"
                             if hasattr(value, "units") else str(value)))  # fmt: skip
        return rows

    def controls(self: TimeLike) -> list[Any]:
        """The layout's device and parallelism, then the global batch, the share model and the data-parallel overlap."""
        from mlsysim_nb.model import controls as c

        layout = self.layout
        device = c.catalog_control(
            layout.state,
            "hardware",
            bind=lambda s, node: {"layout": s.layout.variant(state=s.layout.state.variant(hardware=node))},
        )
        moved = [c.field_control(layout, name, bind=_moves_layout(name)) for name in _LAYOUT_FIELDS]
        own = [c.field_control(self, name) for name in ("global_batch_size", "share_curves", "data_parallel_overlap")]
        return [device, *moved, *own]
