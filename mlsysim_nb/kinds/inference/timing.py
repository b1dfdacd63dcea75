"""Serving time, completed: time to first token, time per output token, and tensor parallelism's all-reduces.

The decode and prefill bounds (``decode_time_per_token``, ``prefill_time``) assume the device reaches its peak
and that the ``t`` devices never talk. A served token also waits for tensor parallelism: every layer all-reduces
its attention output and its MLP output over the ``t`` devices (Shoeybi et al. 2019, Sec. 3: two all-reduces per
layer in the forward pass), ``b·h`` values per decode step and ``b·s_p·h`` for the prompts, a ring moving
``2·(t − 1)/t`` of each. Activations cross the links in 16 bits (``ACTIVATION_BYTES``), whatever the weights'
width, as serving engines keep them. The achieved shares (``matmul_share``, ``memory_share``, ``link_share``)
scale the device's peak, its memory bandwidth and its link; at 1 they are the bounds.

* ``time_to_first_token``: the prompts' prefill, the larger of its arithmetic and its one read of the weights,
  plus its all-reduces;
* ``time_per_output_token``: one decode step, the larger of its memory and its arithmetic time, plus its
  all-reduces (a link's latency, which dominates messages this small on few devices, is not counted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined
from mlsysim_nb.model.notation import RECORD_QUANTITIES, Quantity, quantity

__all__ = ["ACTIVATION_BYTES", "NOTATION", "TIMING", "serving_links"]

#: Bytes per activation value an all-reduce moves: 16-bit (BF16/FP16).
ACTIVATION_BYTES = 2

_D = defined

TIMING: list[Defined] = [
    _D(
        "serving_link_bandwidth",
        doc="Bandwidth the t devices' all-reduces get per device: the node's links when they share a node, else "
        "the network, at the achieved share.",
        unit="GB/s",
        cases=(
            Case("t devices in one node", "link_bandwidth * link_share", when="tensor_in_node"),
            Case("t devices across nodes", "network_bandwidth * link_share"),
        ),
        symbol="BW_TP,serve",
        label="tensor-parallel bandwidth",
        base="byte/second",
    ),
    _D(
        "decode_allreduce_traffic",
        "4 * layers * (tensor_parallel - 1) / tensor_parallel * batch_size * hidden_dim * activation_bytes",
        "Bytes one device sends per decode step: two ring all-reduces of b·h values per layer.",
        "MB",
        symbol="T_TP,step",
        label="all-reduce traffic per decode step",
        base="byte",
    ),
    _D(
        "decode_allreduce_time",
        doc="The decode step's all-reduces over the links.",
        unit="ms",
        cases=(
            Case("t > 1", "decode_allreduce_traffic / serving_link_bandwidth", when="tensor_split"),
            Case("one device: nothing to send (T = 0)", "decode_allreduce_traffic / bandwidth"),
        ),
        symbol="t_TP,step",
        label="all-reduce time per decode step",
        base="second",
    ),
    _D(
        "time_per_output_token",
        "max(decode_memory_time / memory_share, decode_compute_time / matmul_share) + decode_allreduce_time",
        "Time per output token (TPOT): the decode step at the achieved shares, plus its all-reduces.",
        "ms",
        symbol="TPOT",
        label="time per output token, with communication",
        base="second",
    ),
    _D(
        "prefill_allreduce_time",
        doc="The prompts' all-reduces: two of b·s_p·h values per layer.",
        unit="ms",
        cases=(
            Case(
                "t > 1",
                "4 * layers * (tensor_parallel - 1) / tensor_parallel * batch_size * prompt_tokens * hidden_dim"
                " * activation_bytes / serving_link_bandwidth",
                when="tensor_split",
            ),
            Case(
                "one device: nothing to send (t − 1 = 0)",
                "4 * layers * (tensor_parallel - 1) / tensor_parallel * batch_size * prompt_tokens * hidden_dim"
                " * activation_bytes / bandwidth",
            ),
        ),
        symbol="t_TP,pre",
        label="prefill all-reduce time",
        base="second",
    ),
    _D(
        "time_to_first_token",
        "max(prefill_time / matmul_share, weights_read_per_step / (bandwidth * memory_share)) + prefill_allreduce_time",
        "Time to first token (TTFT): the prefill, compute- or bandwidth-bound (the weights read once), plus its "
        "all-reduces.",
        "ms",
        symbol="TTFT",
        label="time to first token",
        base="second",
    ),
]

#: The notation of what the device and the layout give these formulas.
NOTATION: dict[str, Quantity] = {
    "activation_bytes": quantity("b_AR", "byte", "bytes per activation value all-reduced"),
    "link_bandwidth": RECORD_QUANTITIES["link_bandwidth"],
    "network_bandwidth": RECORD_QUANTITIES["network_bandwidth"],
    "tensor_split": quantity("[t > 1]", "", "tensor parallelism on"),
    "tensor_in_node": quantity("[t ≤ n_node]", "", "the t devices share a node"),
}


def serving_links(node: Any, tensor_parallel: Any) -> dict[str, Any]:
    """What the device gives these formulas: its link and network bandwidth (bytes/s), and where the t devices sit."""
    t = np.asarray(tensor_parallel)
    inputs: dict[str, Any] = {
        name: None if getattr(node, name) is None else float(getattr(node, name).m_as("byte/second"))
        for name in ("link_bandwidth", "network_bandwidth")
    }
    flags = {"tensor_split": t > 1, "tensor_in_node": t <= (node.node_devices or 1)}
    inputs.update({k: (v if v.ndim > 0 else bool(v)) for k, v in flags.items()})
    return inputs
