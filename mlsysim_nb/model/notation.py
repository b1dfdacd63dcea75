"""The notation table: how each quantity is written, in which base unit it is computed, and a label.

One row per quantity, inputs and results alike (d2l's discipline: one symbol
per idea, book-wide). The derivations, docstrings and charts read it; a test
checks that every formula and every name a formula reads has a row.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlsysim_nb import layers
from mlsysim_nb.formula import Symbol

__all__ = ["QUANTITIES", "SYMBOLS", "Quantity"]


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
    "adapted_matrices": _q("n", "mat", "", "adapted matrices per layer"),
    "adapter_in_dim": _q("d", "in", "", "adapter input width"),
    "adapter_out_dim": _q("d", "out", "", "adapter output width"),
    "at_batch_size": _q("B′", "", "", "another batch size"),
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
    "frozen_share": _q("φ", "frozen", "", "the weights' share of the state (frozen with adapters)"),
    "adapter_reduction_ceiling": _q("R", "max", "", "reduction ceiling"),
    "copies": _q("c", "", "", "state in weight copies"),
    "training_total": _q("M", "train", "byte", "state plus activations"),
    "training_copies": _q("c", "train", "", "training total in weight copies"),
    "fits": _q("fits", "", "", "state fits the device"),
    "training_fits": _q("fits", "train", "", "state and activations fit the device"),
    "has_activations": _q("has", "act", "", "activations given"),
    "adapter_checkpoint": _q("M", "ad,ckpt", "byte", "adapter checkpoint"),
    "adapter_update_traffic": _q("T", "ad,upd", "byte", "adapter-update traffic"),
    "adapter_update_time": _q("t", "ad,upd", "second", "adapter-update time"),
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
    "precision_bytes": _q("b", "act", "byte", "bytes per activation element"),
    "normalization_per_layer": _q("m", "norm", "byte", "normalization buffer per layer"),
    "ffn_multiple": _q("f", "", "", "feed-forward expansion"),
    "checkpoint_segments": _q("k", "", "", "checkpoint segments"),
    "checkpoints": _q("k", "", "", "checkpoints"),
    "tokens": _q("D", "", "", "tokens"),
    "per_token_constant": _q(
        str(layers.ffn_free_bytes()), "", "", "Korthikanti per-token bytes outside the MLP's wide tensors"
    ),
    "ffn_constant": _q(str(layers.ffn_bytes()), "", "", "Korthikanti bytes per unit of the feed-forward multiple"),
    "score_constant": _q(str(layers.score_bytes()), "", "", "Korthikanti score bytes"),
    "projection_tensors": _q(str(layers.projection_tensors()), "", "", "hidden-width projection tensors"),
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
