"""The peak memory of ``measure_layer``'s run, term by term: what its size guard compares with the limit.

The run builds one GPT layer directly in the measured dtype, makes its input, runs the layer forward
once under saved-tensor hooks (there is no backward pass) and then accounts each saved storage. With
``w`` bytes per value, P = 12h² + 13h parameters, A the bytes the layer table saves for the lab's
attention and dropout (Korthikanti et al. (2022), Sec. 4.1, as :mod:`mlsysim_nb.layers` counts them)
and n the threads PyTorch computes with::

    M_peak = P·w + (A + 4·s·b·w) + T·w + n · 16 MiB
    T      = max(4·s·b·h + 2·a·s²·b, 7·s·b·h)    explicit attention
    T      = 4·s·b·h                             fused attention

* ``P·w``: the weights.
* ``A + 4·s·b·w``: what autograd saves, the layer's input among it: the table's rows, plus LayerNorm's
  mean and 1/σ per token for both norms (4·s·b values), which the paper leaves out.
* ``T``: the most values the forward pass of ``measure/_layer.py`` holds beside what it saves. With
  explicit attention the QKV projection's output (3·s·b·h) is not saved (Q, K and V are copied for the
  products) but lives to the end of the layer; scaling the scores holds the raw and the scaled scores
  (2·a·s²·b, as the softmax saves only its output), and the scaled scores live to the end of the
  attention, beside its s·b·h output before the heads are merged. With either attention, the layer's
  last step holds the output projection's and the down projection's outputs, the dropout's output and
  the layer's output (4·s·b·h). The accounting afterwards holds one flag per element of one saved
  storage at a time, less than these.
* ``n · 16 MiB``: working memory outside PyTorch's tensors: MKL's single-precision matrix products keep
  packing buffers, measured at up to 10.4 MiB per thread (1 and 2 threads, h up to 2048; the bfloat16
  products kept none), and the allocator keeps some freed memory. Measured on an AVX2 CPU with
  PyTorch 2.13's MKL 2024.2 and oneDNN 3.12; kernels of another CPU may keep more.

``tests/measure/test_peak.py`` runs the lab in a fresh process and checks that the process's peak
resident memory grew by at most this estimate, and by more than half of it, over FP32 and BF16,
explicit and fused attention.
"""

from __future__ import annotations

import os
import sys

from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.layers import layer_saved_bytes

__all__ = ["LAB_ATTENTION", "LAB_MASK_DEVICE", "WORKSPACE_PER_THREAD", "run_peak_bytes", "saved_bytes", "threads"]

#: The layer table's attention kind for each of the lab's.
LAB_ATTENTION = {"explicit": "eager", "fused": "fused"}
#: The layer table's device whose dropout mask has the lab's width: ``"scaled"`` keeps the scaled noise in
#: the activations' dtype (the CPU effect of ``torch.nn.functional.dropout``), ``"bool"`` a one-byte mask.
LAB_MASK_DEVICE = {"scaled": "cpu", "bool": "gpu"}
#: Working memory outside PyTorch's tensors, per compute thread (see the module's docstring).
WORKSPACE_PER_THREAD = 16 * 2**20
#: LayerNorm keeps a mean and a 1/σ per token, for each of the layer's two norms.
_NORM_STATISTICS = 4


def threads() -> int:
    """The threads PyTorch computes with: ``torch.get_num_threads()`` once torch is imported.

    Before that, the CPUs this process may run on (PyTorch's default), so that the guard never imports
    torch to refuse a run.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.get_num_threads())
    available = getattr(os, "sched_getaffinity", None)
    return len(available(0)) if available is not None else os.cpu_count() or 1


def saved_bytes(scenario: ActivationMemoryScenario, sizes: dict[str, int], width: int, attention: str,
                dropout_mask: str) -> float:  # fmt: skip
    """Bytes the lab's layer saves for backward: the table's rows plus LayerNorm's statistics (``A + 4·s·b·w``)."""
    tokens = sizes["seq_len"] * sizes["micro_batch"]
    table = layer_saved_bytes(
        scenario.workload.architecture(),
        seq_len=sizes["seq_len"],
        micro_batch=sizes["micro_batch"],
        dtype_bytes=width,
        attention=LAB_ATTENTION[attention],
        device=LAB_MASK_DEVICE[dropout_mask],
    )
    return float(table) + _NORM_STATISTICS * tokens * width


def run_peak_bytes(scenario: ActivationMemoryScenario, sizes: dict[str, int], width: int, attention: str,
                   dropout_mask: str) -> dict[str, float]:  # fmt: skip
    """The terms of ``M_peak`` (see the module's docstring), in bytes, by what they hold."""
    s, b, h, a = (sizes[k] for k in ("seq_len", "micro_batch", "hidden", "heads"))
    tokens = s * b * h
    transient = 4 * tokens
    if attention == "explicit":
        transient = max(4 * tokens + 2 * a * s * s * b, 7 * tokens)
    return {
        "weights": float(scenario.workload.parameters.magnitude) * width,
        "saved activations": saved_bytes(scenario, sizes, width, attention, dropout_mask),
        "forward temporaries": float(transient * width),
        "library workspace": float(threads() * WORKSPACE_PER_THREAD),
    }
