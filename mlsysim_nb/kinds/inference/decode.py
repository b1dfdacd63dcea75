"""The serving equations of speed: a decode step's bytes and FLOPs, and the prompts' prefill, at the peaks.

Tensor parallelism's all-reduces and the achieved shares complete them in
:mod:`~mlsysim_nb.kinds.inference.timing`.

Sources
-------
* Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1: a forward pass costs about ``2·N``
  FLOPs per token for the weights; Chowdhery et al. (2022), PaLM, Appendix B: attention adds ``12·L·H·Q·T``
  training FLOPs per token over a context of ``T``, a third of it forward, so ``4·L·a·d`` per attended token (the
  scores and the weighted sum). Prefill's causal mask halves its ``s_p²`` scores.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.kinds.inference.weights import PARTS
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["DECODE", "PREFILL"]

_D = defined

#: One decode step: the weights and cache it reads, its FLOPs, its time; the routed experts' and lookup tables'
#: weights (:data:`~mlsysim_nb.kinds.inference.weights.PARTS`) after the experts it touches.
DECODE: list[Defined] = [
    _D(
        "experts_touched",
        "experts * (1 - max(1 - experts_per_token / experts, 0) ** batch_size)",
        "Distinct experts per layer one decode step reads: the expected number the B tokens touch when each "
        "picks k_exp of the E experts uniformly at random (k_exp at B = 1, all E for a large batch); max(·, 0) "
        "changes nothing, as k_exp ≤ E.",
        note="An assumption: real routers are not uniform, so a step may read fewer distinct experts.",
        symbol="E_B",
        label="experts read per layer and step",
    ),
    *PARTS,
    _D(
        "weights_read_per_step",
        doc="Weights one device reads per decode step: all but the lookup tables for a dense model; for a "
        "mixture of experts, the routed experts' only for the E_B of E the batch touches.",
        unit="GB",
        cases=(
            Case(
                "mixture of experts",
                "weights - lookup_weights - expert_weights * (1 - experts_touched / experts)",
                when="has_experts",
            ),
            Case("dense", "weights - lookup_weights"),
        ),
        symbol="M_w,read",
        label="weights read per step",
        base="byte",
    ),
    _D(
        "bytes_read_per_step",
        "weights_read_per_step + kv_cache",
        "Bytes one device reads per decode step: the weights it uses and the batch's whole KV cache.",
        "GB",
        symbol="D_step",
        label="bytes read per step",
        base="byte",
    ),
    _D(
        "decode_memory_time",
        "bytes_read_per_step / bandwidth",
        "The step's time if memory bandwidth alone limits it.",
        "ms",
        symbol="t_mem",
        label="memory-bound step time",
        base="second",
    ),
    _D(
        "multiplied_parameters",
        "active_parameters - lookup_split_parameters - lookup_replicated_parameters",
        "Parameters each token multiplies: the active ones less the lookup tables, which a token only indexes "
        "(Kaplan et al.'s 2N counts N without the embeddings).",
        symbol="P_mul",
        label="parameters a token multiplies",
    ),
    _D(
        "decode_flops_per_step",
        doc="FLOPs one device does per decode step: 2 per multiplied parameter and token, and 4·L·a·d per cached "
        "token attended (scores and weighted sum), for each of the B sequences, split over t; with layers of "
        "several kinds, 4 times each layer's attended width (a·d; latent attention's a·(d_qk + d_v)/2; 0 for a "
        "state-space layer) per token it attends (its window's at most).",
        unit="GFLOP",
        cases=(
            Case(
                "layers of several kinds",
                "batch_size * (2 * multiplied_parameters + 4 * (full_attended_width * kv_tokens"
                " + window_attended_width * min(kv_tokens, cache_window))) / tensor_parallel",
                when="has_layer_kinds",
            ),
            Case(
                "every layer alike",
                "batch_size * (2 * multiplied_parameters + 4 * layers * heads * head_dim * kv_tokens)"
                " / tensor_parallel",
            ),
        ),
        symbol="F_step",
        label="FLOPs per step",
        base="FLOP",
    ),
    _D(
        "decode_compute_time",
        "decode_flops_per_step / peak_flops",
        "The step's time if peak arithmetic alone limits it.",
        "ms",
        symbol="t_comp",
        label="compute-bound step time",
        base="second",
    ),
    _D(
        "decode_time_per_token",
        "max(decode_memory_time, decode_compute_time)",
        "Time of one decode step, one new token for each sequence: the larger of the two bounds.",
        "ms",
        symbol="t_tok",
        label="time per output token",
        base="second",
    ),
    _D(
        "memory_bound",
        "decode_compute_time <= decode_memory_time",
        "Whether memory bandwidth, not arithmetic, sets the decode time.",
        symbol="[mem-bound]",
        label="memory bandwidth sets the decode time",
    ),
    _D(
        "tokens_per_second",
        "1 / decode_time_per_token",
        "Tokens each sequence receives per second while decoding.",
        "1/s",
        symbol="r_seq",
        label="tokens per second per sequence",
        base="1/second",
    ),
    _D(
        "aggregate_tokens_per_second",
        "batch_size * tokens_per_second",
        "Tokens per second over the whole batch.",
        "1/s",
        symbol="r_all",
        label="tokens per second, all sequences",
        base="1/second",
    ),
]

#: The prompts' prefill, at peak arithmetic.
PREFILL: list[Defined] = [
    _D(
        "prompt_tokens",
        doc="Tokens of each prompt: as stated, or half the context (as many generated tokens as prompt tokens).",
        cases=(
            Case("stated", "prompt_length", when="prompt_given"),
            Case("half the context", "ceil(context_length / 2)"),
        ),
        symbol="s_p",
        label="prompt tokens",
    ),
    _D(
        "prefill_flops",
        doc="FLOPs one device does for the prompts: 2 per multiplied parameter and prompt token, and causal "
        "attention's 2·L·a·d·s_p² (half the s_p² scores), for each of the B sequences, split over t; with layers of "
        "several kinds, each layer's attended width, a windowed layer's tokens attending at most its window.",
        unit="TFLOP",
        cases=(
            Case(
                "layers of several kinds",
                "batch_size * (2 * multiplied_parameters * prompt_tokens + 2 * full_attended_width * prompt_tokens ** 2"
                " + 4 * window_attended_width * min(prompt_tokens, cache_window)"
                " * (prompt_tokens - min(prompt_tokens, cache_window) / 2)) / tensor_parallel",
                when="has_layer_kinds",
            ),
            Case(
                "every layer alike",
                "batch_size * (2 * multiplied_parameters * prompt_tokens + 2 * layers * heads * head_dim"
                " * prompt_tokens ** 2) / tensor_parallel",
            ),
        ),
        symbol="F_pre",
        label="prefill FLOPs",
        base="FLOP",
    ),
    _D(
        "prefill_time",
        "prefill_flops / peak_flops",
        "Time to process the prompts at peak arithmetic (prefill is compute-bound).",
        "ms",
        symbol="t_pre",
        label="prefill time",
        base="second",
    ),
]
