"""``ActivationMemoryScenario``: the saved activations of a transformer under each recomputation strategy."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.kinds.activation import table
from mlsysim_nb.kinds.activation.physics import EQUATIONS, STRATEGIES
from mlsysim_nb.kinds.activation.view import ActivationView
from mlsysim_nb.model.equations import Equations, with_equations
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.model.knob import CONTEXT_WINDOW, VALUE_WIDTHS, knob, record
from mlsysim_nb.model.scenario import Scenario, derived, is_array
from mlsysim_nb.records.workloads import Workload, check_workload
from mlsysim_nb.units import Q_

__all__ = ["ActivationMemoryScenario"]

_ATTENTIONS = (("eager (scores kept)", "eager"), ("fused (FlashAttention)", "fused"))
_IMPLEMENTATIONS = (("Megatron (the paper)", "megatron"), ("Hugging Face transformers", "transformers"))


def _all_equal(value: Any, expected: Any) -> bool:
    """Whether ``value`` is ``expected`` in every configuration (one value, or each of a swept field's)."""
    if type(value) is type(expected):
        return bool(value == expected)
    return bool(np.all(np.asarray(value) == expected))


def _any_equal(value: Any, expected: Any) -> bool:
    """Whether ``value`` is ``expected`` in some configuration (one value, or one of a swept field's)."""
    if type(value) is type(expected):
        return bool(value == expected)
    return bool(np.any(np.asarray(value) == expected))


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ActivationMemoryScenario(ActivationView, Scenario):
    """Activation memory of ``workload`` at a micro-batch, under each recomputation strategy.

    Korthikanti et al. (2022): per layer, ``s·b·h·(34 + 5·a·s/h)`` bytes at
    16 bits with nothing recomputed and a ``4h`` MLP; with ``ffn_multiple = f``
    the MLP's two ``f·h``-wide tensors make the 34 ``18 + 4f`` (50 at f = 8).
    The attention scores (the ``5·a·s/h`` term) are dropped by selective
    recomputation, and full recomputation keeps only each layer's input.
    Checkpoint segments keep ``k`` segment inputs and rebuild one segment at a
    time.

    The coefficients are sums over the layer table (:mod:`mlsysim_nb.layers`)
    for the workload's architecture: ``attention`` (``"eager"``, ``"fused"``)
    and ``implementation`` (``"megatron"``, ``"transformers"``) choose its rows.
    A reference-style workload in the paper's accounting is counted as the
    reference counts it (34 and 5). ``activations(strategy)`` is the layers';
    ``output_activations`` the output layer and loss (and the rows kept once
    per model); ``model_activations(strategy)`` both; ``layer_activations`` and
    ``layer_lines`` one layer.

    Assumptions: transformer layers share geometry. Aggregate Korthikanti-style
    coefficients and explicit tensor line items are separate approximations;
    segment sizes use integer division.
    Excludes: allocator reserves, runtime workspaces, unequal layer shapes, and
    leftover segment layers are absent from the simple segment estimate.

    Examples
    --------
    >>> from mlsysim_nb import Scenarios
    >>> case = Scenarios.Gpt3ActivationsMicrobatch4
    >>> round(case.sequence, 4)
    2048
    """

    workload: Workload = record(label="model")
    micro_batch: int = knob(kind="count", symbol="b", label="micro-batch", high=2**20, control="log")
    seq_len: int | None = knob(
        None,
        kind="count",
        symbol="s_given",
        label="sequence length",
        high=2**24,
        optional=True,
        control="log",
        within=CONTEXT_WINDOW,
    )
    precision_bytes: float = knob(
        2, kind="number", symbol="b_act", unit="byte", label="bytes per activation element", high=8,
        control="dropdown", choices=VALUE_WIDTHS,
    )  # fmt: skip
    normalization_per_layer: Any = knob(
        None, kind="bytes", symbol="m_norm", label="normalization buffer per layer", positive=False, high=1e15,
        optional=True, least=0,
    )  # fmt: skip
    ffn_multiple: int = knob(4, kind="count", symbol="f", label="feed-forward expansion", high=64, control="int")
    attention: str = knob(
        "eager", kind="choice", label="attention kernel", control="dropdown", choices=_ATTENTIONS,
        help="eager keeps the a·s² scores (softmax, dropout); fused (FlashAttention, SDPA) keeps a log-sum-exp per row",
    )  # fmt: skip
    implementation: str = knob(
        "megatron", kind="choice", label="accounting", control="dropdown", choices=_IMPLEMENTATIONS,
        help="megatron: Korthikanti et al.'s fused-kernel count; transformers: what Hugging Face's modules keep",
    )  # fmt: skip
    checkpoint_segments: int | None = knob(
        None, kind="count", symbol="k", label="checkpoint segments", high=2**16, optional=True, control="int",
        help="0 = no segment checkpointing",
    )  # fmt: skip
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = EQUATIONS

    def __post_init__(self) -> None:
        o = type(self).__name__
        w = check_workload(o, self.workload)
        missing = [k for k in ("layers", "hidden_dim") if getattr(w, k) is None]  # what the activation model reads
        if missing:
            msg = f"the activation model needs a transformer's {' and '.join(missing)}; {w.name} has none"
            raise FieldError(o, "workload", msg)
        inputs = self._check_fields()
        if inputs["seq_len"] is None and w.context_length is None:
            raise FieldError(o, "seq_len", f"is required: {w.name} gives no context_length to fall back on")
        segments = inputs["checkpoint_segments"]
        layers: Any = w.layers  # given: checked above
        if segments is not None and (segments > layers if type(segments) is int else np.any(segments > layers)):
            got = int(np.max(segments))
            raise FieldError(o, "checkpoint_segments", f"must be at most {w.layers} (the model's layers), got {got}")
        self._check_architecture(o, w, inputs)
        norm_bytes = inputs["normalization_per_layer"]
        sequence = inputs["seq_len"] if inputs["seq_len"] is not None else w.context_length
        outside = None if w.vocab_size is None else table.outside_bytes(w, inputs, sequence)
        env: dict[str, Any] = {
            **inputs,
            **table.coefficients(w, inputs),
            "parameters": float(w.parameters.magnitude),
            "tokens": 1,
            "layers": w.layers,
            "hidden_dim": w.hidden_dim,
            "heads": w.heads,
            "context_length": w.context_length,
            "seq_given": inputs["seq_len"] is not None,
            "segments_given": segments is not None,
            "normalization_per_layer": 0 if norm_bytes is None else norm_bytes,
            "outside_layer_bytes": outside,
            "has_output": outside is not None,
            "reference_layer": _all_equal(inputs["implementation"], "megatron") and w.reference_style,
        }
        needs = {
            "heads": f"workload.heads to size the attention scores ({w.name} gives none)",
            "checkpoint_segments": "checkpoint_segments (this scenario has none)",
            "outside_layer_bytes": f"workload.vocab_size to size the output layer ({w.name} gives none)",
        }
        self._set_env(env, needs)

    @staticmethod
    def _check_architecture(owner: str, w: Workload, inputs: dict[str, Any]) -> None:
        """What the layer table needs of the workload for the chosen attention, accounting and MLP width."""
        if w.heads is None and (_any_equal(inputs["attention"], "fused") or not w.reference_style):
            msg = f"the layer table needs the workload's heads for this layer; {w.name} gives none"
            raise FieldError(owner, "workload", msg)
        if w.ffn_dim is not None and not _all_equal(inputs["ffn_multiple"], 4):
            msg = (
                f"sets the MLP width only for a workload that states none; {w.name} gives ffn_dim = {w.ffn_dim:,} "
                "(leave ffn_multiple at 4, or change the workload's ffn_dim)"
            )
            raise FieldError(owner, "ffn_multiple", msg)

    def field_bounds(self, name: str) -> tuple[float, float | None]:
        """A field's accepted range here: its declaration's, with segments limited by the model's layers."""
        low, high = super().field_bounds(name)
        if name == "checkpoint_segments":
            return low, self.workload.layers
        return low, high

    sequence = derived("sequence")
    per_token_bytes_coefficient = derived("per_token_bytes_coefficient")
    score_bytes_coefficient = derived("score_bytes_coefficient")
    score_share = derived("score_share")
    per_token_activations = derived("per_token_activations")
    per_sequence_activations = derived("per_sequence_activations")
    score_activations = derived("score_activations")
    segment_layers = derived("segment_layers")
    segment_input = derived("segment_input")
    segment_inputs = derived("segment_inputs")
    live_segment = derived("live_segment")
    checkpointed_activations = derived("checkpointed_activations")
    projection_activations_per_layer = derived("projection_activations_per_layer")
    ffn_activations_per_layer = derived("ffn_activations_per_layer")
    score_activations_per_layer = derived("score_activations_per_layer")
    line_items_per_layer = derived("line_items_per_layer")
    line_items_total = derived("line_items_total")
    output_activations = derived("output_activations")
    forward_equivalents = derived("forward_equivalents")
    rerun_fraction = derived("rerun_fraction")
    checkpointed_training_flops = derived("checkpointed_training_flops")
    recompute_overhead = derived("recompute_overhead")
    recompute_forward_equivalents = derived("recompute_forward_equivalents")

    @with_equations("activations_none", "activations_selective", "activations_full")
    def activations(self, strategy: str) -> Any:
        """Activation footprint under a recomputation strategy: ``"none"``, ``"selective"`` or ``"full"``.

        Raises
        ------
        ValueError
            For an unknown strategy, listing the valid ones.
        """
        return self._strategy("activations", strategy)

    @with_equations("layer_activations_none", "layer_activations_selective", "layer_activations_full")
    def layer_activations(self, strategy: str) -> Any:
        """Bytes one decoder layer saves under a recomputation strategy (``activations(strategy)`` over the layers).

        Raises
        ------
        ValueError
            For an unknown strategy, listing the valid ones.
        """
        return self._strategy("layer_activations", strategy)

    @with_equations("model_activations_none", "model_activations_selective", "model_activations_full")
    def model_activations(self, strategy: str) -> Any:
        """The whole model's saved activations: ``activations(strategy)`` plus ``output_activations``.

        Raises
        ------
        ValueError
            For an unknown strategy, listing the valid ones.
        """
        return self._strategy("model_activations", strategy)

    def layer_lines(self, strategy: str = "none") -> dict[str, Any]:
        """The layer table's rows one decoder layer keeps under ``strategy``, by label, in MB.

        They sum to ``layer_activations(strategy)``: the rows of this workload, attention and implementation.

        Raises
        ------
        ValueError
            For an unknown strategy, listing the valid ones.
        NotApplicableError
            For a sweep: the rows are listed for one scenario.
        """
        self._strategy("layer_activations", strategy)  # the strategy is checked, as activations() checks it
        if self.is_sweep:
            raise NotApplicableError("layer_lines", "one scenario (this one is a sweep over " +
                                     ", ".join(self.swept_fields()) + ")")  # fmt: skip
        inputs = {k: getattr(self, k) for k in ("attention", "implementation", "ffn_multiple", "micro_batch")}
        inputs["precision_bytes"] = self.magnitude("precision_bytes")
        rows = table.layer_lines(self.workload, inputs, int(self.magnitude("sequence")), strategy)
        return {label: Q_(value, "byte").to("MB") for label, value in rows}

    def _strategy(self, quantity: str, strategy: str) -> Any:
        if strategy not in STRATEGIES:
            msg = f"unknown activation strategy {strategy!r}; valid strategies are {', '.join(map(repr, STRATEGIES))}"
            raise ValueError(msg)
        name = f"{quantity}_{strategy}"
        return self.wrapper(name)(self._env.get(name))

    @with_equations("checkpoint_memory_units")
    def checkpoint_memory_units(self, checkpoints: int) -> Any:
        """Activation memory with ``checkpoints`` evenly spaced checkpoints, in layer units."""
        o = f"{type(self).__name__}.checkpoint_memory_units"
        k = check_count(o, "checkpoints", checkpoints, maximum=self.workload.layers)
        value = self._env.with_inputs({"checkpoints": k}).get("checkpoint_memory_units")
        return value if is_array(value) else float(value)
