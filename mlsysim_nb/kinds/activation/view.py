"""How an ``ActivationMemoryScenario`` presents itself: its sections, headline, chart and controls, as data.

The scenario class (:mod:`mlsysim_nb.kinds.activation.model`) holds the model; this mixin holds
what the display, comparison, control and sweep modules read from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec
from mlsysim_nb.model.protocol import ScenarioLike
from mlsysim_nb.physics import STRATEGIES
from mlsysim_nb.records.workloads import workload_rows
from mlsysim_nb.render.numbers import format_bytes

if TYPE_CHECKING:
    from mlsysim_nb.records.workloads import Workload

__all__ = ["ActivationView"]

_S = SectionSpec
_SECTIONS = (
    _S(
        "Strategies",
        (
            ("sequence", "sequence"),
            ("per_token_bytes_coefficient", "per_token_bytes_coefficient"),
            ("score_bytes_coefficient", "score_bytes_coefficient"),
            ('layer_activations("none")', "layer_activations_none"),
            ('layer_activations("selective")', "layer_activations_selective"),
            ('layer_activations("full")', "layer_activations_full"),
            ('activations("none")', "activations_none"),
            ('activations("selective")', "activations_selective"),
            ('activations("full")', "activations_full"),
            ("per_token_activations", "per_token_activations"),
            ("per_sequence_activations", "per_sequence_activations"),
            ("score_activations", "score_activations"),
        ),
        'activations("none")',
    ),
    _S("Score share", (("score_share", "score_share"),), "score_share"),
    _S(
        "Whole model",
        (
            ("output_activations", "output_activations"),
            ('model_activations("none")', "model_activations_none"),
            ('model_activations("selective")', "model_activations_selective"),
            ('model_activations("full")', "model_activations_full"),
        ),
        'model_activations("full")',
        when="has_output",
    ),
    _S(
        "Checkpoint segments",
        (
            ("segment_layers", "segment_layers"),
            ("segment_input", "segment_input"),
            ("segment_inputs", "segment_inputs"),
            ("live_segment", "live_segment"),
            ("checkpointed_activations", "checkpointed_activations"),
            ("checkpoint_memory_units(k)", "checkpoint_memory_units"),
        ),
        "checkpointed_activations",
    ),
    _S(
        "Per-layer line items",
        (
            ("projection_activations_per_layer", "projection_activations_per_layer"),
            ("ffn_activations_per_layer", "ffn_activations_per_layer"),
            ("score_activations_per_layer", "score_activations_per_layer"),
            ("line_items_per_layer", "line_items_per_layer"),
            ("line_items_total", "line_items_total"),
        ),
        "line_items_total",
        when="reference_layer",  # the reference's illustrative items; layer_lines() gives any layer's own rows
    ),
    _S(
        "Recompute cost",
        (
            ("training_flops (per token)", "training_flops"),
            ("rerun_fraction", "rerun_fraction"),
            ("checkpointed_training_flops (per token)", "checkpointed_training_flops"),
            ("decode_flops (per token)", "decode_flops"),
            ("forward_equivalents", "forward_equivalents"),
            ("recompute_overhead", "recompute_overhead"),
            ("recompute_forward_equivalents", "recompute_forward_equivalents"),
        ),
        "recompute_overhead",
    ),
)
_NOTES = (
    (
        "Equation",
        (
            "Korthikanti et al. (2022): per layer s·b·h·(34 + 5·a·s/h) bytes at 16 bits with a 4h MLP, "
            "s·b·h·(18 + 4f + 5·a·s/h) with an f·h one; selective recomputation drops the attention-score term, "
            "full recomputation keeps each layer's input. For a real architecture κ_tok and κ_score are the sums "
            "of the layer table's rows for its attention kernel and accounting (fused attention: no scores, an "
            "FP32 log-sum-exp per row and head); activations(strategy) counts the layers, model_activations adds "
            "the output layer and the loss."
        ),
    ),
    (
        "Assumptions",
        (
            "Transformer layers share geometry. Aggregate Korthikanti-style coefficients and explicit "
            "tensor line items are separate approximations; segment sizes use integer division."
        ),
    ),
    (
        "Excludes",
        (
            "Allocator reserves, runtime workspaces, unequal layer shapes; leftover segment layers are "
            "absent from the simple segment estimate."
        ),
    ),
)
_COMPARISON_ROWS = (
    "sequence",
    "activations_none",
    "activations_selective",
    "activations_full",
    "checkpointed_activations",
    "score_share",
    "per_sequence_activations",
)


def _segments(k: Any) -> str:
    """``1 segment``, ``8 segments``."""
    return f"{k} segment" if k == 1 else f"{k} segments"


class ActivationLike(ScenarioLike, Protocol):
    """What the activation view reads of its scenario, beyond every scenario's face."""

    @property
    def workload(self) -> Workload:
        """The ``workload`` field."""
        ...

    @property
    def micro_batch(self) -> int:
        """The ``micro_batch`` field."""
        ...

    @property
    def seq_len(self) -> int | None:
        """The ``seq_len`` field."""
        ...

    @property
    def checkpoint_segments(self) -> int | None:
        """The ``checkpoint_segments`` field."""
        ...

    @property
    def sequence(self) -> Any:
        """The context length the model uses."""
        ...


