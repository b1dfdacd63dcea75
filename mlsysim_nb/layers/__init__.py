"""A transformer layer described once, as data: every tensor autograd saves for the backward pass.

The coefficients the memory model uses (Korthikanti et al.'s 34 and 5, the 10 bytes tensor parallelism
leaves whole, the 18 + 4f of an f·h-wide MLP) are sums over :data:`GPT_LAYER`, computed here and nowhere
typed by hand.
"""

from mlsysim_nb.layers.table import (
    GPT_LAYER,
    SavedTensor,
    ffn_bytes,
    ffn_free_bytes,
    per_token_bytes,
    projection_tensors,
    replicated_bytes,
    score_bytes,
)

__all__ = [
    "GPT_LAYER",
    "SavedTensor",
    "ffn_bytes",
    "ffn_free_bytes",
    "per_token_bytes",
    "projection_tensors",
    "replicated_bytes",
    "score_bytes",
]
