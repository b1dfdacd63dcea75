"""What the layer table gives the time equations: a layer's matrix work and its element-wise memory traffic.

Read off the workload's own layer (:func:`mlsysim_nb.layers.layer_weights`), never typed as a constant:

* **matrix parameters per layer** (``P_mm``): the weights a token multiplies, the rows whose shape holds the
  hidden width ``h`` and another axis (Q, K, V and output projections, the MLP's projections, a router, each
  expert a token is routed to: ``k`` of the ``E``). A forward pass does 2 FLOPs per such parameter and token.
  For Korthikanti's GPT layer that is ``12·h²`` (``4·h²`` attention, ``8·h²`` MLP at ``f = 4``), so the forward
  pass of a layer is ``24·b·s·h²`` plus the attention scores;
* **attention width** (``A = a·d``): the query heads times their width. The scores ``Q·Kᵀ`` and their product
  with ``V`` are ``2·s·A`` FLOPs per token each in the forward pass, over the whole sequence: a causal mask
  is computed as a full square (Korthikanti et al. 2022, Appendix A, count it whole; a kernel that skips the
  masked half does less). Grouped-query attention keeps ``A = a·d``: every query head still meets every key;
* **element-wise traffic per token**, the bytes the memory-bound operations read and write in a layer's
  forward pass, by how the layout splits them. Each norm reads and writes ``h`` values; each residual add
  reads ``2·h`` and writes ``h``; a hidden dropout (fused with the add, as Megatron-LM does) writes a
  one-byte mask of ``h``; the MLP's activation reads its input(s) of width ``f`` and writes ``f`` (a gated
  MLP reads two); rotary positions read and write the queries and keys. These are split by ``t`` only with
  sequence parallelism (the norms, adds and dropouts) or always (the MLP activation, rotary). With eager
  attention, the fused scale-mask-softmax reads and writes ``a·s`` scores per token and an attention dropout
  reads and writes them again with a one-byte mask (split by ``t``); fused attention (FlashAttention) keeps the
  scores on chip, so they move no memory. Korthikanti's GPT layer moves ``22·h`` bytes per token that only
  SP splits, ``16·h`` that t splits, and ``9`` bytes per score. Biases are added inside the matrix kernels;
* **matrix operands per token**, the values the matrix products themselves read and write in a layer's forward
  pass (Calculon's layer model, Isaev et al. 2023: a product reads its input and its weights and writes its
  output). The side of width ``h`` is whole on every device: the attention block and each MLP a token uses read
  an input of ``h`` and write an output of ``h`` (``2·h`` each); the other sides are split by ``t``: the other
  axis of every matrix with an ``h`` axis (``P_mm/h``, ``12·h`` for Korthikanti's layer), and the attention
  products' queries, keys and values read and output written (``2·a·d + 2·kv·d``). With eager attention the
  scores ``Q·Kᵀ`` writes are read again by scores·V: 2 values per score (split by ``t``); fused attention keeps
  them on chip.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

import numpy as np

from mlsysim_nb import layers
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture

__all__ = ["attended_keys", "layer_time_inputs", "projection_operations"]

#: bytes of a dropout mask value (PyTorch keeps a boolean per element)
_MASK = 1


#: The token mixers whose time this module describes.
_MIXERS = ("attention", "latent_attention")


def _mixer_widths(arch: Architecture, layer: Any) -> tuple[float, float, float]:
    """A layer's attention width ``A``, its products' operand values per token, its rotary values per token.

    ``A`` is the heads times their width in the score products: ``a·d``; latent attention's ``Q·Kᵀ`` runs over
    ``d_qk`` and scores·V over ``d_v``, so its ``A`` is their mean, ``a·(d_qk + d_v)/2`` (the products' FLOPs are
    ``2·s·a·d_qk + 2·s·a·d_v = 4·s·A`` per token).
    """
    dims = arch.dims(1, 1)
    a, kv, d = dims.a, dims.kv, dims.d
    if layer.mixer == "latent_attention":
        qk, v, rope = (float(dims.size((symbol,))) for symbol in ("d_qk", "d_v", "d_rope"))
        # Q and the decompressed K read (a·d_qk each), V read and the output written (a·d_v each); rotary on the
        # queries' and the one shared key's d_rope columns
        return a * (qk + v) / 2, 2 * a * (qk + v), (a + 1) * rope
    return float(a * d), float(2 * a * d + 2 * kv * d), float((a + kv) * d)


def _layer_inputs(arch: Architecture, layer: Any, width: float, eager: bool) -> tuple[float, ...]:
    """One kind of layer's inputs (see :func:`_inputs`)."""
    dims = arch.dims(1, 1)
    rows = [w for w in layers.layer_weights(arch, layer) if w.multiplied]
    matrix = float(sum(w.parameters(dims, active=True) for w in rows))
    h = dims.h
    f = dims.size(("f_dense",)) if arch.moe and layer.dense else dims.f
    mlps = (arch.experts_per_token + arch.shared_experts) if arch.moe and not layer.dense else 1
    ins = 2 if arch.mlp == "gated" else 1
    attention_width, attention_io, rotary = _mixer_widths(arch, layer)
    # values moved per token that only sequence parallelism splits: the norms (four with Gemma's sandwich norms),
    # 2 residual adds (+ dropout masks)
    norms = 4 if arch.sandwich_norms else 2
    sp_bytes = (norms * 2 * h + 2 * 3 * h) * width + (2 * h * _MASK if arch.hidden_dropout else 0)
    # split by t: the MLP activation (per MLP a token uses), rotary positions on queries and keys, Q and K norms
    qk_norm = 2 * (dims.a + dims.kv) * dims.d * width if arch.qk_norm and layer.mixer == "attention" else 0
    tp_bytes = mlps * (ins + 1) * f * width + (2 * rotary * width if arch.positions == "rotary" else 0) + qk_norm
    # per attention score (a·s per token): fused softmax read + write, dropout read + write + mask
    score_bytes = (2 * width + (2 * width + _MASK if arch.attention_dropout else 0)) if eager else 0.0
    # matrix operands: the whole-width side (an input and an output of h per block), the sides t splits (a matrix
    # between two other widths reads its input and writes its output), the attention products' own
    unsplit = 2 * h * (1 + mlps)
    split = sum(
        w.parameters(dims, active=True) / h if "h" in w.shape
        else w.parameters(dims, active=True) / dims.size(w.shape[:1]) + w.count * dims.size(w.shape[:1])
        for w in rows
    ) + attention_io  # fmt: skip
    return (matrix, attention_width, sp_bytes, tp_bytes, score_bytes, unsplit, split, attention_io)


