"""The equations of the activation kind, once, as data: a transformer's saved activations and the recompute arithmetic.

Each formula is written with the symbol, label and base unit of the quantity it computes
(:func:`~mlsysim_nb.model.equations.defined`); :data:`NOTATION` writes the other names: the layer table's
constants (its sums, from :mod:`mlsysim_nb.physics`), the flag the scenario sets and its methods'
arguments. :data:`EQUATIONS` is the value :class:`~mlsysim_nb.kinds.activation.model.ActivationMemoryScenario`
reads (and the helper functions of :mod:`mlsysim_nb.helpers` evaluate).

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
"""

from __future__ import annotations

from mlsysim_nb.formula import Case, Symbol
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity
from mlsysim_nb.physics import (
    KORTHIKANTI_FFN_BYTES,
    KORTHIKANTI_FFN_FREE_BYTES,
    KORTHIKANTI_SCORE_BYTES,
    PROJECTION_TENSORS,
    STRATEGIES,
)

__all__ = ["CONSTANTS", "EQUATIONS", "NOTATION", "STRATEGIES"]

_D = defined

_ACTIVATION = [
    _D(
        "sequence",
        doc="Context length used by the activation model.",
        cases=(
            Case("stated", "seq_len", when="seq_given"),
            Case("from the workload", "context_length"),
        ),
        symbol="s",
        label="sequence length",
    ),
    _D(
        "per_token_bytes_coefficient",
        "(per_token_constant + ffn_constant * ffn_multiple) * precision_bytes / 2",
        "Linear activation bytes per hidden element per layer, scaled from 16-bit to this width.",
        note="18 + 4f at 16 bits: 34 with Korthikanti's 4h MLP; the two f·h-wide MLP tensors grow with f.",
        symbol="κ_tok",
        label="per-token coefficient",
        base="byte",
    ),
    _D(
        "score_bytes_coefficient",
        "score_constant * heads * sequence / hidden_dim * precision_bytes / 2",
        "Attention-score bytes per hidden element per layer, on the same footing.",
        symbol="κ_score",
        label="attention-score coefficient",
        base="byte",
    ),
    _D(
        "score_share",
        "score_bytes_coefficient / (per_token_bytes_coefficient + score_bytes_coefficient)",
        "Attention-score fraction of the unrecomputed activations.",
        symbol="φ_score",
        label="attention-score share",
    ),
    _D(
        "activations_none",
        "layers * sequence * micro_batch * hidden_dim * (per_token_bytes_coefficient + score_bytes_coefficient)",
        "Saved activations with no recomputation: every tensor, attention scores included.",
        "byte",
        symbol="M_none",
        label="activations, no recomputation",
        base="byte",
    ),
    _D(
        "activations_selective",
        "layers * sequence * micro_batch * hidden_dim * per_token_bytes_coefficient",
        "Saved activations with selective recomputation: the attention scores are rebuilt.",
        "byte",
        symbol="M_sel",
        label="activations, selective recomputation",
        base="byte",
    ),
    _D(
        "activations_full",
        "layers * sequence * micro_batch * hidden_dim * precision_bytes",
        "Saved activations with full recomputation: only each layer's input is kept.",
        "byte",
        symbol="M_full rc",
        label="activations, full recomputation",
        base="byte",
    ),
    _D(
        "per_token_activations",
        "activations_selective",
        "Activations that grow in proportion to sequence length (everything but the scores), "
        "for the whole micro-batch.",
        "GB",
        symbol="M_tok",
        label="per-token activations",
        base="byte",
    ),
    _D(
        "per_sequence_activations",
        "per_token_activations / micro_batch",
        "Per-token activations of one sequence: the slope against batch size.",
        "GB",
        symbol="M_seq",
        label="per-sequence activations",
        base="byte",
    ),
    _D(
        "score_activations",
        "activations_none - activations_selective",
        "Stored attention scores, removed by selective recomputation.",
        "GB",
        symbol="M_score",
        label="attention-score activations",
        base="byte",
    ),
    _D(
        "segment_layers",
        "layers // checkpoint_segments",
        "Layers in each checkpoint segment (floor division; leftover layers are not represented).",
        symbol="L_seg",
        label="layers per segment",
    ),
    _D(
        "segment_input",
        "micro_batch * sequence * hidden_dim * precision_bytes",
        "One segment boundary's kept hidden-state tensor.",
        "MB",
        symbol="M_in",
        label="one segment input",
        base="byte",
    ),
    _D(
        "segment_inputs",
        "checkpoint_segments * segment_input",
        "Kept inputs of all segments.",
        "GB",
        symbol="M_inputs",
        label="all segment inputs",
        base="byte",
    ),
    _D(
        "live_segment",
        "per_token_activations / layers * segment_layers",
        "One segment's per-token activations, rebuilt in the backward pass.",
        "GB",
        symbol="M_live",
        label="live segment",
        base="byte",
    ),
    _D(
        "checkpointed_activations",
        "segment_inputs + live_segment",
        "Segment inputs plus one live rebuilt segment (its input counted twice: conservative).",
        "GB",
        symbol="M_seg ckpt",
        label="segment-checkpointed activations",
        base="byte",
    ),
    _D(
        "projection_activations_per_layer",
        "projection_tensors * micro_batch * sequence * hidden_dim * precision_bytes",
        "Illustrative saved state of four hidden-width projection tensors.",
        "MB",
        symbol="m_proj",
        label="projection tensors per layer",
        base="byte",
    ),
    _D(
        "ffn_activations_per_layer",
        "micro_batch * sequence * ffn_multiple * hidden_dim * precision_bytes",
        "Illustrative expanded feed-forward activation tensor.",
        "MB",
        symbol="m_ffn",
        label="feed-forward tensor per layer",
        base="byte",
    ),
    _D(
        "score_activations_per_layer",
        "score_activations / layers",
        "Average stored attention-score footprint per layer.",
        "MB",
        symbol="m_score",
        label="attention scores per layer",
        base="byte",
    ),
    _D(
        "line_items_per_layer",
        "projection_activations_per_layer + ffn_activations_per_layer + score_activations_per_layer"
        " + normalization_per_layer",
        "Sum of the explicit tensors of one layer (not forced to equal the aggregate estimate).",
        "MB",
        symbol="m_items",
        label="line items per layer",
        base="byte",
    ),
    _D(
        "line_items_total",
        "line_items_per_layer * layers",
        "Explicit line items across the model.",
        "GB",
        symbol="M_items",
        label="line items, all layers",
        base="byte",
    ),
    _D(
        "training_flops",
        "6 * parameters * tokens",
        "Training FLOPs: 2P forward plus 4P backward per token.",
        symbol="F_train",
        label="training FLOPs",
    ),
    _D(
        "checkpointed_training_flops",
        "8 * parameters * tokens",
        "Training FLOPs with full recomputation: one more 2P forward pass per token.",
        symbol="F_train,rc",
        label="training FLOPs with recomputation",
    ),
    _D(
        "decode_flops",
        "2 * parameters * tokens",
        "Forward-pass (decode) FLOPs: 2P per token.",
        symbol="F_fwd",
        label="forward-pass FLOPs",
    ),
    _D(
        "forward_equivalents",
        "training_flops / decode_flops",
        "Training arithmetic in forward-pass units (context attention omitted).",
        symbol="n_fwd",
        label="training work in forward passes",
    ),
    _D(
        "recompute_overhead",
        "checkpointed_training_flops / training_flops - 1",
        "Relative arithmetic added by full recomputation (a work ratio, not measured runtime).",
        symbol="ρ_rc",
        label="recompute overhead",
    ),
    _D(
        "recompute_forward_equivalents",
        "forward_equivalents * (1 + recompute_overhead)",
        "Training arithmetic with full recomputation, in forward-pass units.",
        symbol="n_fwd,rc",
        label="work with recomputation in forward passes",
    ),
    _D(
        "checkpoint_memory_units",
        "checkpoints + layers / checkpoints",
        "Activation memory with k evenly spaced checkpoints, in layer units: k + L/k.",
        symbol="u_ckpt",
        label="checkpoint memory in layer units",
    ),
]

