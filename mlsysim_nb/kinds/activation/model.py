"""``ActivationMemoryScenario``: the saved activations of a transformer under each recomputation strategy."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.activation.physics import EQUATIONS, STRATEGIES
from mlsysim_nb.kinds.activation.view import ActivationView
from mlsysim_nb.model.equations import Equations, with_equations
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.model.knob import VALUE_WIDTHS, knob, record
from mlsysim_nb.model.scenario import Scenario, derived, is_array
from mlsysim_nb.records.workloads import Workload, check_workload

__all__ = ["ActivationMemoryScenario"]


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
        None, kind="count", symbol="s_given", label="stated sequence length", high=2**24, optional=True, control="log"
    )
    precision_bytes: float = knob(
        2, kind="number", symbol="b_act", unit="byte", label="bytes per activation element", high=8,
        control="dropdown", choices=VALUE_WIDTHS,
    )  # fmt: skip
    normalization_per_layer: Any = knob(
        None, kind="bytes", symbol="m_norm", label="normalization buffer per layer", positive=False, high=1e15,
        optional=True,
    )  # fmt: skip
    ffn_multiple: int = knob(4, kind="count", symbol="f", label="feed-forward expansion", high=64, control="int")
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
        if segments is not None and np.any(np.asarray(segments) > w.layers):
            got = int(np.max(segments))
            raise FieldError(o, "checkpoint_segments", f"must be at most {w.layers} (the model's layers), got {got}")
        norm_bytes = inputs["normalization_per_layer"]
        env: dict[str, Any] = {
            **inputs,
            "parameters": float(w.parameters.magnitude),
            "tokens": 1,
            "layers": w.layers,
            "hidden_dim": w.hidden_dim,
            "heads": w.heads,
            "context_length": w.context_length,
            "seq_given": inputs["seq_len"] is not None,
            "normalization_per_layer": 0 if norm_bytes is None else norm_bytes,
        }
        needs = {
            "heads": f"workload.heads to size the attention scores ({w.name} gives none)",
            "checkpoint_segments": "checkpoint_segments (this scenario has none)",
        }
        self._set_env(env, needs)

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
    forward_equivalents = derived("forward_equivalents")
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
        if strategy not in STRATEGIES:
            msg = f"unknown activation strategy {strategy!r}; valid strategies are {', '.join(map(repr, STRATEGIES))}"
            raise ValueError(msg)
        name = f"activations_{strategy}"
        return self.wrapper(name)(self._env.get(name))

    @with_equations("checkpoint_memory_units")
    def checkpoint_memory_units(self, checkpoints: int) -> Any:
        """Activation memory with ``checkpoints`` evenly spaced checkpoints, in layer units."""
        o = f"{type(self).__name__}.checkpoint_memory_units"
        k = check_count(o, "checkpoints", checkpoints, maximum=self.workload.layers)
        value = self._env.with_inputs({"checkpoints": k}).get("checkpoint_memory_units")
        return value if is_array(value) else float(value)
