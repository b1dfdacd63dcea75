"""The physics: every equation of the two scenarios, once, as data.

Each quantity has a row in :data:`QUANTITIES` (its symbol, its base unit and
a short label) and, when it is computed, a :class:`~mlsysim_nb.formula.Formula`
in :data:`FORMULAS`. Scenario properties, their docstrings, ``help()``, the
text and HTML derivations and the sweeps are all generated from these two
tables. Magnitudes are in base units throughout: bytes, seconds, bytes per
second, FLOPs and plain counts.

The helpers at the bottom (``calc_activation_memory`` and friends) are small
pure functions over the same formulas, under the names the seeds use.

Sources
-------
* Korthikanti et al. (2022), "Reducing Activation Recomputation in Large
  Transformer Models", arXiv:2205.05198, Table 2 and Sec. 4: per layer a
  transformer stores ``s·b·h·(34 + 5·a·s/h)`` bytes of activations at 16 bits;
  ``34 = 11 + 19 + 4`` (attention block's linear tensors, MLP block, the two
  layer norms) and ``5 = 2 + 1 + 2`` (softmax input, dropout mask, dropout
  output of the ``a·s²`` attention scores, per ``h·s`` unit).
* Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1:
  ``2·P`` FLOPs per token forward, ``6·P`` for a training step; recomputing
  the forward pass adds ``2·P`` more (``8·P``).
* Hu et al. (2021), "LoRA", Sec. 4.1: a rank-``r`` update of a
  ``d_in × d_out`` matrix trains ``r·(d_in + d_out)`` parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlsysim_nb.formula import Case, Formula, Symbol

__all__ = [
    "FORMULAS",
    "KORTHIKANTI_PER_TOKEN_BYTES",
    "KORTHIKANTI_SCORE_BYTES",
    "QUANTITIES",
    "STRATEGIES",
    "SYMBOLS",
    "Quantity",
    "calc_activation_memory",
    "calc_checkpoint_memory_units",
    "calc_low_rank_update_params",
    "calc_transformer_decode_flops",
    "calc_transformer_training_flops",
    "evaluate",
]

#: Bytes of linear (per-token) activations per hidden element per layer at 16 bits:
#: attention block 11, MLP block 19, the two layer norms 4 (Korthikanti et al. 2022, Table 2).
KORTHIKANTI_PER_TOKEN_BYTES = 11 + 19 + 4
#: Bytes per stored attention-score element at 16 bits: softmax input 2,
#: dropout mask 1, dropout output 2 (Korthikanti et al. 2022, Sec. 4.1).
KORTHIKANTI_SCORE_BYTES = 2 + 1 + 2

#: The recomputation strategies :func:`calc_activation_memory` knows.
STRATEGIES = ("none", "selective", "full")


@dataclass(frozen=True)
class Quantity:
    """One named quantity: how it is written and in which base unit it is computed."""

    symbol: Symbol
    base: str  # the unit of its magnitude inside the model; "" for plain numbers
    label: str  # a few words for tables and chart legends


def _q(letter: str, sub: str, base: str, label: str) -> Quantity:
    return Quantity(Symbol(letter, sub), base, label)


#: The notation table: one row per quantity, inputs and results alike (d2l's discipline).
QUANTITIES: dict[str, Quantity] = {
    # -- inputs read from the workload and the hardware
    "parameters": _q("P", "", "", "model parameters"),
    "layers": _q("L", "", "", "layers"),
    "hidden_dim": _q("h", "", "", "hidden width"),
    "heads": _q("a", "", "", "attention heads"),
    "kv_heads": _q("a", "kv", "", "key/value heads"),
    "context_length": _q("s", "ctx", "", "workload context length"),
    "capacity": _q("C", "mem", "byte", "device memory capacity"),
    "bandwidth": _q("BW", "mem", "byte/second", "device memory bandwidth"),
    # -- training-state inputs
    "bytes_per_value": _q("b", "val", "byte", "bytes per weight or gradient value"),
    "optimizer_bytes_per_parameter": _q("b", "opt", "byte", "optimizer bytes per parameter"),
    "master_bytes_per_parameter": _q("b", "master", "byte", "master-copy bytes per parameter"),
    "batch_size": _q("B", "", "", "batch size"),
    "activations": _q("M", "act", "byte", "saved activations"),
    "adapter_parameters": _q("N", "stated", "", "stated adapter parameters"),
    "adapter_rank": _q("r", "", "", "adapter rank"),
    "adapted_matrices": _q("m", "", "", "adapted matrices per layer"),
    "adapter_in_dim": _q("d", "in", "", "adapter input width"),
    "adapter_out_dim": _q("d", "out", "", "adapter output width"),
    "at_batch_size": _q("B", "′", "", "another batch size"),
    "write_bandwidth": _q("BW", "write", "byte/second", "checkpoint write bandwidth"),
    # -- training-state results
    "weights": _q("M", "w", "byte", "weights"),
    "gradients": _q("M", "g", "byte", "gradients"),
    "optimizer_state": _q("M", "opt", "byte", "optimizer state"),
    "master_weights": _q("M", "master", "byte", "master weights"),
    "optimizer_values_per_parameter": _q("n", "opt", "", "optimizer values per parameter"),
    "bytes_per_trained_parameter": _q("b", "train", "byte", "bytes per trained parameter"),
    "adapter_count": _q("N", "ad", "", "adapter parameters"),
    "adapter_state": _q("M", "ad", "byte", "adapter state"),
    "adapter_weights": _q("M", "ad,w", "byte", "adapter weights"),
    "adapter_gradients": _q("M", "ad,g", "byte", "adapter gradients"),
    "adapter_master": _q("M", "ad,master", "byte", "adapter master copy"),
    "adapter_optimizer_state": _q("M", "ad,opt", "byte", "adapter optimizer state"),
    "adapter_fraction": _q("f", "ad", "", "adapter fraction of parameters"),
    "full_state": _q("M", "full", "byte", "full-tuning state"),
    "total": _q("M", "state", "byte", "parameter state"),
    "adapter_saved": _q("M", "saved", "byte", "state saved by adapters"),
    "adapter_reduction": _q("R", "ad", "", "adapter reduction"),
    "adapter_kept_share": _q("k", "ad", "", "share of full state kept"),
    "frozen_share": _q("φ", "frozen", "", "frozen base's share"),
    "adapter_reduction_ceiling": _q("R", "max", "", "reduction ceiling"),
    "copies": _q("c", "", "", "state in weight copies"),
    "training_total": _q("M", "train", "byte", "state plus activations"),
    "training_copies": _q("c", "train", "", "training total in weight copies"),
    "fits": _q("fits", "", "", "state fits the device"),
    "capacity_share": _q("u", "state", "", "share of device memory"),
    "training_capacity_multiple": _q("u", "train", "", "training total in device memories"),
    "resident_batch_limit": _q("B", "lim", "", "resident batch limit"),
    "max_resident_batch": _q("B", "res", "", "largest resident batch"),
    "checkpoint": _q("M", "ckpt", "byte", "checkpoint"),
    "updated_bytes_per_parameter": _q("b", "upd", "byte", "bytes of the updated weight copy"),
    "update_bytes_per_parameter": _q("b", "step", "byte", "update traffic per parameter"),
    "update_traffic": _q("T", "upd", "byte", "optimizer-update traffic"),
    "update_time": _q("t", "upd", "second", "optimizer-update time"),
    "activations_at": _q("M", "act,B′", "byte", "activations at another batch"),
    "checkpoint_write_time": _q("t", "ckpt", "second", "checkpoint write time"),
    # -- activation inputs
    "micro_batch": _q("b", "", "", "micro-batch"),
    "seq_len": _q("s", "given", "", "stated sequence length"),
    "precision_bytes": _q("p", "", "byte", "bytes per activation element"),
    "normalization_per_layer": _q("m", "norm", "byte", "normalization buffer per layer"),
    "ffn_multiple": _q("f", "", "", "feed-forward expansion"),
    "checkpoint_segments": _q("k", "", "", "checkpoint segments"),
    "checkpoints": _q("k", "", "", "checkpoints"),
    "tokens": _q("D", "", "", "tokens"),
    "per_token_constant": _q("34", "", "", "Korthikanti per-token bytes"),
    "score_constant": _q("5", "", "", "Korthikanti score bytes"),
    # -- activation results
    "sequence": _q("s", "", "", "sequence length"),
    "per_token_bytes_coefficient": _q("κ", "tok", "byte", "per-token coefficient"),
    "score_bytes_coefficient": _q("κ", "score", "byte", "attention-score coefficient"),
    "score_share": _q("φ", "score", "", "attention-score share"),
    "activations_none": _q("M", "none", "byte", "activations, no recomputation"),
    "activations_selective": _q("M", "sel", "byte", "activations, selective recomputation"),
    "activations_full": _q("M", "full rc", "byte", "activations, full recomputation"),
    "per_token_activations": _q("M", "tok", "byte", "per-token activations"),
    "per_sequence_activations": _q("M", "seq", "byte", "per-sequence activations"),
    "score_activations": _q("M", "score", "byte", "attention-score activations"),
    "segment_layers": _q("L", "seg", "", "layers per segment"),
    "segment_input": _q("M", "in", "byte", "one segment input"),
    "segment_inputs": _q("M", "inputs", "byte", "all segment inputs"),
    "live_segment": _q("M", "live", "byte", "live segment"),
    "checkpointed_activations": _q("M", "seg ckpt", "byte", "segment-checkpointed activations"),
    "projection_activations_per_layer": _q("m", "proj", "byte", "projection tensors per layer"),
    "ffn_activations_per_layer": _q("m", "ffn", "byte", "feed-forward tensor per layer"),
    "score_activations_per_layer": _q("m", "score", "byte", "attention scores per layer"),
    "line_items_per_layer": _q("m", "items", "byte", "line items per layer"),
    "line_items_total": _q("M", "items", "byte", "line items, all layers"),
    # FLOP counts are plain counts inside the model; the helpers attach the FLOP unit
    "training_flops": _q("F", "train", "", "training FLOPs"),
    "checkpointed_training_flops": _q("F", "train,rc", "", "training FLOPs with recomputation"),
    "decode_flops": _q("F", "fwd", "", "forward-pass FLOPs"),
    "forward_equivalents": _q("n", "fwd", "", "training work in forward passes"),
    "recompute_overhead": _q("ρ", "rc", "", "recompute overhead"),
    "recompute_forward_equivalents": _q("n", "fwd,rc", "", "work with recomputation in forward passes"),
    "checkpoint_memory_units": _q("u", "ckpt", "", "checkpoint memory in layer units"),
    "low_rank_update_params": _q("n", "LR", "", "low-rank update parameters"),
}

SYMBOLS: dict[str, Symbol] = {name: q.symbol for name, q in QUANTITIES.items()}

_F = Formula

_TRAINING = [
    _F("weights", "parameters * bytes_per_value", "Base-model weight storage.", "byte"),
    _F(
        "gradients",
        "parameters * bytes_per_value",
        "Full-model gradient storage.",
        "byte",
        note="Full-model even in adapter mode, as the seed defines it; `total` then uses the adapters' own gradients.",
    ),
    _F(
        "optimizer_state",
        "parameters * optimizer_bytes_per_parameter",
        "Full-model optimizer storage.",
        "byte",
        note="Full-model even in adapter mode, as the seed defines it.",
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
        note="Negative when the state alone already exceeds the device, as the seed's equation gives.",
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
        note="Full-model optimizer state even in adapter mode, as the seed defines it.",
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
        "per_token_constant * precision_bytes / 2",
        "Linear activation bytes per hidden element per layer, scaled from 16-bit to this width.",
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
        "4 * micro_batch * sequence * hidden_dim * precision_bytes",
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
    "per_token_constant": KORTHIKANTI_PER_TOKEN_BYTES,
    "score_constant": KORTHIKANTI_SCORE_BYTES,
}


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


# -- the seeds' helper functions ----------------------------------------------------


def _positive(name: str, value: Any, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        msg = f"{name} must be a positive number, got {value!r}"
        raise ValueError(msg)


def calc_activation_memory(  # noqa: PLR0917 - the seed's helper takes these positionally
    n_layers: int,
    seq_len: int,
    batch_size: int,
    hidden_dim: int,
    n_heads: int | None = None,
    precision_bytes: float = 2,
    strategy: str = "selective",
) -> Any:
    """Saved activations of a transformer in training (Korthikanti et al. 2022).

    Per layer at 16 bits: ``s·b·h·(34 + 5·a·s/h)`` bytes with no recomputation,
    ``34·s·b·h`` when the attention scores are recomputed (``selective``),
    ``2·s·b·h`` (the layer input) when the whole layer is (``full``);
    ``precision_bytes`` rescales from the paper's 2 bytes.

    >>> calc_activation_memory(48, 1024, 32, 1600, 25, 2, "full")
    <Quantity(5033164800, 'byte')>

    Raises
    ------
    ValueError
        For an unknown ``strategy`` (naming the valid ones), a non-positive
        size, or ``strategy="none"`` without ``n_heads``.
    """
    from mlsysim_nb.units import Q_

    if strategy not in STRATEGIES:
        msg = f"unknown activation strategy {strategy!r}; valid strategies are {', '.join(map(repr, STRATEGIES))}"
        raise ValueError(msg)
    for name, value in [
        ("n_layers", n_layers),
        ("seq_len", seq_len),
        ("batch_size", batch_size),
        ("hidden_dim", hidden_dim),
        ("precision_bytes", precision_bytes),
    ]:
        _positive(name, value)
    if strategy == "none" and n_heads is None:
        msg = "strategy 'none' stores the attention scores, so it needs n_heads"
        raise ValueError(msg)
    _positive("n_heads", n_heads, allow_none=True)
    inputs = {
        "layers": n_layers,
        "sequence": seq_len,
        "micro_batch": batch_size,
        "hidden_dim": hidden_dim,
        "heads": n_heads,
        "precision_bytes": precision_bytes,
    }
    return Q_(evaluate(f"activations_{strategy}", inputs), "byte")


def calc_checkpoint_memory_units(n_layers: int, checkpoints: int) -> float:
    """Activation memory of ``k`` evenly spaced checkpoints over ``L`` layers, in layers: ``k + L/k``.

    The forward pass keeps ``k`` checkpoint inputs; the backward pass rebuilds
    one segment of ``L/k`` layers at a time. The minimum is near ``k = √L``.

    >>> calc_checkpoint_memory_units(48, 4)
    16.0
    """
    _positive("n_layers", n_layers)
    _positive("checkpoints", checkpoints)
    return float(evaluate("checkpoint_memory_units", {"layers": n_layers, "checkpoints": checkpoints}))


def calc_transformer_training_flops(n_params: float, n_tokens: float, activation_checkpointing: bool = False) -> Any:
    """Training FLOPs of a dense transformer: ``6·P·D``, or ``8·P·D`` with activation checkpointing.

    >>> calc_transformer_training_flops(1.5e9, 1)
    <Quantity(9e+09, 'FLOP')>
    """
    from mlsysim_nb.units import Q_

    _positive("n_params", n_params)
    _positive("n_tokens", n_tokens)
    name = "checkpointed_training_flops" if activation_checkpointing else "training_flops"
    return Q_(evaluate(name, {"parameters": float(n_params), "tokens": n_tokens}), "FLOP")


def calc_transformer_decode_flops(n_params: float, n_tokens: float = 1) -> Any:
    """Forward-pass FLOPs: ``2·P·D`` (attention over the context is left out).

    >>> calc_transformer_decode_flops(1.5e9)
    <Quantity(3e+09, 'FLOP')>
    """
    from mlsysim_nb.units import Q_

    _positive("n_params", n_params)
    _positive("n_tokens", n_tokens)
    return Q_(evaluate("decode_flops", {"parameters": float(n_params), "tokens": n_tokens}), "FLOP")


def calc_low_rank_update_params(in_dim: int, out_dim: int, rank: int) -> int:
    """Trainable parameters of one rank-``r`` update of a ``d_in × d_out`` matrix: ``r·(d_in + d_out)``.

    >>> calc_low_rank_update_params(4096, 4096, 16)
    131072
    """
    for name, value in [("in_dim", in_dim), ("out_dim", out_dim), ("rank", rank)]:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            msg = f"{name} must be a positive integer, got {value!r}"
            raise ValueError(msg)
    inputs = {"adapter_rank": rank, "adapter_in_dim": in_dim, "adapter_out_dim": out_dim}
    return int(evaluate("low_rank_update_params", inputs))
