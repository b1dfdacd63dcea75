"""A transformer layer described once, as data: every weight and every tensor autograd saves for backward.

The table
---------
Each saved tensor is a :class:`Saved` row: its shape in the layer's symbols (s, b, h, a, kv, d, f, E, k, v;
see :mod:`mlsysim_nb.layers.rows`), its element width (``"act"``: the activation dtype, ``"mask"``: a
dropout mask, ``"fp32"``: a framework's upcast, ``"int64"``: an index), which recomputation drops it
(``recompute``: ``"selective"`` for the attention scores; full recomputation keeps only the layer input)
and how a tensor-parallel group splits it (``split``: ``"tp"``, ``"sp"`` under sequence parallelism only,
``"none"``). Weights are :class:`Weight` rows. Two accountings build the rows of an :class:`Architecture`:

* ``"megatron"`` (:mod:`~mlsysim_nb.layers.megatron`): Korthikanti et al. (2022)'s count, generalised to
  grouped-query attention, gated MLPs, no dropout, fused attention and mixtures of experts;
* ``"transformers"`` (:mod:`~mlsysim_nb.layers.transformers`): what Hugging Face transformers' own modules
  keep, measured (:mod:`mlsysim_nb.measure.hf`); each row that differs from the paper's says why (``note``).

Korthikanti's coefficients the memory model uses (34 and 5, the 10 bytes tensor parallelism leaves whole,
18 + 4f) are sums over :data:`GPT_LAYER`, the paper's rows of a GPT-style layer, computed and never typed.

Mixers, layers and caches
-------------------------
What a layer mixes tokens with (attention today) is a module of :mod:`mlsysim_nb.layers.mixers`, which owns its
weights, its saved rows, its cache rows (:class:`Cached`: what a serving engine keeps per token or per sequence)
and its tensor-parallel rule, one per engine (Megatron-LM for the training kinds, vLLM for serving). A model is
a pattern of :class:`Layer` (a mixer and a window) repeated over its layers; :func:`cache_bytes` sums the cache
rows of every layer as :func:`parameter_count` sums the weight rows.

Computing one layer's saved bytes
---------------------------------
Build the architecture from a workload (``workload.architecture()``) or directly, then::

    >>> from mlsysim_nb.layers import Architecture, layer_saved_bytes, output_saved_bytes, layer_rows, lines
    >>> gpt = Architecture(hidden_dim=1600, heads=25)          # GPT-style: 4h GeLU MLP, LayerNorm, dropout
    >>> s, b, h, a = 1024, 1, 1600, 25
    >>> layer_saved_bytes(gpt, seq_len=s, micro_batch=b, dtype_bytes=2) == s * b * h * (34 + 5 * a * s / h)
    True
    >>> llama = Architecture(hidden_dim=4096, heads=32, kv_heads=8, ffn_dim=14336, mlp="gated", activation="silu",
    ...                      norm="rmsnorm", attention_dropout=0, hidden_dropout=0, vocab_size=128256,
    ...                      tied_embeddings=False, positions="rotary", bias="none", model_type="llama")
    >>> layer_saved_bytes(llama, seq_len=8192, micro_batch=1, dtype_bytes=2, attention="fused") / 2**20
    1089.0
    >>> output_saved_bytes(llama, seq_len=8192, micro_batch=1, dtype_bytes=2) / 2**30
    4.0390625
    >>> layer_saved_bytes(llama, seq_len=8192, micro_batch=1, dtype_bytes=2, attention="fused",
    ...                   implementation="transformers", strategy="selective") / 2**20
    1569.0625
    >>> parameter_count(llama, layers=32)  # Llama 3.1 8B
    8030261248

Keywords of :func:`layer_saved_bytes`: ``strategy`` (``"none"``, ``"selective"``, ``"full"``),
``attention`` (``"eager"``, ``"fused"``), ``implementation`` (``"megatron"``, ``"transformers"``),
``dtype_bytes`` (2 or 4), ``tensor_parallel`` (t) and ``sequence_parallel``, ``device`` (``"gpu"``, or
``"cpu"`` for the named :data:`DEVICE_EFFECTS`), ``per_model`` (include the rows a model keeps once, the
rotary tables; leave out to multiply by the layer count, then add them once). :func:`output_saved_bytes`
gives the embeddings, final norm, output layer and loss. For line items, ``lines(layer_rows(arch, ...),
arch.dims(s, b), dtype_bytes=2, strategy=...)`` returns each kept row with its bytes (``Line.row.label``,
``Line.bytes``). Parameters: :func:`parameter_count` (``active=True``: the experts one token uses).
:func:`model_saved_bytes` adds L layers, the per-model rows once and the output layer::

    >>> model_saved_bytes(llama, layers=32, seq_len=8192, micro_batch=1, dtype_bytes=2, strategy="full",
    ...                   attention="fused") / 2**30  # 32 layer inputs (2 GiB) beside FP32 logits (3.9 GiB)
    6.0390625

For a scenario (the integrator's recipe): ``arch = workload.architecture(reference=workload.reference_style)``
and, for the ``"megatron"`` implementation, ``reference_scaling=workload.reference_style``: the reference
implementation (mlsysim) counts its own workloads' layers multi-head and scales the paper's 16-bit bytes,
masks included, to the precision; with both, the table reproduces every catalog activation scenario to 1e-9
(``tests/unit/test_layers.py``). Workloads with an architecture (``Workloads.configuration(key)``,
``Workload.from_hf_config``) give the real layer. Fused attention adds the FP32 log-sum-exp (4·a·s·b bytes)
that the reference's FlashAttention figure leaves out.
"""

from mlsysim_nb.layers.account import (
    ATTENTIONS,
    DEVICES,
    IMPLEMENTATIONS,
    STRATEGIES,
    Line,
    layer_rows,
    layer_saved_bytes,
    lines,
    model_saved_bytes,
    output_rows,
    output_saved_bytes,
)
from mlsysim_nb.layers.architecture import Architecture, Layer
from mlsysim_nb.layers.cache import CacheValues, cache_bytes, cache_values, tensor_parallel_refusal
from mlsysim_nb.layers.megatron import LAYER_INPUT
from mlsysim_nb.layers.mixers import ENGINES, Mixer, register_mixer_path
from mlsysim_nb.layers.rows import DEVICE_EFFECTS, Cached, Dims, Saved, Weight
from mlsysim_nb.layers.table import (
    GPT_LAYER,
    SavedTensor,
    ffn_bytes,
    ffn_free_bytes,
    paper_rows,
    per_token_bytes,
    projection_tensors,
    replicated_bytes,
    score_bytes,
)
from mlsysim_nb.layers.weights import layer_weights, model_weights, parameter_count

__all__ = [
    "ATTENTIONS",
    "DEVICES",
    "DEVICE_EFFECTS",
    "ENGINES",
    "GPT_LAYER",
    "IMPLEMENTATIONS",
    "LAYER_INPUT",
    "STRATEGIES",
    "Architecture",
    "CacheValues",
    "Cached",
    "Dims",
    "Layer",
    "Line",
    "Mixer",
    "Saved",
    "SavedTensor",
    "Weight",
    "cache_bytes",
    "cache_values",
    "ffn_bytes",
    "ffn_free_bytes",
    "layer_rows",
    "layer_saved_bytes",
    "layer_weights",
    "lines",
    "model_saved_bytes",
    "model_weights",
    "output_rows",
    "output_saved_bytes",
    "paper_rows",
    "parameter_count",
    "per_token_bytes",
    "projection_tensors",
    "register_mixer_path",
    "replicated_bytes",
    "score_bytes",
    "tensor_parallel_refusal",
]
