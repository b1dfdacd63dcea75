"""What a serving engine keeps per sequence: the cache rows of every layer, summed as the weights are.

Each layer's mixer gives its :class:`~mlsysim_nb.layers.rows.Cached` rows (attention: K and V, ``kv·d`` values
each per token). On one of ``t`` devices a row holds its symbols' sizes under the engine's tensor-parallel rule
(the mixer's ``per_device``: vLLM's for serving). Per-token rows grow with the context up to the layer's
window; the others are a fixed state per sequence.

    >>> from mlsysim_nb.layers import Architecture, Layer, cache_bytes, cache_values
    >>> llama = Architecture(hidden_dim=4096, heads=32, kv_heads=8, layers=32)  # Llama 3.1 8B's attention
    >>> cache_values(llama).per_token  # 2 · L · kv · d values per token, under no window
    ((None, 65536.0),)
    >>> cache_bytes(llama, context=4096, bytes_per_value=2) / 2**30  # one sequence at 16 bits
    0.5
    >>> cache_values(llama, tensor_parallel=16).per_token  # vLLM: 8 heads on 16 devices, one head each
    ((None, 8192),)
    >>> local = Architecture(
    ...     hidden_dim=4096, heads=32, kv_heads=8, layers=32, pattern=(Layer("attention", 4096), Layer("attention"))
    ... )  # local and global, alternating
    >>> cache_bytes(local, context=8192, bytes_per_value=2) / 2**30  # 16 layers of 4,096 and 16 of 8,192 tokens
    0.75
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from mlsysim_nb.layers import mixers
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.rows import SYMBOLS, Dims

__all__ = ["CacheValues", "cache_bytes", "cache_values", "device_dims", "tensor_parallel_refusal"]


class CacheValues(NamedTuple):
    """Values a sequence's cache holds on one device, over every layer.

    ``per_token``: ``(window, values per token)`` pairs, one per window of the model's layers (``None``: the
    whole context); ``per_sequence``: the fixed state, whatever the context.
    """

    per_token: tuple[tuple[int | None, Any], ...]
    per_sequence: Any


def device_dims(arch: Architecture, mixer: mixers.Mixer, tensor_parallel: Any, engine: str) -> Dims:
    """The symbols' sizes on one of ``tensor_parallel`` devices under ``engine``'s rule for ``mixer``."""
    dims = arch.dims(1, 1)
    own = mixer.per_device(arch, tensor_parallel, engine)
    common = {k: v for k, v in own.items() if k in SYMBOLS}
    extra = dict(dims.extra) | {k: v for k, v in own.items() if k not in SYMBOLS}
    return dataclasses.replace(dims, **common, extra=tuple(extra.items()))


def tensor_parallel_refusal(arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
    """The rule ``tensor_parallel`` breaks for some layer of ``arch`` under ``engine``, and the engine's reason."""
    for layer in arch.layer_kinds():
        reason = mixers.find(layer.mixer).refusal(arch, tensor_parallel, engine)
        if reason is not None:
            return reason
    return None


def cache_values(arch: Architecture, *, tensor_parallel: Any = 1, engine: str = "vllm") -> CacheValues:
    """The cache's values per token (by window) and per sequence on one device, summed over the model's layers."""
    windows: dict[int | None, Any] = {}
    state: Any = 0
    for layer, count in arch.layer_counts():
        mixer = mixers.find(layer.mixer)
        dims = device_dims(arch, mixer, tensor_parallel, engine)
        for row in mixer.cache(arch):
            if row.per_token:
                windows[layer.window] = windows.get(layer.window, 0) + count * row.elements(dims)
            else:
                state = state + count * row.elements(dims)
    return CacheValues(tuple(windows.items()), state)


def cache_bytes(
    arch: Architecture,
    *,
    context: Any,
    batch: Any = 1,
    bytes_per_value: Any = 2,
    tensor_parallel: Any = 1,
    engine: str = "vllm",
) -> Any:
    """Bytes of the cache of ``batch`` sequences of ``context`` tokens on one device (arrays in a sweep)."""
    found = cache_values(arch, tensor_parallel=tensor_parallel, engine=engine)

    def kept(window: int | None) -> Any:  # tokens a layer of this window keeps
        if window is None:
            return context
        return np.minimum(context, window) if np.ndim(context) else min(context, window)

    tokens = sum(values * kept(window) for window, values in found.per_token)
    return batch * (tokens + found.per_sequence) * bytes_per_value
