"""Achieved shares that depend on an operation's size: Calculon's published A100 80GB tables, as data.

Source: Isaev et al. (2023), "Calculon: a methodology and tool for high-level co-design of systems and large
language models" (SC'23); github.com/calculon-ai/calculon, ``systems/a100_80g.json`` at commit
``caa4b11f8fe1fee3ba57adaacb7590d7deabd053`` (Apache License 2.0). An operation of at least the threshold reaches
the share beside it (the first row it clears, as Calculon reads the table): matrix operations by their FLOPs,
memory transfers by their bytes. The numbers are Calculon's description of an A100 system, not fitted to any
figure the tests compare against; on other devices they are an assumption the derivation states.

With ``share_curves="calculon-a100"`` each class of a layer's work gets the share of its own operations' size
(with ``"flat"``, the default, every operation gets ``matmul_share`` or ``memory_share``); the matrix products'
own operands and the optimizer step stay at ``memory_share`` (their transfers are of 100 MB and more on the
layouts checked, where the table gives 90 %):

* **projections** (the matrices with an ``h`` axis): one operation per block input, as Megatron-LM fuses them (Q,
  K and V read the same input; a gated MLP's gate and up projections too), each of ``2·b·s·P/t`` FLOPs forward,
  and the same again for the input's and the weights' gradients; an expert's operation sees ``k/E`` of the tokens;
* **attention scores** ``Q·Kᵀ`` and scores·V: ``2·b·s²·A/t`` FLOPs each forward; Calculon's backward of a batched
  product is one operation of twice the forward's FLOPs;
* **the output layer**: ``2·b·s·h·v/t`` FLOPs;
* **element-wise work** by the bytes one kernel reads and writes: a norm on the tensors sequence parallelism splits
  (``2·b·s·h`` values over the shards), the MLP's activation (its inputs and output of ``f/t``), the fused softmax on
  the scores (``2·b·a·s²/t`` values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CALCULON_A100", "SHARE_CURVES", "class_shares", "share_at"]

#: Calculon's A100 80GB system (systems/a100_80g.json): (threshold, share) rows, largest threshold first.
CALCULON_A100 = {
    "matrix_gflops": ((128.0, 0.95), (16.0, 0.9), (1.0, 0.6), (0.0, 0.1)),
    "memory_megabytes": ((100.0, 0.9), (10.0, 0.75), (1.0, 0.6), (0.0, 0.3)),
}
#: The share models a scenario chooses between: the flat shares for every operation, or Calculon's size-dependent
#: tables.
SHARE_CURVES = (("flat shares", "flat"), ("by operation size (Calculon's A100 tables)", "calculon-a100"))


def share_at(table: tuple[tuple[float, float], ...], size: Any) -> Any:
    """The share of the first row whose threshold ``size`` reaches (``size`` in the table's unit; arrays too)."""
    size = np.asarray(size, dtype=float)
    conditions = [size >= threshold for threshold, _ in table]
    shares = [share for _, share in table]
    return np.select(conditions, shares, default=table[-1][1])


def _harmonic(sizes: list[Any], shares: list[Any]) -> Any:
    """The one share that takes as long as each operation at its own: Σ size / Σ (size / share)."""
    return sum(sizes) / sum(size / share for size, share in zip(sizes, shares, strict=True))


def class_shares(
    *, curves: Any, matmul_share: Any, memory_share: Any, projections: tuple[tuple[float, float, float], ...],
    micro_batch: Any, sequence: Any, tensor_parallel: Any, sequence_shards: Any, hidden: float,
    activation_values: float, heads: float, attention_width: float, vocabulary: float, width: float, eager: bool,
) -> dict[str, Any]:  # fmt: skip
    """Each class's achieved share: the table's at its operations' size, or the flat share when ``curves`` is flat.

    ``projections`` holds, per fused projection, its active parameters, the operations they split into (an
    expert's ``k`` active copies run as ``E`` operations, each on ``k/E`` of the tokens) and the share of the
    model's layers that have it (a mixture's dense first layers, its expert layers); ``activation_values``
    the MLP activation's inputs and output per token (before the split by ``t``); ``width`` the bytes of a value.
    """
    t = np.asarray(tensor_parallel, dtype=float)
    tokens = np.asarray(micro_batch, dtype=float) * np.asarray(sequence, dtype=float)
    flat = np.asarray(curves) == "flat"
    mm, mem = np.asarray(matmul_share, dtype=float), np.asarray(memory_share, dtype=float)

    def matrix(flops: Any) -> Any:
        return np.where(flat, mm, share_at(CALCULON_A100["matrix_gflops"], flops / 1e9))

    def memory(nbytes: Any) -> Any:
        return np.where(flat, mem, share_at(CALCULON_A100["memory_megabytes"], nbytes / 1e6))

    work = [2 * tokens * parameters * share / t for parameters, _, share in projections]
    ops = [2 * tokens * parameters / t / count for parameters, count, _ in projections]
    scores = 2 * tokens * np.asarray(sequence, dtype=float) * attention_width / t
    score_bytes = 2 * tokens * heads * np.asarray(sequence, dtype=float) * width / t if eager else 0 * tokens
    return {
        "projection_share": _harmonic(work, [matrix(op) for op in ops]),
        "score_product_share": matrix(scores),
        "score_product_backward_share": matrix(2 * scores),
        "output_share": matrix(2 * tokens * hidden * vocabulary / t),
        "sp_elementwise_share": memory(2 * tokens * hidden * width / np.asarray(sequence_shards, dtype=float)),
        "tp_elementwise_share": memory(tokens * activation_values * width / t),
        "score_elementwise_share": np.where(eager, memory(score_bytes), mem),
    }
