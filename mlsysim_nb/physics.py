"""The physics: every equation of the two scenarios, once, as data.

Each quantity has a row in :data:`~mlsysim_nb.model.notation.QUANTITIES` (its
symbol, its base unit and a short label) and, when it is computed, a
:class:`~mlsysim_nb.formula.Formula` in :data:`FORMULAS`. Scenario properties, their docstrings, ``help()``, the
text and HTML derivations and the sweeps are all generated from these two
tables. Magnitudes are in base units throughout: bytes, seconds, bytes per
second, FLOPs and plain counts.

The helper functions (``calc_activation_memory`` and friends) live in
:mod:`mlsysim_nb.helpers`, as small pure functions over these same formulas.

Sources
-------
* Korthikanti et al. (2022), "Reducing Activation Recomputation in Large
  Transformer Models", arXiv:2205.05198, Table 2 and Sec. 4: per layer a
  transformer stores ``s·b·h·(34 + 5·a·s/h)`` bytes of activations at 16 bits;
  ``34 = 11 + 19 + 4`` (attention block's linear tensors, MLP block, the two
  layer norms) and ``5 = 2 + 1 + 2`` (softmax input, dropout mask, dropout
  output of the ``a·s²`` attention scores, per ``h·s`` unit). The MLP's 19 is
  ``2 + 8 + 8 + 1`` (its input, the GeLU's input and output at width ``4h``,
  its dropout mask); with a feed-forward width of ``f·h`` the two wide tensors
  hold ``4f`` bytes, so the per-token coefficient is ``18 + 4f`` (34 at f = 4).
* Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1:
  ``2·P`` FLOPs per token forward, ``6·P`` for a training step; recomputing
  the forward pass adds ``2·P`` more (``8·P``).
* Hu et al. (2021), "LoRA", Sec. 4.1: a rank-``r`` update of a
  ``d_in × d_out`` matrix trains ``r·(d_in + d_out)`` parameters.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from mlsysim_nb import layers
from mlsysim_nb.formula import Case, Formula
from mlsysim_nb.model.notation import QUANTITIES, SYMBOLS, Quantity

__all__ = [
    "FORMULAS",
    "KORTHIKANTI_FFN_BYTES",
    "KORTHIKANTI_FFN_FREE_BYTES",
    "KORTHIKANTI_PER_TOKEN_BYTES",
    "KORTHIKANTI_SCORE_BYTES",
    "QUANTITIES",
    "STRATEGIES",
    "SYMBOLS",
    "Quantity",
    "evaluate",
    "register",
    "with_equations",
]

#: Bytes of linear (per-token) activations per hidden element per layer at 16 bits that do not depend on
#: the feed-forward width: attention block 11, the MLP's input and dropout mask 2 + 1, the two layer norms 4.
KORTHIKANTI_FFN_FREE_BYTES = layers.ffn_free_bytes()
#: Bytes per hidden element and per unit of the feed-forward multiple f: the GeLU's input and output,
#: each f·h wide at 2 bytes (Korthikanti's MLP has f = 4, hence its 8 + 8).
KORTHIKANTI_FFN_BYTES = layers.ffn_bytes()
#: Bytes of linear (per-token) activations per hidden element per layer at 16 bits with Korthikanti's 4h MLP:
#: attention block 11, MLP block 19, the two layer norms 4 (Korthikanti et al. 2022, Table 2): 18 + 4·4.
KORTHIKANTI_PER_TOKEN_BYTES = layers.per_token_bytes()
#: Bytes per stored attention-score element at 16 bits: softmax input 2,
#: dropout mask 1, dropout output 2 (Korthikanti et al. 2022, Sec. 4.1).
KORTHIKANTI_SCORE_BYTES = layers.score_bytes()
#: The hidden-width inputs of attention's products (Q, K, V, the output projection's), the illustrative line item.
PROJECTION_TENSORS = layers.projection_tensors()

#: The recomputation strategies :func:`~mlsysim_nb.helpers.calc_activation_memory` knows.
STRATEGIES = ("none", "selective", "full")

_F = Formula

_TRAINING = [
    _F("weights", "parameters * bytes_per_value", "Base-model weight storage.", "byte"),
    _F(
        "gradients",
        "parameters * bytes_per_value",
        "Full-model gradient storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it; `total` then uses the adapters' own gradients.",
    ),
    _F(
        "optimizer_state",
        "parameters * optimizer_bytes_per_parameter",
        "Full-model optimizer storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it.",
    ),
    _F(
        "optimizer_values_per_parameter",
        "optimizer_bytes_per_parameter / bytes_per_value",
        "Optimizer bytes per parameter in units of the weight-value width.",
    ),
    _F(
        "master_weights",
        "parameters * master_bytes_per_parameter",
        "Full-model master-weight storage; zero when no master copy is configured.",
        "byte",
    ),
    _F(
        "bytes_per_trained_parameter",
        "2 * bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter",
        "Weights, gradients, master copy and optimizer state for one trained parameter.",
        "byte",
    ),
    _F(
        "adapter_count",
        doc="Trainable adapter parameters, stated or from the adapter shape.",
        cases=(
            Case("stated", "adapter_parameters", when="adapter_stated"),
            Case("from the shape", "layers * adapted_matrices * low_rank_update_params"),
        ),
    ),
    _F(
        "low_rank_update_params",
        "adapter_rank * (adapter_in_dim + adapter_out_dim)",
        "Parameters of one rank-r update of a d_in x d_out matrix.",
    ),
    _F("adapter_state", "adapter_count * bytes_per_trained_parameter", "Everything the adapters hold.", "byte"),
    _F("adapter_weights", "adapter_count * bytes_per_value", "Adapter weight storage.", "byte"),
    _F("adapter_gradients", "adapter_count * bytes_per_value", "Adapter gradient storage.", "byte"),
    _F("adapter_master", "adapter_count * master_bytes_per_parameter", "Adapter master-copy storage.", "byte"),
    _F(
        "adapter_optimizer_state",
        "adapter_count * optimizer_bytes_per_parameter",
        "Adapter optimizer-state storage.",
        "byte",
    ),
    _F("adapter_fraction", "adapter_count / parameters", "Adapter parameters relative to all base parameters."),
    _F(
        "full_state",
        "weights + gradients + optimizer_state + master_weights",
        "State if every parameter trained: the same recipe with no adapters.",
        "byte",
    ),
    _F(
        "total",
        doc="Parameter state: frozen base weights plus adapter state, or the full training state.",
        unit="byte",
        cases=(
            Case("adapter mode", "weights + adapter_state", when="adapter_mode"),
            Case("full tuning", "weights + gradients + optimizer_state + master_weights"),
        ),
    ),
    _F("adapter_saved", "full_state - total", "State avoided by the adapters relative to full tuning.", "byte"),
    _F("adapter_reduction", "full_state / total", "Full-tuning state over this run's state."),
    _F("adapter_kept_share", "total / full_state", "Fraction of the full-tuning state this run keeps."),
    _F("frozen_share", "weights / total", "The base weights' share of the state."),
    _F(
        "adapter_reduction_ceiling",
        "bytes_per_trained_parameter / bytes_per_value",
        "The reduction as adapters shrink to nothing: bytes per trained over per frozen parameter.",
    ),
    _F("copies", "total / weights", "Total state in units of the weights."),
    _F("training_total", "total + activations", "State plus saved activations.", "byte"),
    _F("training_copies", "training_total / weights", "Training total in units of the weights."),
    _F(
        "fits",
        "total <= capacity",
        "Whether the parameter state alone fits the device; false without hardware.",
    ),
    _F(
        "training_fits",
        doc="Whether the whole run fits the device: the state plus the saved activations, when they are given.",
        cases=(
            Case("with activations", "training_total <= capacity", when="has_activations"),
            Case("state only", "total <= capacity"),
        ),
    ),
    _F("capacity_share", "total / capacity", "State before activations as a share of device memory."),
    _F(
        "training_capacity_multiple",
        "training_total / capacity",
        "State and saved activations in units of device memory.",
    ),
    _F(
        "resident_batch_limit",
        "(capacity - total) / (activations / batch_size)",
        "Sequences whose activations fit beside the state in device memory.",
        note="Negative when the state alone already exceeds the device: the equation is not clamped.",
    ),
    _F(
        "max_resident_batch",
        "floor(resident_batch_limit)",
        "Integer floor of the resident batch limit, not clamped at zero.",
        note="Not clamped: a negative value says by how many sequences the state alone overflows.",
    ),
    _F(
        "checkpoint",
        "weights + master_weights + optimizer_state",
        "A resumable checkpoint: weights, master copy and optimizer state; gradients are recomputed.",
        "byte",
        note="Full-model optimizer state even in adapter mode, as the model defines it; see adapter_checkpoint.",
    ),
    _F(
        "updated_bytes_per_parameter",
        doc="Bytes of the weight copy the optimizer updates: the master copy if there is one.",
        unit="byte",
        cases=(
            Case("master copy", "master_bytes_per_parameter", when="has_master"),
            Case("no master copy", "bytes_per_value"),
        ),
    ),
    _F(
        "update_bytes_per_parameter",
        "bytes_per_value + 2 * updated_bytes_per_parameter + 2 * optimizer_bytes_per_parameter",
        "Bytes one optimizer update moves per parameter: read the gradient, read and write "
        "the updated weights and the optimizer state.",
        "byte",
    ),
    _F(
        "update_traffic",
        "update_bytes_per_parameter * parameters",
        "Full-model optimizer-update traffic.",
        "GB",
    ),
    _F(
        "update_time",
        "update_traffic / bandwidth",
        "The optimizer update at the device's memory bandwidth (elementwise, bandwidth-bound).",
        "ms",
    ),
    _F(
        "adapter_checkpoint",
        "adapter_count * (bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter)",
        "What an adapter run must save to resume: the adapters' weights, master copy and optimizer state "
        "(the frozen base is already on disk).",
        "GB",
    ),
    _F(
        "adapter_update_traffic",
        "update_bytes_per_parameter * adapter_count",
        "Optimizer-update traffic of an adapter run: only the adapters are updated.",
        "GB",
    ),
    _F(
        "adapter_update_time",
        "adapter_update_traffic / bandwidth",
        "The adapters' optimizer update at the device's memory bandwidth.",
        "ms",
    ),
    _F(
        "activations_at",
        "activations * at_batch_size / batch_size",
        "Saved activations at another batch size, scaled linearly.",
        "byte",
    ),
    _F("checkpoint_write_time", "checkpoint / write_bandwidth", "Seconds to write the checkpoint.", "second"),
]

_ACTIVATION = [
    _F(
        "sequence",
        doc="Context length used by the activation model.",
        cases=(
            Case("stated", "seq_len", when="seq_given"),
            Case("from the workload", "context_length"),
        ),
    ),
    _F(
        "per_token_bytes_coefficient",
        "(per_token_constant + ffn_constant * ffn_multiple) * precision_bytes / 2",
        "Linear activation bytes per hidden element per layer, scaled from 16-bit to this width.",
        note="18 + 4f at 16 bits: 34 with Korthikanti's 4h MLP; the two f·h-wide MLP tensors grow with f.",
    ),
    _F(
        "score_bytes_coefficient",
        "score_constant * heads * sequence / hidden_dim * precision_bytes / 2",
        "Attention-score bytes per hidden element per layer, on the same footing.",
    ),
    _F(
        "score_share",
        "score_bytes_coefficient / (per_token_bytes_coefficient + score_bytes_coefficient)",
        "Attention-score fraction of the unrecomputed activations.",
    ),
    _F(
        "activations_none",
        "layers * sequence * micro_batch * hidden_dim * (per_token_bytes_coefficient + score_bytes_coefficient)",
        "Saved activations with no recomputation: every tensor, attention scores included.",
        "byte",
    ),
    _F(
        "activations_selective",
        "layers * sequence * micro_batch * hidden_dim * per_token_bytes_coefficient",
        "Saved activations with selective recomputation: the attention scores are rebuilt.",
        "byte",
    ),
    _F(
        "activations_full",
        "layers * sequence * micro_batch * hidden_dim * precision_bytes",
        "Saved activations with full recomputation: only each layer's input is kept.",
        "byte",
    ),
    _F(
        "per_token_activations",
        "activations_selective",
        "Activations that grow in proportion to sequence length (everything but the scores), "
        "for the whole micro-batch.",
        "GB",
    ),
    _F(
        "per_sequence_activations",
        "per_token_activations / micro_batch",
        "Per-token activations of one sequence: the slope against batch size.",
        "GB",
    ),
    _F(
        "score_activations",
        "activations_none - activations_selective",
        "Stored attention scores, removed by selective recomputation.",
        "GB",
    ),
    _F(
        "segment_layers",
        "layers // checkpoint_segments",
        "Layers in each checkpoint segment (floor division; leftover layers are not represented).",
    ),
    _F(
        "segment_input",
        "micro_batch * sequence * hidden_dim * precision_bytes",
        "One segment boundary's kept hidden-state tensor.",
        "MB",
    ),
    _F("segment_inputs", "checkpoint_segments * segment_input", "Kept inputs of all segments.", "GB"),
    _F(
        "live_segment",
        "per_token_activations / layers * segment_layers",
        "One segment's per-token activations, rebuilt in the backward pass.",
        "GB",
    ),
    _F(
        "checkpointed_activations",
        "segment_inputs + live_segment",
        "Segment inputs plus one live rebuilt segment (its input counted twice: conservative).",
        "GB",
    ),
    _F(
        "projection_activations_per_layer",
        "projection_tensors * micro_batch * sequence * hidden_dim * precision_bytes",
        "Illustrative saved state of four hidden-width projection tensors.",
        "MB",
    ),
    _F(
        "ffn_activations_per_layer",
        "micro_batch * sequence * ffn_multiple * hidden_dim * precision_bytes",
        "Illustrative expanded feed-forward activation tensor.",
        "MB",
    ),
    _F(
        "score_activations_per_layer",
        "score_activations / layers",
        "Average stored attention-score footprint per layer.",
        "MB",
    ),
    _F(
        "line_items_per_layer",
        "projection_activations_per_layer + ffn_activations_per_layer + score_activations_per_layer"
        " + normalization_per_layer",
        "Sum of the explicit tensors of one layer (not forced to equal the aggregate estimate).",
        "MB",
    ),
    _F("line_items_total", "line_items_per_layer * layers", "Explicit line items across the model.", "GB"),
    _F("training_flops", "6 * parameters * tokens", "Training FLOPs: 2P forward plus 4P backward per token."),
    _F(
        "checkpointed_training_flops",
        "8 * parameters * tokens",
        "Training FLOPs with full recomputation: one more 2P forward pass per token.",
    ),
    _F("decode_flops", "2 * parameters * tokens", "Forward-pass (decode) FLOPs: 2P per token."),
    _F(
        "forward_equivalents",
        "training_flops / decode_flops",
        "Training arithmetic in forward-pass units (context attention omitted).",
    ),
    _F(
        "recompute_overhead",
        "checkpointed_training_flops / training_flops - 1",
        "Relative arithmetic added by full recomputation (a work ratio, not measured runtime).",
    ),
    _F(
        "recompute_forward_equivalents",
        "forward_equivalents * (1 + recompute_overhead)",
        "Training arithmetic with full recomputation, in forward-pass units.",
    ),
    _F(
        "checkpoint_memory_units",
        "checkpoints + layers / checkpoints",
        "Activation memory with k evenly spaced checkpoints, in layer units: k + L/k.",
    ),
]

#: Every formula, by the name of the quantity it defines.
FORMULAS: dict[str, Formula] = {f.name: f for f in (*_TRAINING, *_ACTIVATION)}

#: The names each scenario's derivation is built from (in reading order).
TRAINING_NAMES = tuple(f.name for f in _TRAINING)
ACTIVATION_NAMES = tuple(f.name for f in _ACTIVATION)

_CONSTANTS = {
    "per_token_constant": KORTHIKANTI_FFN_FREE_BYTES,
    "ffn_constant": KORTHIKANTI_FFN_BYTES,
    "score_constant": KORTHIKANTI_SCORE_BYTES,
    "projection_tensors": PROJECTION_TENSORS,
}


def register(formulas: Iterable[Formula], quantities: Mapping[str, Quantity]) -> tuple[str, ...]:
    """Add a scenario kind's formulas and notation rows to the tables; returns the formula names in order.

    A new kind of scenario declares its equations in its own module and calls
    this once at import. A name that is already taken, or a formula with no
    notation row, is refused, so two kinds cannot silently redefine each
    other's quantities.
    """
    formulas = tuple(formulas)
    taken = sorted({f.name for f in formulas} & FORMULAS.keys() | quantities.keys() & QUANTITIES.keys())
    if taken:
        msg = f"already defined: {', '.join(taken)}"
        raise ValueError(msg)
    known = QUANTITIES.keys() | quantities.keys()
    unknown = sorted({f.name for f in formulas} - known)
    if unknown:
        msg = f"no notation row for {', '.join(unknown)}: give each a Quantity"
        raise ValueError(msg)
    QUANTITIES.update(quantities)
    SYMBOLS.update({name: q.symbol for name, q in quantities.items()})
    FORMULAS.update({f.name: f for f in formulas})
    return tuple(f.name for f in formulas)


def evaluate(name: str, inputs: Mapping[str, Any]) -> Any:
    """Evaluate formula ``name`` on base-unit magnitudes, resolving derived inputs.

    >>> evaluate("weights", {"parameters": 1.5e9, "bytes_per_value": 4})
    6000000000.0
    """
    cache: dict[str, Any] = dict(_CONSTANTS)
    cache.update(inputs)

    def get(key: str) -> Any:
        if key not in cache:
            if key not in FORMULAS:
                msg = f"{name} needs {key!r}, which was not given"
                raise KeyError(msg)
            cache[key] = FORMULAS[key].evaluate(get)
        return cache[key]

    return get(name)


Function = TypeVar("Function", bound=Callable[..., Any])


def with_equations(*names: str) -> Callable[[Function], Function]:
    """Decorator: append the equations of ``FORMULAS[name]`` to a function's docstring.

    Methods and helpers that take arguments document their equations this way,
    from the single source, instead of retyping them.
    """

    def decorate(fn: Function) -> Function:
        lines = [line for name in names for line in FORMULAS[name].equations(SYMBOLS)]
        block = "\n".join(f"    {line}" for line in lines)
        # cleandoc: method docstrings are indented deeper than functions'; normalise before appending
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\nEquation::\n\n" + block + "\n"
        return fn

    return decorate