class ActivationView:
    """The presentation of an activation scenario (a mixin of :class:`ActivationMemoryScenario`)."""

    def sweep_quantity(self: ActivationLike) -> str:
        """What a sweep of this scenario plots and fits by default: selective recomputation's footprint."""
        return "activations_selective"

    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = _NOTES
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def default_title(self: ActivationLike) -> str:
        """``"GPT-2 XL activations, micro-batch 32 × 1024 tokens"``."""
        if self.is_sweep:
            return f"{self.workload.name} activations, a sweep over {', '.join(self.swept_fields())}"
        return f"{self.workload.name} activations, micro-batch {self.micro_batch} × {self.magnitude('sequence')} tokens"

    def headline(self: ActivationLike) -> Headline:
        """The footprint under each strategy (and with checkpoint segments, when given)."""
        if self.is_sweep:
            return Headline(self.default_title())
        parts = []
        for strategy in STRATEGIES:
            try:
                parts.append(f"{strategy} {format_bytes(self.magnitude('activations_' + strategy))}")
            except NotApplicableError:
                parts.append(f"{strategy} n/a")
        if self.checkpoint_segments is not None:
            segments = format_bytes(self.magnitude("checkpointed_activations"))
            parts.append(f"{_segments(self.checkpoint_segments)} {segments}")
        return Headline(f"{self.default_title()}: " + ", ".join(parts))

    def step_memory(self) -> Any:
        """Memory over one step, event by event (``mlsysim_nb.kinds.activation.figures``)."""
        from mlsysim_nb.kinds.activation.figures import segments_step

        return segments_step(self)

    def memory_chart(self: ActivationLike) -> MemoryChart:
        """One bar per recomputation strategy, the attention scores apart from the linear terms."""
        m = self.magnitude
        try:
            scores = m("score_activations")
        except NotApplicableError:
            scores = 0.0
        bars: list[tuple[str, dict[str, float]]] = [
            ("none", {"linear (per-token)": m("activations_selective"), "attention scores": scores}),
            ("selective", {"linear (per-token)": m("activations_selective")}),
            ("full", {"linear (per-token)": m("activations_full")}),
        ]
        if self.checkpoint_segments is not None:
            label = _segments(self.checkpoint_segments)
            bars.append((label, {"linear (per-token)": m("checkpointed_activations")}))
        return MemoryChart(tuple(bars), caption="no device: compare the strategies")

    def caveats(self: ActivationLike) -> tuple[str, ...]:
        """What a sliding window changes here; where the segment estimate differs from full recomputation."""
        return _window_caveat(self) + _segment_caveats(self)

    def method_inputs(self: ActivationLike) -> dict[str, Any]:
        """The example k of ``checkpoint_memory_units(k)``: the segments, else the nearest whole √L."""
        layers = int(self.workload.layers or 1)  # the activation model requires layers
        segments = self.checkpoint_segments  # an array in a sweep over it
        k = segments if segments is not None else max(1, round(layers**0.5))
        return {"checkpoints": k}

    def input_rows(self: ActivationLike) -> list[tuple[str, str, str]]:
        """The workload's shape, which the activation model reads."""
        return workload_rows(self.workload)

    def controls(self: ActivationLike) -> list[Any]:
        """Model, micro-batch, sequence, width, attention, accounting, feed-forward multiple, segments, strategy."""
        from mlsysim_nb.model import controls as c

        return [
            c.catalog_control(self, "workload"),
            c.field_control(self, "micro_batch"),
            # the control sets the length the model reads (s), the workload's context unless stated
            c.field_control(self, "seq_len", value=self.seq_len or self.sequence),
            c.field_control(self, "precision_bytes"),
            c.field_control(self, "attention"),
            c.field_control(self, "implementation"),
            c.field_control(self, "ffn_multiple"),
            # every k matters for the segment estimate, so a linear slider; 0 switches segments off
            c.field_control(
                self,
                "checkpoint_segments",
                value=self.checkpoint_segments or 0,
                low=0,
                bind=lambda s, v: {"checkpoint_segments": None if v == 0 else v},
            ),
            c.view_control(
                "strategy", "recomputation", STRATEGIES, steps={s: f'activations("{s}")' for s in STRATEGIES}
            ),
        ]


