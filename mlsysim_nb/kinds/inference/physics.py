"""The equations of the serving kind, once, as data: weights and KV cache per device, the fit, decode and prefill.

Every memory figure is per device of the ``t`` that tensor parallelism spreads the model over. Magnitudes
are in base units: bytes, seconds, FLOPs, plain counts.

Sources
-------
* Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with PagedAttention",
  SOSP '23, Sec. 3 and 4: the KV cache of one token is ``2 × layers × heads × head_dim × bytes`` (800 KB for
  OPT-13B in FP16), kept in fixed-size blocks of ``s_blk`` tokens (16 by default in vLLM), so a sequence wastes
  at most one block's unfilled slots.
* Ainslie et al. (2023), "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head
  Checkpoints": ``a_kv`` key/value heads shared by the ``a`` query heads shrink the cache by ``a/a_kv``.
* Shoeybi et al. (2019), Megatron-LM, Sec. 3: tensor parallelism splits the attention by heads and the MLP by
  its width. The key/value heads follow vLLM's rule, which the attention mixer states
  (:mod:`mlsysim_nb.layers.mixers.attention`, from ``QKVParallelLinear``): with fewer key/value heads than
  devices each device keeps one whole head and each head is replicated ``t/a_kv`` times.
* The cache per token is the layer table's: the cache rows of every layer's mixer, summed on one device
  (:func:`mlsysim_nb.layers.cache_values`), as the parameter count sums the weight rows.
* Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1: a forward pass costs about ``2·N``
  FLOPs per token for the weights; Chowdhery et al. (2022), PaLM, Appendix B: attention adds ``12·L·H·Q·T``
  training FLOPs per token over a context of ``T``, a third of it forward, so ``4·L·a·d`` per attended token (the
  scores and the weighted sum). Prefill's causal mask halves its ``s_p²`` scores.
* vLLM's engine arguments, in its own source (``EngineArgs`` in ``vllm/engine/arg_utils.py`` of
  vllm-project/vllm, the 0.6 releases): ``block_size: int = 16`` and ``gpu_memory_utilization: float = 0.90``, the
  share of each device the engine takes for the weights, its profiled activations and the cache blocks (its
  current ``CacheConfig``, docs.vllm.ai, defaults to 0.92). The default ``runtime_reserve`` of 0.1 is the share
  the 0.90 leaves outside it; the activations vLLM measures inside its 90 % are not
  counted here, so the largest batch is an upper bound on vLLM's.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.kinds.inference.timing import ACTIVATION_BYTES, TIMING
from mlsysim_nb.kinds.inference.timing import NOTATION as TIMING_NOTATION
from mlsysim_nb.layers.mixers.attention import KV_HEAD_REPLICAS, KV_HEADS_PER_DEVICE
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["EQUATIONS", "NOTATION"]

_D = defined

_EVERY_WEIGHT = (
    "weight_bytes_per_parameter * (split_parameters / tensor_parallel"
    " + kv_projection_parameters * kv_heads_per_device / kv_heads + replicated_parameters)"
)
_EXPERTS = "weight_bytes_per_parameter * expert_parameters / tensor_parallel"
_LOOKUPS = "weight_bytes_per_parameter * (lookup_split_parameters / tensor_parallel + lookup_replicated_parameters)"
#: b_16 − b_w: what each parameter a weight format keeps in 16 bits adds beyond the quantised width.
_KEPT = "(kept_bytes_per_parameter - weight_bytes_per_parameter)"

_WEIGHTS = [
    _D(
        "split_parameters",
        "parameters - replicated_parameters - kv_projection_parameters",
        "Parameters tensor parallelism splits over the t devices: the Q and output projections (by heads), the "
        "MLPs (by their width, each expert's too), the token embeddings and the output layer (by vocabulary).",
        symbol="P_tp",
        label="parameters split over t",
    ),
    _D(
        "kv_heads_per_device",
        KV_HEADS_PER_DEVICE["vllm"],
        "Key/value heads each device holds, by vLLM's rule: a_kv/t, or 1 when there are fewer key/value heads "
        "than devices.",
        symbol="a_kv,dev",
        label="key/value heads per device",
    ),
    _D(
        "kv_head_replicas",
        KV_HEAD_REPLICAS["vllm"],
        "Devices holding a copy of each key/value head, by vLLM's rule: 1 when t divides a_kv; t/a_kv when "
        "a_kv < t, each head (its K and V projections and its cache) then replicated t/a_kv times.",
        symbol="r_kv",
        label="copies of each key/value head",
    ),
    _D(
        "kept_weights",
        f"{_KEPT} * ((kept_parameters - kept_replicated_parameters"
        " - kept_kv_projection_parameters) / tensor_parallel + kept_kv_projection_parameters * kv_heads_per_device"
        " / kv_heads + kept_replicated_parameters)",
        "What the tensors a weight format keeps in 16 bits (its layout: embeddings, output layer, norms, ...) add "
        "on one device beyond the quantised width, split as the other weights are; 0 without a format.",
        "GB",
        symbol="ΔM_w,16",
        label="16-bit tensors' extra bytes",
        base="byte",
    ),
    _D(
        "weights",
        doc="Weights on one device: the split parameters' 1/t, the K and V projections of the key/value heads it "
        "holds, and the replicated norms, router and output-width biases whole, at b_w each; plus what a weight "
        "format's 16-bit tensors add.",
        unit="GB",
        cases=(
            Case("a weight format", f"{_EVERY_WEIGHT} + kept_weights", when="has_weight_format"),
            Case("every weight at b_w", _EVERY_WEIGHT),
        ),
        symbol="M_w",
        label="weights",
        base="byte",
    ),
]

_CACHE = [
    _D(
        "kv_cache_per_token",
        "cache_values_per_token * kv_bytes_per_value",
        "What one token keeps in every layer's cache on one device (attention: its key and value, for the "
        "key/value heads the device holds), at the cache's width.",
        "KiB",
        symbol="m_kv",
        label="KV cache per token",
        base="byte",
    ),
    _D(
        "kv_tokens",
        doc="Tokens whose keys and values each sequence keeps per layer: its context, or the sliding window.",
        cases=(
            Case("sliding window", "min(context_length, sliding_window)", when="has_sliding_window"),
            Case("full attention", "context_length"),
        ),
        note="The decode step costed holds its own token too: with a window W, W tokens. Between steps "
        "transformers' sliding-window cache keeps W − 1 (measured in tests/measure/test_kv_cache.py).",
        symbol="s_kv",
        label="cached tokens per sequence",
    ),
    _D(
        "kv_cache",
        doc="Keys and values of the batch's cached tokens on one device (and a hybrid's states).",
        unit="GB",
        cases=(
            Case(
                "layers of several kinds",
                "batch_size * (full_cache_values * kv_tokens"
                " + window_cache_values * min(kv_tokens, cache_window) + state_values) * kv_bytes_per_value",
                when="has_mixed_cache",
            ),
            Case("every layer alike", "batch_size * kv_tokens * kv_cache_per_token"),
        ),
        symbol="M_kv",
        label="KV cache",
        base="byte",
    ),
    _D(
        "blocks_per_sequence",
        "ceil(kv_tokens / block_size)",
        "Cache blocks each sequence takes: its cached tokens, rounded up to whole blocks.",
        symbol="n_blk",
        label="blocks per sequence",
    ),
    _D(
        "block_waste",
        doc="The block allocator's rounding: the unfilled slots of each sequence's last block (of each group).",
        unit="MB",
        cases=(
            Case("layers of several kinds", "batch_size * sequence_memory - kv_cache", when="has_mixed_cache"),
            Case(
                "every layer alike", "batch_size * (blocks_per_sequence * block_size - kv_tokens) * kv_cache_per_token"
            ),
        ),
        symbol="M_waste",
        label="block waste",
        base="byte",
    ),
]

_FIT = [
    _D(
        "reserve",
        "runtime_reserve * capacity",
        "What the engine keeps out of the cache on each device: activations, workspaces, the CUDA context.",
        "GB",
        symbol="M_res",
        label="runtime reserve",
        base="byte",
    ),
    _D(
        "total",
        "weights + kv_cache + block_waste + reserve",
        "Memory one device needs: weights, KV cache, block waste and reserve.",
        "GB",
        symbol="M_dev",
        label="memory per device",
        base="byte",
    ),
    _D(
        "free_memory",
        "capacity - total",
        "Memory left on one device (negative: by how much it overflows).",
        "GB",
        symbol="M_free",
        label="free memory per device",
        base="byte",
    ),
    _D(
        "fits",
        "total <= capacity",
        "Whether every device holds its share: weights, KV cache, block waste and reserve within one device's memory.",
        symbol="fits",
        label="fits on every device",
    ),
    _D(
        "kv_budget",
        "capacity - weights - reserve",
        "Memory one device has for cache blocks once the weights and the reserve are in.",
        "GB",
        symbol="M_blk",
        label="memory for cache blocks",
        base="byte",
    ),
    _D(
        "sequence_memory",
        doc="Cache one sequence takes on one device, in whole blocks (each window's layers in blocks of their own, "
        "as vLLM's hybrid allocator keeps them; a state whole).",
        unit="MB",
        cases=(
            Case(
                "layers of several kinds",
                "(blocks_per_sequence * block_size * full_cache_values"
                " + ceil(min(kv_tokens, cache_window) / block_size) * block_size * window_cache_values"
                " + state_values) * kv_bytes_per_value",
                when="has_mixed_cache",
            ),
            Case("every layer alike", "blocks_per_sequence * block_size * kv_cache_per_token"),
        ),
        symbol="m_seq",
        label="cache per sequence",
        base="byte",
    ),
    _D(
        "max_batch_size",
        "max(floor(kv_budget / sequence_memory), 0)",
        "Most sequences of this context whose blocks fit beside the weights and reserve (0: none).",
        symbol="B_max",
        label="largest batch at this context",
    ),
    _D(
        "fit_blocks",
        doc="Cache blocks per sequence (of the full-context layers) that fit when the batch shares the memory for "
        "blocks; a hybrid's windowed layers and states counted whole first (a context past the window).",
        cases=(
            Case(
                "layers of several kinds",
                "max(floor((kv_budget / batch_size - (ceil(cache_window / block_size) * block_size"
                " * window_cache_values + state_values) * kv_bytes_per_value) / (block_size"
                " * full_cache_values * kv_bytes_per_value)), 0)",
                when="has_mixed_cache",
            ),
            Case("every layer alike", "max(floor(kv_budget / (batch_size * block_size * kv_cache_per_token)), 0)"),
        ),
        symbol="n_blk,max",
        label="blocks per sequence that fit",
    ),
    _D(
        "max_context_length",
        doc="Longest context per sequence that fits at this batch, at most the model's context window.",
        cases=(
            Case(
                "sliding window: past the window every context fits",
                "min(context_window, max(fit_blocks * block_size,"
                " context_window * (sliding_window <= fit_blocks * block_size)))",
                when="has_sliding_window",
            ),
            Case("full attention", "min(context_window, fit_blocks * block_size)"),
        ),
        symbol="s_max,fit",
        label="longest context at this batch",
    ),
]

_DECODE = [
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
    _D(
        "expert_weights",
        doc="Weights of the routed experts on one device (all resident; each split over t by its width), a weight "
        "format's 16-bit tensors among them (the experts' biases) at 2 B.",
        unit="GB",
        cases=(
            Case(
                "a weight format",
                f"{_EXPERTS} + {_KEPT} * kept_expert_parameters / tensor_parallel",
                when="has_weight_format",
            ),
            Case("every weight at b_w", _EXPERTS),
        ),
        symbol="M_exp",
        label="routed experts' weights",
        base="byte",
    ),
    _D(
        "lookup_weights",
        doc="Weights of the lookup tables on one device: the token embeddings when the output layer has its own "
        "weights, and learned position embeddings (the vocabulary axis split over t), at 2 B where a weight "
        "format keeps them in 16 bits. A step reads only the rows of its B tokens, B·h values, which the model "
        "counts as nothing.",
        unit="GB",
        cases=(
            Case(
                "a weight format",
                f"{_LOOKUPS} + {_KEPT} * (kept_lookup_split_parameters / tensor_parallel"
                " + kept_lookup_replicated_parameters)",
                when="has_weight_format",
            ),
            Case("every weight at b_w", _LOOKUPS),
        ),
        symbol="M_lookup",
        label="lookup tables' weights",
        base="byte",
    ),
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

_PREFILL = [
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

#: The notation of what the workload, the device and the layer table give, and of the flags the fields set.
NOTATION: dict[str, Quantity] = {
    "head_dim": quantity("d", "", "head dimension"),
    "context_window": quantity("s_win", "", "the model's context window"),
    "sliding_window": quantity("W", "", "sliding attention window"),
    "experts": quantity("E", "", "routed experts"),
    "experts_per_token": quantity("k_exp", "", "experts per token"),
    "active_parameters": quantity("P_active", "", "active parameters"),
    "replicated_parameters": quantity("P_rep", "", "parameters every device holds whole"),
    "kv_projection_parameters": quantity("P_kv", "", "parameters of the K and V projections"),
    "cache_values_per_token": quantity("n_kv", "", "cached values per token on one device, every layer"),
    "expert_parameters": quantity("P_exp", "", "parameters of the routed experts"),
    "lookup_split_parameters": quantity("P_lookup,tp", "", "parameters of the lookup tables split over t"),
    "lookup_replicated_parameters": quantity("P_lookup,rep", "", "parameters of the lookup tables every device holds"),
    "kept_bytes_per_parameter": quantity("b_16", "byte", "bytes per weight a format keeps in 16 bits"),
    "kept_parameters": quantity("P_16", "", "parameters a weight format keeps in 16 bits"),
    "kept_replicated_parameters": quantity("P_16,rep", "", "16-bit parameters every device holds whole"),
    "kept_kv_projection_parameters": quantity("P_16,kv", "", "16-bit parameters of the K and V projections"),
    "kept_expert_parameters": quantity("P_16,exp", "", "16-bit parameters of the routed experts"),
    "kept_lookup_split_parameters": quantity(
        "P_16,lookup,tp", "", "16-bit parameters of the lookup tables split over t"
    ),
    "kept_lookup_replicated_parameters": quantity(
        "P_16,lookup,rep", "", "16-bit parameters of the lookup tables every device holds"
    ),
    "has_sliding_window": quantity("[W]", "", "sliding-window attention"),
    "has_experts": quantity("[E > 0]", "", "a mixture of experts"),
    "has_weight_format": quantity("[format]", "", "a weight format given"),
    "has_mixed_cache": quantity("[mixed]", "", "layers of several kinds of cache"),
    "has_layer_kinds": quantity("[kinds]", "", "layers of several kinds, or not plain attention"),
    "full_attended_width": quantity("w_att", "", "attended width of the full-context layers, summed"),
    "window_attended_width": quantity("w_att,W", "", "attended width of the windowed layers, summed"),
    "window_cache_values": quantity("n_kv,W", "", "cached values per token of the windowed layers, one device"),
    "cache_window": quantity("W_layer", "", "window of the windowed layers"),
    "full_cache_values": quantity("n_kv,full", "", "cached values per token of the full-context layers, one device"),
    "state_values": quantity("n_state", "", "values of the fixed states per sequence, one device"),
    "prompt_given": quantity("[s_p given]", "", "prompt length stated"),
}

#: The serving equations, in reading order.
EQUATIONS = Equations(
    "the serving equations",
    (*_WEIGHTS, *_CACHE, *_FIT, *_DECODE, *_PREFILL, *TIMING),
    {**NOTATION, **TIMING_NOTATION},
    constants={"activation_bytes": ACTIVATION_BYTES},
)