@lru_cache(maxsize=256)
def _inputs(arch: Architecture, width: float, eager: bool) -> tuple[float, ...]:
    """A layer's inputs on average over the model's layers (its dense and its expert layers, each by number)."""
    counts = arch.layer_counts()
    total = sum(count for _, count in counts)
    per_kind = [(_layer_inputs(arch, layer, width, eager), count) for layer, count in counts]
    mean = [sum(count * values[i] for values, count in per_kind) / total for i in range(8)]
    return (*mean, 2.0 if eager else 0.0)


def _refuse_other_layers(workload: Any, arch: Architecture) -> None:
    """Every layer is counted as attention (or latent attention) and an MLP: a model with other layers is refused."""
    other = sorted({layer.mixer for layer in arch.layer_kinds() if layer.mixer not in _MIXERS or not layer.mlp})
    if other:
        msg = (f"models {workload.name}, whose layers are not all attention and an MLP ({', '.join(other)}): the time "
               "of a Mamba-2 layer or of a layer of one part is not described yet")  # fmt: skip
        raise FieldError("TrainingTimeScenario", "layout", msg)


def attended_keys(workload: Any, sequence: Any, attention: str) -> tuple[Any, bool]:
    """Keys each query's score products meet per layer, on average over the layers, and whether a window cuts them.

    Eager attention multiplies the whole ``s × s`` square and masks it afterwards, whatever the window; a fused
    kernel (FlashAttention, SDPA's) skips the blocks a sliding window masks, so a windowed layer meets
    ``min(s, W)`` keys. The causal half is counted as computed either way (Korthikanti et al. 2022, Appendix A).
    """
    counts = workload.architecture().layer_counts()
    s = np.asarray(sequence, dtype=float)
    if attention == "eager" or all(layer.window is None for layer, _ in counts):
        return s, False
    total = sum(count for _, count in counts)
    keys = sum(count * (s if layer.window is None else np.minimum(s, layer.window)) for layer, count in counts)
    return keys / total, True


