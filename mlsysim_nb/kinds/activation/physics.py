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
* PyTorch, ``torch.utils.checkpoint.checkpoint_sequential``: with ``k``
  segments of ``⌊L/k⌋`` layers, all but the last are checkpointed ("the last
  chunk has to be non-volatile"), so ``(k − 1)·⌊L/k⌋`` layers rerun their
  forward pass: the recompute overhead is ``(k − 1)/k`` of a third at
  ``k | L`` (29 % at k = 8).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case, Symbol
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity
from mlsysim_nb.physics import PROJECTION_TENSORS, STRATEGIES

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
        "token_units * precision_bytes + token_fixed_bytes",
        "Bytes per token and hidden unit one layer saves, summed over the layer table's per-token rows.",
        note=(
            "The table's rows for this workload, attention and implementation: n_tok elements in the activation "
            "dtype plus c_tok bytes of masks and FP32 or int64 rows, per s·b·h. GPT-style layer, as the paper "
            "counts it: 18 + 4f at 16 bits (34 at f = 4); Llama 3.1 8B, fused, megatron: 34 + 4a/h = 34.03."
        ),
        symbol="κ_tok",
        label="per-token coefficient",
        base="byte",
    ),
    _D(
        "score_bytes_coefficient",
        "(score_units * precision_bytes + score_fixed_bytes) * heads * sequence / hidden_dim",
        "Attention-score bytes one layer saves per token and hidden unit: the table's bytes per score "
        "element times the a·s/h scores per s·b·h.",
        note="5 bytes per score element at 16 bits in the paper's GPT layer (5·a·s/h); 0 with fused attention.",
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
        "layer_activations_none",
        "sequence * micro_batch * hidden_dim * (per_token_bytes_coefficient + score_bytes_coefficient)",
        "Bytes one decoder layer saves with no recomputation: every row of the layer table.",
        "MB",
        symbol="m_none",
        label="one layer, no recomputation",
        base="byte",
    ),
    _D(
        "layer_activations_selective",
        "sequence * micro_batch * hidden_dim * per_token_bytes_coefficient",
        "Bytes one decoder layer saves with selective recomputation: its per-token rows.",
        "MB",
        symbol="m_sel",
        label="one layer, selective recomputation",
        base="byte",
    ),
    _D(
        "layer_activations_full",
        "sequence * micro_batch * hidden_dim * precision_bytes",
        "Bytes one decoder layer saves with full recomputation: its input alone.",
        "MB",
        symbol="m_full rc",
        label="one layer, full recomputation",
        base="byte",
    ),
    _D(
        "activations_none",
        "layers * layer_activations_none",
        "Saved activations of the layers with no recomputation: every tensor, attention scores included.",
        "byte",
        symbol="M_none",
        label="activations, no recomputation",
        base="byte",
    ),
    _D(
        "activations_selective",
        "layers * layer_activations_selective",
        "Saved activations of the layers with selective recomputation: the attention scores are rebuilt.",
        "byte",
        symbol="M_sel",
        label="activations, selective recomputation",
        base="byte",
    ),
    _D(
        "activations_full",
        "layers * layer_activations_full",
        "Saved activations of the layers with full recomputation: only each layer's input is kept.",
        "byte",
        symbol="M_full rc",
        label="activations, full recomputation",
        base="byte",
    ),
    _D(
        "output_activations",
        "outside_layer_bytes",
        "What the model keeps once, outside its layers: the embeddings' and final norm's tensors, the output "
        "layer's input, the logits the loss reads (FP32 where the framework upcasts), the rows every layer "
        "shares (rotary tables) and the weight-sized copies each layer keeps (Gemma's FP32 1 + w, DeepSeek's FP32 "
        "router weight; a few kB a layer). Recomputation does not touch them.",
        "GB",
        symbol="M_out",
        label="output layer and loss",
        base="byte",
    ),
    _D(
        "model_activations_none",
        "activations_none + output_activations",
        "The whole model's saved activations with no recomputation: the layers, then the output layer and loss.",
        "GB",
        symbol="M_model,none",
        label="whole model, no recomputation",
        base="byte",
    ),
    _D(
        "model_activations_selective",
        "activations_selective + output_activations",
        "The whole model's saved activations with selective recomputation.",
        "GB",
        symbol="M_model,sel",
        label="whole model, selective recomputation",
        base="byte",
    ),
    _D(
        "model_activations_full",
        "activations_full + output_activations",
        "The whole model's saved activations with full recomputation: the layer inputs beside the output layer.",
        "GB",
        symbol="M_model,full",
        label="whole model, full recomputation",
        base="byte",
    ),
    _D(
        "per_token_activations",
        "activations_selective",
        "Activations that grow in proportion to sequence length (everything but the scores), "
        "for the whole micro-batch: what selective recomputation keeps.",
        note="With eager attention: the scores dropped and nothing kept in their place (the reference's stand-in"
        " for FlashAttention); with attention='fused' it holds the FP32 log-sum-exp per row and head a FlashAttention"
        " kernel keeps.",
        unit="GB",
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
        "rerun_fraction",
        doc="Share of the layers whose forward pass full recomputation runs again in the backward pass.",
        cases=(
            Case("k checkpoint segments", "(checkpoint_segments - 1) * segment_layers / layers", when="segments_given"),
            Case("every layer checkpointed", "1"),
        ),
        note="With k segments (PyTorch's checkpoint_sequential) the last segment is not checkpointed: it keeps its"
        " activations and is not run again, so (k − 1)·⌊L/k⌋ of the L layers rerun, (k − 1)/k when k divides L."
        " Without segments every layer is its own checkpoint and every layer reruns (Megatron-LM's full"
        " recomputation, as Korthikanti et al. count it).",
        symbol="φ_rerun",
        label="layers rerun",
    ),
    _D(
        "checkpointed_training_flops",
        "(6 + 2 * rerun_fraction) * parameters * tokens",
        "Training FLOPs with full recomputation: the rerun layers' 2P forward pass once more per token.",
        note="8P per token when every layer reruns; 6P + 2P·(k − 1)/k with k segments.",
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
        "Relative arithmetic added by full recomputation (a work ratio, not measured runtime): a third of a"
        " training step's for every layer rerun, (k − 1)/k of that with k checkpoint segments.",
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

#: The layer table's count the illustrative line items read.
CONSTANTS = {"projection_tensors": PROJECTION_TENSORS}

#: The notation of the other names these equations define: the table's sums, the flag and the arguments.
NOTATION: dict[str, Quantity] = {
    # -- the layer table's sums for the scenario's workload, attention, implementation and precision
    "token_units": quantity("n_tok", "", "activation-dtype elements per token and hidden unit (the table's rows)"),
    "token_fixed_bytes": quantity(
        "c_tok", "byte", "bytes per token and hidden unit of masks and FP32 or int64 rows (the table's rows)"
    ),
    "score_units": quantity("n_score", "", "activation-dtype elements per attention score (the table's rows)"),
    "score_fixed_bytes": quantity("c_score", "byte", "bytes per attention score of masks and FP32 rows"),
    "outside_layer_bytes": quantity(
        "Σ_out", "byte", "the table's output-layer, loss and once-per-model rows, summed for this run"
    ),
    "projection_tensors": Quantity(Symbol(str(CONSTANTS["projection_tensors"])), "", "hidden-width projection tensors"),
    # -- the flag the scenario sets, and the arguments of its methods and of the helpers
    "seq_given": quantity("seq_given", "", "the sequence length is stated"),
    "segments_given": quantity("k_given", "", "checkpoint segments are stated"),
    "reference_layer": quantity("ref", "", "the layer is counted as the reference counts it (GPT-style, megatron)"),
    "has_output": quantity("has_out", "", "the workload gives its vocabulary (the output layer is sized)"),
    "checkpoints": quantity("k", "", "checkpoint segments"),
    "tokens": quantity("D", "", "tokens"),
}

#: The activation equations, in reading order.
EQUATIONS = Equations("the activation equations", _ACTIVATION, NOTATION, constants=CONSTANTS)
