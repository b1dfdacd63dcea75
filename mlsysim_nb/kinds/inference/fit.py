"""The serving equations of the fit: one device's memory against its capacity, and how many sequences fit.

Every memory figure is per device of the ``t`` that tensor parallelism spreads the model over, in bytes.

Sources
-------
* vLLM's engine arguments, in its own source (``EngineArgs`` in ``vllm/engine/arg_utils.py`` of
  vllm-project/vllm, the 0.6 releases): ``block_size: int = 16`` and ``gpu_memory_utilization: float = 0.90``, the
  share of each device the engine takes for the weights, its profiled activations and the cache blocks (its
  current ``CacheConfig``, docs.vllm.ai, defaults to 0.92). The default ``runtime_reserve`` of 0.1 is the share
  the 0.90 leaves outside it; the activations vLLM measures inside its 90 % are not
  counted here, so the largest batch is an upper bound on vLLM's.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["FIT"]

_D = defined

#: The fit on one device and the largest batch and context, in reading order.
FIT: list[Defined] = [
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
