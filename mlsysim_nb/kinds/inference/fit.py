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
* vLLM's start-up log line "Maximum concurrency for s tokens per request: X" (vllm-project/vllm at commit
  001cabc1be16a59a70d720ed61a13b678c060a18): ``_report_kv_cache_config`` and
  ``get_max_concurrency_for_kv_cache_config`` in ``vllm/v1/core/kv_cache_utils.py`` divide the cache blocks
  (``get_num_blocks``: the memory for blocks over one block of every layer) by the blocks one request at
  ``max_model_len`` reserves, which ``SlidingWindowSpec.max_memory_usage_bytes`` in
  ``vllm/v1/kv_cache_interface.py`` counts for a sliding window as ``cdiv(min(W − 1 + C, s), s_blk) + 1``: the
  window's tokens before the step, a prefill chunk of ``C = max_num_batched_tokens`` tokens, and one block more
  for a window that starts inside a block (``FullAttentionSpec``: ``cdiv(s, s_blk)``). ``C`` defaults to
  8192 for ``vllm serve`` on a GPU of at least 70 GiB that is not an A100, else 2048
  (``EngineArgs.get_batch_defaults`` in ``vllm/engine/arg_utils.py`` of recent releases; early V1 releases, e.g.
  at commit 001999d2f360c2c5da23a916510c273b1a73d06c, chose 8192 for an H100 or H200 by name: the same for the
  catalog's devices but the B200, MI300X and MI325X). A TPU has
  defaults of its own, so there the chunk must be stated. The steady state holds fewer blocks: vLLM's
  ``SlidingWindowManager`` frees each block wholly before the window, so a decoding sequence keeps the blocks
  its window spans (``blocks_per_sequence``).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["FIT", "STARTUP", "default_chunk"]

#: vllm serve's larger default prefill chunk is for GPUs of at least 70 GiB, an A100 excepted.
_LARGE_GPU = 70 * 2**30
#: The makers of the catalog's GPUs, which vLLM's rule covers (a TPU has a table of its own, a Gaudi its plugin).
_GPU_VENDORS = frozenset({"NVIDIA", "AMD"})


def default_chunk(node: Any) -> int | None:
    """The default max_num_batched_tokens of vllm serve on ``node``: 8192 on a GPU of ≥ 70 GiB but an A100, else 2048.

    ``None`` for a device the rule does not cover (its default is not the GPUs'): a chunk must then be stated.
    """
    if node.vendor not in _GPU_VENDORS:
        return None
    large = node.memory._capacity_bytes >= _LARGE_GPU and "a100" not in node.name.lower()  # noqa: SLF001
    return 8192 if large else 2048


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
        "as vLLM's hybrid allocator keeps them, the blocks their window spans at this step; a state whole).",
        unit="MB",
        cases=(
            Case(
                "layers of several kinds",
                "(blocks_per_sequence * block_size * full_cache_values"
                " + (ceil(context_length / block_size) - floor(max(context_length - cache_window, 0) / block_size))"
                " * block_size * window_cache_values + state_values) * kv_bytes_per_value",
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
        "blocks; a hybrid's windowed layers and states counted whole first (a context past the window, on a block "
        "boundary: a window of whole blocks spans ⌈W/s_blk⌉ of them there).",
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
        doc="Longest context per sequence that fits at this batch, at most the model's context window (a whole "
        "number of blocks, where a window spans ⌈W/s_blk⌉ blocks; between block boundaries it may span one more).",
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

#: vLLM's start-up figure, beside the steady state's largest batch: what it reserves per request.
STARTUP: list[Defined] = [
    _D(
        "chunk_tokens",
        doc="Tokens vLLM's scheduler takes per step (its max_num_batched_tokens: a prefill chunk), as stated or "
        "vllm serve's default for the device.",
        cases=(
            Case("stated", "chunk_length", when="chunk_given"),
            Case("vllm serve's default for the device", "default_chunk"),
        ),
        symbol="C",
        label="tokens per scheduler step (prefill chunk)",
    ),
    _D(
        "vllm_cache_blocks",
        "max(floor(kv_budget / (block_size * kv_cache_per_token)), 0)",
        "Cache blocks vLLM makes on each device: the memory for cache blocks over one block of every layer.",
        symbol="N_blk",
        label="cache blocks on one device",
    ),
    _D(
        "vllm_blocks_per_request",
        doc="Blocks vLLM reserves per request of s tokens at start-up (for each of its n_grp groups of layers): "
        "under a sliding window, the window's W − 1 earlier tokens and a prefill chunk of C, at most s, plus one "
        "block for a window that starts inside a block; under full attention, the whole context.",
        cases=(
            Case(
                "sliding window",
                "cache_groups * (ceil(min(sliding_window - 1 + chunk_tokens, context_length) / block_size) + 1)",
                when="has_sliding_window",
            ),
            Case("full attention", "cache_groups * ceil(context_length / block_size)"),
        ),
        symbol="n_blk,vLLM",
        label="blocks vLLM reserves per request",
    ),
    _D(
        "vllm_max_concurrency",
        "vllm_cache_blocks / vllm_blocks_per_request",
        'vLLM\'s logged "Maximum concurrency for s tokens per request": its cache blocks over the blocks it '
        "reserves per request. Under a sliding window it is below the steady state's largest batch, which holds "
        "the window's blocks only.",
        note="vLLM subtracts its profiled activations from the memory for cache blocks, which this kind does not "
        "count, so a real log shows less.",
        symbol="X_vLLM",
        label="vLLM's logged maximum concurrency",
    ),
]
