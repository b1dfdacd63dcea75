"""The many-device equations of the saved activations: one layer on one device, then the first pipeline stage.

Source: Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer Models",
arXiv:2205.05198, Table 2 and Sec. 4.2 (tensor parallelism splits the attention and MLP blocks' tensors t
ways and leaves the norms' and dropouts' whole; sequence parallelism splits those along the sequence),
Sec. 4.2.3 (the first pipeline stage holds p micro-batches, ``1 + (p − 1)/(p·m)`` more when interleaved).
The coefficients are read off the workload's own layer in the layer table
(:mod:`mlsysim_nb.kinds.parallel.table`): for GPT's layer they are Table 2's 10, 24 and 5; for Llama's
(grouped-query attention, a gated MLP, no dropout) what its rows give.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["ACTIVATIONS"]

_D = defined

ACTIVATIONS: list[Defined] = [
    _D(
        "replicated_bytes_coefficient",
        "sp_row_bytes",
        "Activation bytes per hidden element per layer that tensor parallelism leaves whole on each device: the"
        " layer table's rows that only sequence parallelism splits.",
        "byte",
        note="GPT's layer: the two norms' inputs, the QKV and MLP inputs, the two dropout masks (10 B at 16 bits);"
        " a layer without dropout keeps no masks (8 B).",
        symbol="κ_rep",
        label="replicated coefficient",
        base="byte",
    ),
    _D(
        "sharded_bytes_coefficient",
        "tp_row_bytes",
        "Activation bytes per hidden element per layer inside the tensor-parallel regions (split by t): the"
        " layer table's rows t splits that selective recomputation keeps.",
        "byte",
        note="GPT's layer: Q, K, V, the output projection's input, the MLP's two 4h tensors (24 B at 16 bits);"
        " grouped-query attention shrinks K and V to kv/a of that, a gated MLP keeps three f-wide tensors.",
        symbol="κ_tp",
        label="tensor-parallel coefficient",
        base="byte",
    ),
    _D(
        "layer_score_coefficient",
        "score_row_bytes * heads * sequence / hidden_dim",
        "Attention-score bytes per hidden element per layer (split by t, dropped by selective recomputation).",
        "byte",
        note="GPT's layer keeps 5 B per score at 16 bits (softmax output, dropout mask, dropout output); fused"
        " attention keeps none.",
        symbol="κ_score,t",
        label="attention-score coefficient of the layer",
        base="byte",
    ),
    _D(
        "sequence_shards",
        doc="Devices that split the replicated regions along the sequence: t with sequence parallelism.",
        cases=(Case("sequence parallel", "tensor_parallel", when="sequence_parallel"), Case("no SP", "1")),
        symbol="t_SP",
        label="sequence shards",
    ),
    _D(
        "layer_activations",
        doc="Saved activations of one layer for one micro-batch on one device (Korthikanti et al. 2022, Table 2).",
        unit="byte",
        cases=(
            Case(
                "no recomputation",
                "sequence * micro_batch * hidden_dim * (replicated_bytes_coefficient / sequence_shards"
                " + (sharded_bytes_coefficient + layer_score_coefficient) / tensor_parallel)",
                when="keeps_scores",
            ),
            Case(
                "selective recomputation",
                "sequence * micro_batch * hidden_dim * (replicated_bytes_coefficient / sequence_shards"
                " + sharded_bytes_coefficient / tensor_parallel)",
                when="keeps_layer_tensors",
            ),
            Case("full recomputation", "sequence * micro_batch * hidden_dim * precision_bytes / sequence_shards"),
        ),
        note="Full recomputation keeps only each layer's input: 2sbh, as Table 2 gives it; with sequence"
        " parallelism that input is itself split along the sequence (2sbh/t), as Megatron-LM keeps it.",
        symbol="m_layer",
        label="activations per layer and micro-batch",
        base="byte",
    ),
    _D(
        "stage_layers",
        "layers // pipeline_parallel",
        "Layers on one pipeline stage: L/p (p divides L).",
        symbol="L_stage",
        label="layers per pipeline stage",
    ),
    _D(
        "interleave_factor",
        doc="Extra micro-batches the first stage holds under the interleaved schedule.",
        cases=(
            Case(
                "interleaved, m > 1",
                "1 + (pipeline_parallel - 1) / (pipeline_parallel * interleave)",
                when="interleaved",
            ),
            Case("1F1B, m = 1", "1"),
        ),
        symbol="f_int",
        label="interleaving factor",
    ),
    _D(
        "micro_batches_in_flight",
        "pipeline_parallel * interleave_factor",
        "Micro-batches whose activations the first pipeline stage holds at its peak.",
        symbol="n_mb",
        label="micro-batches in flight",
    ),
    _D(
        "first_stage_layer_activations",
        "layer_activations * stage_layers * micro_batches_in_flight",
        "Saved activations of the first pipeline stage's layers: Korthikanti et al. (2022) Table 2 times L/p"
        " layers times the micro-batches in flight, the paper's figure (its Sec. 4.3 adds the layers around the"
        " stack apart).",
        "byte",
        symbol="M_act,1",
        label="the first stage's layers",
        base="byte",
    ),
    _D(
        "first_stage_activations",
        "first_stage_layer_activations + input_layer_bytes * micro_batches_in_flight",
        "Everything the first pipeline stage saves: its layers, and the embedding's rows (token ids, its dropout"
        " mask) and the rows kept once per model for each micro-batch in flight.",
        "byte",
        symbol="M_first",
        label="the first stage",
        base="byte",
    ),
    _D(
        "last_stage_micro_batches",
        doc="Micro-batches whose activations the last pipeline stage's layers hold at its peak.",
        cases=(
            Case(
                "interleaved, m > 1",
                "((interleave - 1) * pipeline_parallel + 1) / interleave",
                when="interleaved",
            ),
            Case("1F1B, m = 1", "1"),
        ),
        note="Under 1F1B the last stage runs each micro-batch's backward pass right after its forward pass, so it"
        " holds one; interleaved, it first runs (m − 1)·p forward chunks of L/(p·m) layers (Megatron-LM's warm-up"
        " count for the last rank), ((m − 1)·p + 1)/m stages' worth.",
        symbol="n_mb,last",
        label="micro-batches in flight on the last stage",
    ),
    _D(
        "last_stage_activations",
        "layer_activations * stage_layers * last_stage_micro_batches + output_layer_bytes",
        "Everything the last pipeline stage saves: its layers' micro-batches in flight, and the final norm, the"
        " output layer and the loss's FP32 logits for the one micro-batch whose loss it computes.",
        "byte",
        symbol="M_last",
        label="the last stage",
        base="byte",
    ),
    _D(
        "activations_per_device",
        doc="Saved activations of the device that holds the most: the first or the last pipeline stage's.",
        unit="byte",
        cases=(
            Case(
                "pipeline: the larger stage",
                "max(first_stage_activations, last_stage_activations)",
                when="pipelined_with_output",
            ),
            Case("one stage holds the whole model", "first_stage_activations + output_layer_bytes", when="has_output"),
            Case("the layers only: no vocabulary to size the output layer", "first_stage_layer_activations"),
        ),
        note="The first stage holds the most micro-batches, the last the output layer's FP32 logits (s·b·v·4/t):"
        " with a large vocabulary and few layers per stage the last one binds. Without the workload's vocabulary"
        " the layers around the stack are not counted, as in Korthikanti's Table 2.",
        symbol="M_act,dev",
        label="activations",
        base="byte",
    ),
]
