"""The communication of one training iteration, per parallelism, on one device.

* tensor (and sequence) parallelism: four all-reduces of ``s·b·h`` values per layer and micro-batch (two
  forward, two backward; with SP the same volume as all-gathers and reduce-scatters), six with full
  recomputation (its forward rerun all-reduces again), over the node's links at ``η_link`` when the ``t``
  devices sit in one node, else over the network at ``η_net``; under sequence parallelism the reduce-scatters
  and all-gathers cost ``κ`` times their ring volume (Calculon's NVLink: 1.5, an all-reduce 1);
* pipeline parallelism: each device sends one micro-batch's activations forward and their gradients
  backward per virtual stage, ``s·b·h/t`` values each (Narayanan et al. 2021, Sec. 4.1, the scatter/gather
  across the ``t`` links);
* expert parallelism's all-to-alls, exposed;
* data parallelism: the gradient reduction (ZeRO's traffic at stage 3) over the network, exposed, or hidden
  behind the backward pass as far as it lasts when overlapped (:mod:`~mlsysim_nb.kinds.time.physics`).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

_D = defined

__all__ = ["DATA_PARALLEL", "MODEL_PARALLEL"]


def _bandwidth(
    name: str, *, who: str, together: str, cases: tuple[str, str], flag: str, symbol: str, group: str
) -> Defined:
    """The bandwidth one parallelism's traffic gets per device: the node's links when ``together``, else the network."""
    return _D(
        name,
        doc=f"Bandwidth {who} per device: the node's links when {together}, else the network.",
        unit="GB/s",
        cases=(
            Case(cases[0], "link_bandwidth * link_share", when=flag),
            Case(cases[1], "network_bandwidth * network_share"),
        ),
        symbol=symbol,
        label=f"{group} bandwidth",
        base="byte/second",
    )


#: Inside the pipeline: the tensor-parallel collectives, the pipeline's sends, the experts' all-to-alls.
MODEL_PARALLEL = [
    _D(
        "collective_cost",
        doc="What a tensor-parallel collective costs against a ring all-reduce of the same tensor.",
        cases=(
            Case(
                "sequence parallelism: reduce-scatters and all-gathers, each at κ times its ring volume",
                "gather_scatter_cost",
                when="sequence_split",
            ),
            Case("all-reduces", "1"),
        ),
        symbol="κ_TP",
        label="collective cost multiple",
    ),
    _bandwidth(
        "tensor_bandwidth",
        who="the tensor-parallel collectives get",
        together="the t devices share a node",
        cases=("t devices in one node", "t devices across nodes"),
        flag="tensor_in_node",
        symbol="BW_TP",
        group="tensor-parallel",
    ),
    _D(
        "tensor_parallel_time",
        doc="Tensor- and sequence-parallel collectives per iteration on one device, exposed: four of s·b·h per "
        "layer and micro-batch, six with full recomputation, at κ_TP times an all-reduce's cost.",
        unit="s",
        cases=(
            Case(
                "full recomputation: the rerun forward's two again",
                "1.5 * collective_cost * micro_batches * layers / pipeline_parallel"
                " * tensor_parallel_traffic_per_layer / tensor_bandwidth",
                when="recomputes_layers_split",
            ),
            Case(
                "t > 1",
                "collective_cost * micro_batches * layers / pipeline_parallel * tensor_parallel_traffic_per_layer"
                " / tensor_bandwidth",
                when="tensor_split",
            ),
            Case("no tensor parallelism", "0"),
        ),
        symbol="t_TP",
        label="tensor-parallel communication",
        base="second",
    ),
    _bandwidth(
        "pipeline_bandwidth",
        who="between neighbouring pipeline stages",
        together="every stage shares a node",
        cases=("the stages in one node", "the stages across nodes"),
        flag="pipeline_in_node",
        symbol="BW_PP",
        group="pipeline",
    ),
    _D(
        "pipeline_transfer_time",
        doc="Point-to-point sends per iteration on one device: activations forward and gradients backward per "
        "virtual stage and micro-batch, s·b·h/t values each, exposed.",
        unit="s",
        cases=(
            Case(
                "p > 1",
                "2 * interleave * micro_batches * sequence * micro_batch * hidden_dim * precision_bytes"
                " / tensor_parallel / pipeline_bandwidth",
                when="pipelined",
            ),
            Case("no pipeline", "0"),
        ),
        symbol="t_p2p",
        label="pipeline transfers",
        base="second",
    ),
    _bandwidth(
        "expert_bandwidth",
        who="the experts' all-to-alls get",
        together="the e·t devices share a node",
        cases=("e·t devices in one node", "across nodes"),
        flag="experts_in_node",
        symbol="BW_EP",
        group="expert-parallel",
    ),
    _D(
        "expert_time",
        doc="Expert parallelism's all-to-alls per iteration on one device, exposed.",
        unit="s",
        cases=(
            Case(
                "e > 1",
                "micro_batches * layers / pipeline_parallel * expert_all_to_all_traffic_per_layer / expert_bandwidth",
                when="experts_split",
            ),
            Case("no expert parallelism", "0"),
        ),
        symbol="t_EP",
        label="expert all-to-all",
        base="second",
    ),
]

#: Between the replicas: the gradient reduction.
DATA_PARALLEL = [
    _bandwidth(
        "data_bandwidth",
        who="the data-parallel reduction gets",
        together="the N_d·t devices share a node",
        cases=("N_d·t devices in one node", "across nodes"),
        flag="data_in_node",
        symbol="BW_DP",
        group="data-parallel",
    ),
    _D(
        "data_parallel_time",
        doc="The gradient reduction (and ZeRO's gathers) per iteration on one device.",
        unit="s",
        cases=(
            Case("N_d > 1", "data_parallel_traffic / data_bandwidth", when="data_split"),
            Case("one replica", "0"),
        ),
        symbol="t_DP",
        label="data-parallel communication",
        base="second",
    ),
    _D(
        "exposed_data_parallel_time",
        doc="The data-parallel time left on the critical path.",
        unit="s",
        cases=(
            Case(
                "overlapped: hidden behind the backward pass's matrix work as far as it lasts",
                "max(0, data_parallel_time - 2 / 3 * compute_time)",
                when="data_parallel_overlap",
            ),
            Case("exposed", "data_parallel_time"),
        ),
        symbol="t_DP,exp",
        label="data-parallel communication, exposed",
        base="second",
    ),
]
