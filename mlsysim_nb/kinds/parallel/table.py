"""What the layer table gives the many-device equations: one layer's bytes, grouped by how t and SP split them.

The equations (:mod:`mlsysim_nb.kinds.parallel.physics`) keep Korthikanti et al.'s chain,
``s·b·h·(κ_rep/t_SP + (κ_tp + κ_score)/t)``; this module reads the coefficients off the workload's own layer
(:func:`mlsysim_nb.layers.lines`), so the per-device figure is what ``layers.layer_saved_bytes(arch, ...,
tensor_parallel=t, sequence_parallel=sp)`` gives:

* ``sp_row_bytes``: bytes per token and hidden unit of the rows tensor parallelism leaves whole and sequence
  parallelism splits (the norms' and projections' inputs, the dropout masks; 10 for GPT at 16 bits);
* ``tp_row_bytes``: bytes per token and hidden unit of the rows t splits that selective recomputation keeps
  (Q, K, V, the output projection's input, the MLP's wide tensors; 24 for GPT's 4h MLP);
* ``score_row_bytes``: bytes per attention-score element (one of ``b·a·s²``) of the rows selective
  recomputation drops (5 for GPT: softmax output, dropout mask, dropout output).

A reference-style workload (no architecture given) is counted as the reference counts it: multi-head, a
``ffn_multiple``·h MLP and, in the paper's accounting, every row at its 16-bit bytes scaled to the activation
width; its figures are then today's, to the byte. The experts' parameters, which expert parallelism splits,
are counted here too.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

import numpy as np

from mlsysim_nb import layers
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture

__all__ = ["INPUT_ROWS", "around_stack_bytes", "expert_parameters", "layer_coefficients"]

#: The rows around the stack the first pipeline stage keeps (the embedding's side); the rest are the last stage's.
INPUT_ROWS = frozenset({"token_ids", "position_ids", "embedding_dropout_mask"})


def _check_row(row: layers.Saved) -> None:
    """The chain needs every per-layer row linear in s·b (or s²·b for scores) and split by t or by SP."""
    scores = row.shape.count("s") == 2  # an attention score has two sequence axes
    if scores and row.split == "none":  # a sliding layer's SDPA mask under the transformers accounting
        msg = (
            f"keeps a {row.label} of b·s² values whole on every device of a tensor-parallel group (transformers' "
            "SDPA on a sliding layer), which the many-device chain does not hold; choose attention 'eager' or "
            "implementation 'megatron'"
        )
        raise FieldError("ParallelTrainingScenario", "activations", msg)
    linear = row.shape.count("s") == 1 and row.shape.count("b") == 1
    if (scores and row.split != "tp") or (not scores and not linear) or row.split == "none":
        msg = f"layer row {row.key!r} (shape {row.shape}, split {row.split!r}) does not fit the many-device chain"
        raise ValueError(msg)


@lru_cache(maxsize=512)
def _coefficients(
    arch: Architecture, precision: float, attention: str, implementation: str, *, reference: bool
) -> tuple[float, float, float]:
    rows = layers.layer_rows(arch, implementation, attention)
    sp = tp = score = 0.0
    found = layers.lines(rows, arch.dims(1, 1), dtype_bytes=precision, per_model=False,  # type: ignore[arg-type]
                         reference_scaling=reference)  # fmt: skip
    for line in found:
        if line.row.weight_sized:  # counted around the stack (_around)
            continue
        _check_row(line.row)
        if line.row.recompute == "selective":
            score += line.bytes
        elif line.row.split == "sp":
            sp += line.bytes
        else:
            tp += line.bytes
    # one token of one sequence: a token row holds (its coefficient)·h bytes, a score row (its bytes)·a
    return sp / arch.hidden_dim, tp / arch.hidden_dim, score / (arch.heads or 1)  # a score row needs heads to exist


def _architecture(workload: Any, ffn_multiple: int) -> Architecture:
    arch: Architecture = workload.architecture(reference=workload.reference_style)
    if workload.reference_style:  # the reference's MLP is ffn_multiple·h wide (the activation scenario's f)
        arch = dataclasses.replace(arch, ffn_dim=int(ffn_multiple) * arch.hidden_dim)
    return arch


def layer_coefficients(
    workload: Any, precision_bytes: Any, ffn_multiple: Any, attention: Any = "eager", implementation: Any = "megatron"
) -> dict[str, Any]:
    """``sp_row_bytes``, ``tp_row_bytes`` and ``score_row_bytes`` (bytes), element-wise over swept inputs."""

    def one(precision: float, ffn: int, att: str, impl: str) -> tuple[float, float, float]:
        arch = _architecture(workload, ffn)
        # the reference scales the paper's 16-bit bytes to the width; transformers' own rows are counted as kept
        reference = workload.reference_style and str(impl) == "megatron"
        return _coefficients(arch, float(precision), str(att), str(impl), reference=reference)

    values = np.vectorize(one, otypes=[float, float, float])(precision_bytes, ffn_multiple, attention, implementation)
    names = ("sp_row_bytes", "tp_row_bytes", "score_row_bytes")
    return {n: (v if v.ndim else float(v)) for n, v in zip(names, values, strict=True)}


@lru_cache(maxsize=512)
def _around(arch: Architecture, run: tuple[str, str, int, int, float, int, bool]) -> tuple[float, float]:
    """(first stage's, last stage's) bytes around the stack for one micro-batch on one device."""
    implementation, attention, s, b, precision, t, sp = run
    dims = arch.dims(s, b)
    every = layers.layer_rows(arch, implementation, attention)
    shared = tuple(r for r in every if r.per_model)
    kept = layers.lines((*shared, *layers.output_rows(arch, implementation)), dims, dtype_bytes=precision,  # type: ignore[arg-type]
                        tensor_parallel=t, sequence_parallel=sp)  # fmt: skip
    copies = layers.lines(tuple(r for r in every if r.weight_sized and not r.per_model), dims,
                          dtype_bytes=precision)  # type: ignore[arg-type]  # fmt: skip
    # the rows kept once per model (rotary tables) and the weight-sized copies of every layer (Gemma's FP32 1 + w,
    # a few kB a layer) are counted with the first stage, so that one stage (p = 1) holds exactly what the
    # activation scenario's output_activations counts
    first = sum(line.bytes for line in kept if line.row.key in INPUT_ROWS or line.row.per_model)
    first += (arch.layers or 1) * sum(line.bytes for line in copies)
    return first, sum(line.bytes for line in kept) - sum(line.bytes for line in kept if line.row.key in INPUT_ROWS
                                                         or line.row.per_model)  # fmt: skip


def around_stack_bytes(workload: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """``input_layer_bytes`` and ``output_layer_bytes``: one micro-batch's rows around the stack on one device.

    The first pipeline stage keeps the embedding's rows (token ids, its dropout mask) and the rows kept once
    per model; the last stage keeps the final norm's, the output layer's and the loss's (the FP32 logits).
    ``inputs``: ``sequence``, ``micro_batch``, ``precision_bytes``, ``ffn_multiple``, ``attention``,
    ``implementation``, ``tensor_parallel``, ``sequence_parallel`` (any of them swept). Needs the vocabulary.
    """
    keys = ("implementation", "attention", "sequence", "micro_batch", "precision_bytes", "tensor_parallel",
            "sequence_parallel", "ffn_multiple")  # fmt: skip

    def one(*run: Any) -> tuple[float, float]:
        impl, att, s, b, p, t, sp, ffn = run
        arch = _architecture(workload, int(ffn))
        return _around(arch, (str(impl), str(att), int(s), int(b), float(p), int(t), bool(sp)))

    first, last = np.vectorize(one, otypes=[float, float])(*(inputs[k] for k in keys))
    return {
        "input_layer_bytes": first if first.ndim else float(first),
        "output_layer_bytes": last if last.ndim else float(last),
    }


def expert_parameters(workload: Any) -> int:
    """Parameters of the routed experts' MLPs in all layers (0 for a dense model): what expert parallelism splits."""
    if not workload.experts or workload.hidden_dim is None or workload.heads is None or workload.layers is None:
        return 0
    arch = workload.architecture()
    dims = arch.dims(1, 1)
    per_layer = sum(w.parameters(dims) for w in layers.layer_weights(arch) if w.per_expert)
    return int(workload.layers * per_layer)