def layer_time_inputs(workload: Any, ffn_multiple: float, width: float, attention: str) -> dict[str, Any]:
    """The layer's matrix parameters, attention width and element-wise bytes per token, by name.

    ``ffn_multiple`` sizes the MLP of a workload without an architecture of its own (Korthikanti's ``f``);
    ``width`` is the activation width in bytes; ``attention`` is ``"eager"`` or ``"fused"``.
    """
    arch = workload.architecture()
    _refuse_other_layers(workload, arch)
    if workload.reference_style:  # the MLP is f·h wide, as the activation scenario says
        arch = dataclasses.replace(arch, ffn_dim=round(float(ffn_multiple) * int(workload.hidden_dim)))
    matrix, attention_width, sp_bytes, tp_bytes, score_bytes, unsplit, split, attention_io, score_values = _inputs(
        arch, float(width), attention == "eager"
    )
    return {
        "unsplit_operand_values": unsplit,
        "split_operand_values": split,
        "attention_operand_values": attention_io,
        "score_operand_values": score_values,
        "layer_matrix_parameters": matrix,
        "attention_width": attention_width,
        "sp_elementwise_bytes": sp_bytes,
        "tp_elementwise_bytes": tp_bytes,
        "score_elementwise_bytes": score_bytes,
    }


@lru_cache(maxsize=256)
def _projections(arch: Architecture) -> tuple[tuple[float, float, float], ...]:
    dims = arch.dims(1, 1)
    counts = arch.layer_counts()
    total = sum(count for _, count in counts)
    experts = float(arch.experts) if arch.moe else 1.0
    operations = []
    for layer, count in counts:
        fused: dict[tuple[str, bool], float] = {}
        for w in layers.layer_weights(arch, layer):
            if w.multiplied:
                # the matrices of one block that read the same input run as one operation (Megatron-LM's fused
                # QKV, a gated MLP's gate and up); the others, one each
                key = (f"{w.block}:{w.key}" if w.shape[0] != "h" else w.block, w.per_expert)
                fused[key] = fused.get(key, 0.0) + float(w.parameters(dims, active=True))
        operations += [(parameters, experts if per_expert else 1.0, count / total)
                       for (_, per_expert), parameters in fused.items()]  # fmt: skip
    return tuple(operations)


def projection_operations(workload: Any, ffn_multiple: float) -> tuple[tuple[tuple[float, float, float], ...], float]:
    """A layer's fused projections and the values its MLP activation's kernel moves per token.

    Per fused projection: its active parameters, the operations they run as (E for an expert's) and the share of
    the model's layers that have it; then the values the activation reads and writes per token (its input(s) and
    output of ``f``).
    """
    arch = workload.architecture()
    if workload.reference_style:
        arch = dataclasses.replace(arch, ffn_dim=round(float(ffn_multiple) * int(workload.hidden_dim)))
    ins = 2 if arch.mlp == "gated" else 1
    return _projections(arch), float((ins + 1) * arch.dims(1, 1).f)
