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

from mlsysim_nb import layers
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture

__all__ = ["layer_time_inputs", "projection_operations"]

#: bytes of a dropout mask value (PyTorch keeps a boolean per element)
_MASK = 1


@lru_cache(maxsize=256)
def _inputs(arch: Architecture, width: float, eager: bool) -> tuple[float, ...]:
    dims = arch.dims(1, 1)
    matrix = float(
        sum(
            w.parameters(dims, active=True)
            for w in layers.layer_weights(arch)
            if "h" in w.shape and len(w.shape) >= 2  # a matrix a token multiplies (biases and norms aside)
        )
    )
    h, f, a, kv, d = dims.h, dims.f, dims.a, dims.kv, dims.d
    mlps = (arch.experts_per_token if arch.moe else 1) + (arch.shared_experts if arch.moe else 0)
    ins = 2 if arch.mlp == "gated" else 1
    # values moved per token that only sequence parallelism splits: 2 norms, 2 residual adds (+ dropout masks)
    sp_bytes = (2 * 2 * h + 2 * 3 * h) * width + (2 * h * _MASK if arch.hidden_dropout else 0)
    # split by t: the MLP activation (per MLP a token uses), rotary positions on queries and keys
    tp_bytes = mlps * (ins + 1) * f * width + (2 * (a + kv) * d * width if arch.positions == "rotary" else 0)
    # per attention score (a·s per token): fused softmax read + write, dropout read + write + mask
    score_bytes = (2 * width + (2 * width + _MASK if arch.attention_dropout else 0)) if eager else 0.0
    # matrix operands: the whole-width side (an input and an output of h per block), the sides t splits
    unsplit = 2 * h * (1 + mlps)
    split = matrix / h + 2 * a * d + 2 * kv * d
    score_values = 2 if eager else 0
    return (matrix, float(a * d), float(sp_bytes), float(tp_bytes), float(score_bytes), float(unsplit),
            float(split), float(2 * a * d + 2 * kv * d), float(score_values))  # fmt: skip


def _refuse_other_layers(workload: Any, arch: Architecture) -> None:
    """Every layer is counted as attention and an MLP: a model with other layers (a Mamba-2 hybrid) is refused."""
    other = sorted({layer.mixer for layer in arch.layer_kinds() if layer.mixer != "attention" or not layer.mlp})
    if other:
        msg = (f"models {workload.name}, whose layers are not all attention and an MLP ({', '.join(other)}): the time "
               "of a Mamba-2 layer or of a layer of one part is not described yet")  # fmt: skip
        raise FieldError("TrainingTimeScenario", "layout", msg)


def layer_time_inputs(workload: Any, ffn_multiple: float, width: float, attention: str) -> dict[str, Any]:
    """The layer's matrix parameters, attention width and element-wise bytes per token, by name.

    ``ffn_multiple`` sizes the MLP of a workload without an architecture of its own (Korthikanti's ``f``);
    ``width`` is the activation width in bytes; ``attention`` is ``"eager"`` or ``"fused"``.
    """
    arch = workload.architecture()
    _refuse_other_layers(workload, arch)
    if workload.reference_style:  # the MLP is f·h wide, as the activation scenario says
        arch = dataclasses.replace(arch, ffn=round(float(ffn_multiple) * int(workload.hidden_dim)))
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
def _projections(arch: Architecture) -> tuple[tuple[float, float], ...]:
    dims = arch.dims(1, 1)
    fused: dict[tuple[str, bool], float] = {}
    for w in layers.layer_weights(arch):
        if "h" in w.shape and len(w.shape) >= 2:  # a matrix a token multiplies
            # the matrices of one block that read the same input run as one operation (Megatron-LM's fused QKV, a
            # gated MLP's gate and up); the others, one each
            key = (f"{w.block}:{w.key}" if w.shape[0] != "h" else w.block, w.per_expert)
            fused[key] = fused.get(key, 0.0) + float(w.parameters(dims, active=True))
    experts = float(arch.experts) if arch.moe else 1.0
    return tuple((parameters, experts if per_expert else 1.0) for (_, per_expert), parameters in fused.items())


def projection_operations(workload: Any, ffn_multiple: float) -> tuple[tuple[tuple[float, float], ...], float]:
    """A layer's fused projections and the values its MLP activation's kernel moves per token.

    Per fused projection: its active parameters and the operations they run as (E for an expert's); then the
    values the activation reads and writes per token (its input(s) and output of ``f``).
    """
    arch = workload.architecture()
    if workload.reference_style:
        arch = dataclasses.replace(arch, ffn=round(float(ffn_multiple) * int(workload.hidden_dim)))
    ins = 2 if arch.mlp == "gated" else 1
    return _projections(arch), float((ins + 1) * arch.dims(1, 1).f)
