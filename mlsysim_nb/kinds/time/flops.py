"""The arithmetic of one training iteration: model FLOPs and hardware FLOPs.

Korthikanti et al. (2022), Appendix A; Narayanan et al. (2021), Sec. 5.1: a layer's forward pass multiplies each
of its matrix parameters once per token (2 FLOPs) and computes the attention scores and their product with the
values (``2·s·A`` FLOPs per token each); the backward pass does twice the forward's work; the output layer adds
``2·v·h`` per token forward. For Korthikanti's GPT layer (``12·h²`` matrix parameters, ``A = h``) the model's
FLOPs per iteration are ``72·B·s·L·h²·(1 + s/(6·h) + v/(12·h·L))``. Recomputation runs a forward pass again: the
whole layer (full), or the attention scores only (selective: the matrix products ``Q·Kᵀ`` and scores·V,
``4·s·A`` FLOPs per token). Model FLOPs count the model's arithmetic once; hardware FLOPs add what recomputation
runs again.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import defined

_D = defined

__all__ = ["ARITHMETIC"]

#: The FLOPs of one iteration, model and hardware.
ARITHMETIC = [
    _D(
        "attended_keys",
        doc="Keys each query's score products meet per layer, on average over the layers.",
        cases=(
            Case(
                "sliding windows, a fused kernel: it skips the blocks a window masks",
                "windowed_keys",
                when="windows_cut_scores",
            ),
            Case("every layer's scores over the whole sequence (eager attention masks after multiplying)", "sequence"),
        ),
        symbol="s_att",
        label="keys per query",
    ),
    _D(
        "micro_batches",
        "global_batch_size / (micro_batch * data_parallel)",
        "Micro-batches each pipeline runs per iteration: the global batch over b sequences times N_d replicas.",
        symbol="n_micro",
        label="micro-batches per iteration",
    ),
    _D(
        "tokens_per_iteration",
        "global_batch_size * sequence",
        "Tokens one iteration trains on: B sequences of s tokens.",
        symbol="N_tok",
        label="tokens per iteration",
    ),
    _D(
        "layer_forward_flops_per_token",
        "2 * layer_matrix_parameters + 4 * attended_keys * attention_width",
        "Forward FLOPs of one layer per token: 2 per matrix parameter, and 2·s·A each for the scores Q·Kᵀ and "
        "scores·V (a causal mask counted as the full square, as Korthikanti et al. 2022 count it).",
        symbol="f_layer",
        label="layer forward FLOPs per token",
    ),
    _D(
        "output_forward_flops_per_token",
        "2 * vocabulary * hidden_dim",
        "Forward FLOPs of the output layer per token: the logits over the vocabulary.",
        symbol="f_out",
        label="output-layer forward FLOPs per token",
    ),
    _D(
        "model_flops_per_token",
        "3 * (layers * layer_forward_flops_per_token + output_forward_flops_per_token)",
        "Model FLOPs per token: forward once, backward twice the forward.",
        note="For Korthikanti's GPT layer, 72·s·L·h²·(1 + s/(6·h) + v/(12·h·L)) per sequence.",
        symbol="F_model,tok",
        label="model FLOPs per token",
    ),
    _D(
        "model_flops_per_iteration",
        "model_flops_per_token * tokens_per_iteration",
        "Model FLOPs of one iteration (the numerator of MFU): the model's arithmetic, counted once.",
        symbol="F_model",
        label="model FLOPs per iteration",
    ),
    _D(
        "recompute_flops_per_token",
        doc="FLOPs recomputation runs again per token: its forward rerun.",
        cases=(
            Case(
                "full recomputation: every layer's forward again",
                "layers * layer_forward_flops_per_token",
                when="recomputes_layers",
            ),
            Case(
                "selective recomputation: the scores' matrix products again",
                "layers * 4 * attended_keys * attention_width",
                when="recomputes_scores",
            ),
            Case("no recomputation", "0"),
        ),
        note="Korthikanti et al.'s Table 5 counts 12·s·A per token and layer for selective recomputation, three "
        "times the 4·s·A its forward rerun multiplies.",
        symbol="F_rec,tok",
        label="recomputed FLOPs per token",
    ),
    _D(
        "hardware_flops_per_iteration",
        "(model_flops_per_token + recompute_flops_per_token) * tokens_per_iteration",
        "Hardware FLOPs of one iteration (the numerator of HFU): the model's, plus what recomputation reruns.",
        symbol="F_hw",
        label="hardware FLOPs per iteration",
    ),
]
