"""The serving equations of the weights on one device: what tensor parallelism splits, and what a format keeps.

Every memory figure is per device of the ``t`` that tensor parallelism spreads the model over, in bytes. The
layer table's rows are sorted into the groups these formulas read by :mod:`~mlsysim_nb.kinds.inference.table`.

Sources
-------
* Shoeybi et al. (2019), Megatron-LM, Sec. 3: tensor parallelism splits the attention by heads and the MLP by
  its width. The key/value heads follow vLLM's rule, which the attention mixer states
  (:mod:`mlsysim_nb.layers.mixers.attention`, from ``QKVParallelLinear``): with fewer key/value heads than
  devices each device keeps one whole head and each head is replicated ``t/a_kv`` times.
* A weight format's layout (``records/data/formats.toml``, :mod:`mlsysim_nb.records.formats`): the tensors it
  keeps in 16 bits add ``b_16 − b_w`` per parameter beyond the quantised width.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.layers.mixers.attention import KV_HEAD_REPLICAS, KV_HEADS_PER_DEVICE
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["PARTS", "WEIGHTS"]

_D = defined

_EVERY_WEIGHT = (
    "weight_bytes_per_parameter * (split_parameters / tensor_parallel"
    " + kv_projection_parameters * kv_heads_per_device / kv_heads + replicated_parameters)"
)
_EXPERTS = "weight_bytes_per_parameter * expert_parameters / tensor_parallel"
_LOOKUPS = "weight_bytes_per_parameter * (lookup_split_parameters / tensor_parallel + lookup_replicated_parameters)"
#: b_16 − b_w: what each parameter a weight format keeps in 16 bits adds beyond the quantised width.
_KEPT = "(kept_bytes_per_parameter - weight_bytes_per_parameter)"

#: The weights on one device, in reading order.
WEIGHTS: list[Defined] = [
    _D(
        "split_parameters",
        "parameters - replicated_parameters - kv_projection_parameters",
        "Parameters tensor parallelism splits over the t devices: the Q and output projections (by heads), the "
        "MLPs (by their width, each expert's too), the token embeddings and the output layer (by vocabulary).",
        symbol="P_tp",
        label="parameters split over t",
    ),
    _D(
        "kv_heads_per_device",
        KV_HEADS_PER_DEVICE["vllm"],
        "Key/value heads each device holds, by vLLM's rule: a_kv/t, or 1 when there are fewer key/value heads "
        "than devices.",
        symbol="a_kv,dev",
        label="key/value heads per device",
    ),
    _D(
        "kv_head_replicas",
        KV_HEAD_REPLICAS["vllm"],
        "Devices holding a copy of each key/value head, by vLLM's rule: 1 when t divides a_kv; t/a_kv when "
        "a_kv < t, each head (its K and V projections and its cache) then replicated t/a_kv times.",
        symbol="ρ_kv",
        label="copies of each key/value head",
    ),
    _D(
        "kept_weights",
        f"{_KEPT} * ((kept_parameters - kept_replicated_parameters"
        " - kept_kv_projection_parameters) / tensor_parallel + kept_kv_projection_parameters * kv_heads_per_device"
        " / kv_heads + kept_replicated_parameters)",
        "What the tensors a weight format keeps in 16 bits (its layout: embeddings, output layer, norms, ...) add "
        "on one device beyond the quantised width, split as the other weights are; 0 without a format.",
        "GB",
        symbol="ΔM_w,16",
        label="16-bit tensors' extra bytes",
        base="byte",
    ),
    _D(
        "weights",
        doc="Weights on one device: the split parameters' 1/t, the K and V projections of the key/value heads it "
        "holds, and the replicated norms, router and output-width biases whole, at b_w each; plus what a weight "
        "format's 16-bit tensors add.",
        unit="GB",
        cases=(
            Case("a weight format", f"{_EVERY_WEIGHT} + kept_weights", when="has_weight_format"),
            Case("every weight at b_w", _EVERY_WEIGHT),
        ),
        symbol="M_w",
        label="weights",
        base="byte",
    ),
]

#: The parts of the weights a decode step reads apart: the routed experts and the lookup tables.
PARTS: list[Defined] = [
    _D(
        "expert_weights",
        doc="Weights of the routed experts on one device (all resident; each split over t by its width), a weight "
        "format's 16-bit tensors among them (the experts' biases) at 2 B.",
        unit="GB",
        cases=(
            Case(
                "a weight format",
                f"{_EXPERTS} + {_KEPT} * kept_expert_parameters / tensor_parallel",
                when="has_weight_format",
            ),
            Case("every weight at b_w", _EXPERTS),
        ),
        symbol="M_exp",
        label="routed experts' weights",
        base="byte",
    ),
    _D(
        "lookup_weights",
        doc="Weights of the lookup tables on one device: the token embeddings when the output layer has its own "
        "weights, and learned position embeddings (the vocabulary axis split over t), at 2 B where a weight "
        "format keeps them in 16 bits. A step reads only the rows of its B tokens, B·h values, which the model "
        "counts as nothing.",
        unit="GB",
        cases=(
            Case(
                "a weight format",
                f"{_LOOKUPS} + {_KEPT} * (kept_lookup_split_parameters / tensor_parallel"
                " + kept_lookup_replicated_parameters)",
                when="has_weight_format",
            ),
            Case("every weight at b_w", _LOOKUPS),
        ),
        symbol="M_lookup",
        label="lookup tables' weights",
        base="byte",
    ),
]