#: The layer table's sums these equations read (bytes per hidden element and layer at 16 bits, a count).
CONSTANTS = {
    "per_token_constant": KORTHIKANTI_FFN_FREE_BYTES,
    "ffn_constant": KORTHIKANTI_FFN_BYTES,
    "score_constant": KORTHIKANTI_SCORE_BYTES,
    "projection_tensors": PROJECTION_TENSORS,
}

#: The notation of the other names these equations define: the constants, the flag and the arguments.
NOTATION: dict[str, Quantity] = {
    # -- the layer table's constants, written as their numbers
    "per_token_constant": Quantity(
        Symbol(str(CONSTANTS["per_token_constant"])), "", "Korthikanti per-token bytes outside the MLP's wide tensors"
    ),
    "ffn_constant": Quantity(
        Symbol(str(CONSTANTS["ffn_constant"])), "", "Korthikanti bytes per unit of the feed-forward multiple"
    ),
    "score_constant": Quantity(Symbol(str(CONSTANTS["score_constant"])), "", "Korthikanti score bytes"),
    "projection_tensors": Quantity(Symbol(str(CONSTANTS["projection_tensors"])), "", "hidden-width projection tensors"),
    # -- the flag the scenario sets, and the arguments of its methods and of the helpers
    "seq_given": quantity("seq_given", "", "the sequence length is stated"),
    "checkpoints": quantity("k", "", "checkpoints"),
    "tokens": quantity("D", "", "tokens"),
}

#: The activation equations, in reading order.
EQUATIONS = Equations("the activation equations", _ACTIVATION, NOTATION, constants=CONSTANTS)