def _window_caveat(s: ActivationLike) -> tuple[str, ...]:
    """A model with sliding-window layers: the window caps the cache, not the saved bytes (measured on the CPU)."""
    if s.is_sweep or (s.workload.sliding_window is None and not s.workload.pattern):
        return ()
    try:
        kinds = s.workload.architecture().layer_kinds()
    except FieldError:  # a workload without what the layer table needs: its own refusal shows elsewhere
        return ()
    if all(layer.window is None for layer in kinds):
        return ()
    text = (
        "A sliding window caps the cache, not these bytes: eager attention still materialises and saves the "
        "masked s² scores, and a fused kernel skips the masked blocks' arithmetic but saves what it saves without "
        "a window (transformers' SDPA on a sliding layer keeps, besides, its b·s² mask and K and V for every head; "
        "measured on the CPU)."
    )
    return (text,)


def _segment_caveats(s: ActivationLike) -> tuple[str, ...]:
    """Where the segment estimate is not comparable with full recomputation, in words."""
    k, layers = s.checkpoint_segments, s.workload.layers
    if s.is_sweep or k is None or not layers:
        return ()
    full = format_bytes(s.magnitude("activations_full"))
    segmented = format_bytes(s.magnitude("checkpointed_activations"))
    if layers % k:
        per, left = layers // k, layers % k
        text = (
            f"{_segments(k)} do not divide the {layers} layers: the estimate counts {_segments(k)} of {per} "
            f"layer{'s' if per != 1 else ''} and leaves out the other {left} layer{'s' if left != 1 else ''}, "
            f"so it reads low ({segmented} against {full} for full recomputation). Really {left} of the "
            f"segments {'holds' if left == 1 else 'hold'} {per + 1} layers; compare only a k that divides {layers}."
        )
        return (text,)
    if s.magnitude("checkpointed_activations") > s.magnitude("activations_full"):
        text = (
            f"{_segments(k)} {'keeps' if k == 1 else 'keep'} more than full recomputation "
            f"({segmented} against {full}), and the two are "
            "not counted alike: full recomputation's figure holds only the layer inputs, while the segment "
            "estimate also holds the segment being rebuilt in the backward pass."
        )
        return (text,)
    return ()
