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
        "activations_per_device",
        "layer_activations * stage_layers * micro_batches_in_flight",
        "Saved activations of the first pipeline stage, the device that holds the most.",
        "byte",
        symbol="M_act,dev",
        label="activations",
        base="byte",
    ),
]
