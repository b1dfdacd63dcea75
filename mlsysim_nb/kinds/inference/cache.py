"""The serving equations of the key/value cache on one device: per token, per sequence, in paged blocks.

Every memory figure is per device of the ``t`` that tensor parallelism spreads the model over, in bytes.

Sources
-------
* Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with PagedAttention",
  SOSP '23, Sec. 3 and 4: the KV cache of one token is ``2 × layers × heads × head_dim × bytes`` (800 KB for
  OPT-13B in FP16), kept in fixed-size blocks of ``s_blk`` tokens (16 by default in vLLM), so a sequence wastes
  at most one block's unfilled slots.
* Ainslie et al. (2023), "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head
  Checkpoints": ``a_kv`` key/value heads shared by the ``a`` query heads shrink the cache by ``a/a_kv``.
* vLLM's ``SlidingWindowManager.remove_skipped_blocks`` (``vllm/v1/core/single_type_kv_cache_manager.py`` of
  vllm-project/vllm, at commit 002f34915134cfd1a7d6ed777edd67dcc2289466; later releases count the same
  ``num_computed_tokens − W + 1`` skipped tokens in ``get_num_skipped_tokens``) frees the blocks wholly before a
  window of ``W`` tokens: at a context of ``s`` tokens a
  sequence keeps blocks ``⌊(s − W)/s_blk⌋`` to ``⌈s/s_blk⌉ − 1``, ``⌈W/s_blk⌉`` of them when the window starts on a
  block boundary and one more when it does not.
* The cache per token is the layer table's: the cache rows of every layer's mixer, summed on one device
  (:func:`mlsysim_nb.layers.cache_values`), as the parameter count sums the weight rows.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["CACHE"]

_D = defined

#: The cache on one device, in reading order.
CACHE: list[Defined] = [
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
        doc="Cache blocks each sequence takes: its cached tokens, rounded up to whole blocks; under a sliding window "
        "the blocks its window spans at this step, one more than the window's own where the window starts inside "
        "a block (the blocks wholly before it freed, as vLLM's sliding-window manager frees them).",
        cases=(
            Case(
                "sliding window: the blocks the window spans",
                "ceil(context_length / block_size) - floor(max(context_length - sliding_window, 0) / block_size)",
                when="has_sliding_window",
            ),
            Case("full attention", "ceil(kv_tokens / block_size)"),
        ),
        symbol="n_blk",
        label="blocks per sequence",
    ),
    _D(
        "block_waste",
        doc="The block allocator's rounding: the unfilled slots of each sequence's last block (of each group), and "
        "under a window off a block boundary the slots of its first block before the window.",
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
