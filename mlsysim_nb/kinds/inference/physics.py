"""The equations of the serving kind, once, as data: weights and KV cache per device, the fit, decode and prefill.

The formulas live by concern: :mod:`~mlsysim_nb.kinds.inference.weights` (the weights on one device, split over
the ``t`` devices, and a weight format's 16-bit tensors), :mod:`~mlsysim_nb.kinds.inference.cache` (the KV cache
per token and per sequence, in paged blocks), :mod:`~mlsysim_nb.kinds.inference.fit` (memory per device against
its capacity, the largest batch and context), :mod:`~mlsysim_nb.kinds.inference.decode` (a decode step's bytes
and FLOPs, the prefill) and :mod:`~mlsysim_nb.kinds.inference.timing` (time to first token and per output token,
with tensor parallelism's all-reduces); this module holds the notation of what the workload, the device and the
layer table give, and assembles them. Each module names its sources.

Every memory figure is per device of the ``t`` that tensor parallelism spreads the model over. Magnitudes
are in base units: bytes, seconds, FLOPs, plain counts.
"""

from __future__ import annotations

from mlsysim_nb.kinds.inference.cache import CACHE
from mlsysim_nb.kinds.inference.decode import DECODE, PREFILL
from mlsysim_nb.kinds.inference.fit import FIT, STARTUP
from mlsysim_nb.kinds.inference.timing import ACTIVATION_BYTES, TIMING
from mlsysim_nb.kinds.inference.timing import NOTATION as TIMING_NOTATION
from mlsysim_nb.kinds.inference.weights import WEIGHTS
from mlsysim_nb.model.equations import Equations
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["EQUATIONS", "NOTATION"]

#: The notation of what the workload, the device and the layer table give, and of the flags the fields set.
NOTATION: dict[str, Quantity] = {
    "head_dim": quantity("d", "", "head dimension"),
    "context_window": quantity("s_win", "", "the model's context window"),
    "sliding_window": quantity("W", "", "sliding attention window"),
    "experts": quantity("E", "", "routed experts"),
    "experts_per_token": quantity("k_exp", "", "experts per token"),
    "active_parameters": quantity("P_active", "", "active parameters"),
    "replicated_parameters": quantity("P_rep", "", "parameters every device holds whole"),
    "kv_projection_parameters": quantity("P_kv", "", "parameters of the K and V projections"),
    "cache_values_per_token": quantity("n_kv", "", "cached values per token on one device, every layer"),
    "expert_parameters": quantity("P_exp", "", "parameters of the routed experts"),
    "lookup_split_parameters": quantity("P_lookup,tp", "", "parameters of the lookup tables split over t"),
    "lookup_replicated_parameters": quantity("P_lookup,rep", "", "parameters of the lookup tables every device holds"),
    "kept_bytes_per_parameter": quantity("b_16", "byte", "bytes per weight a format keeps in 16 bits"),
    "kept_parameters": quantity("P_16", "", "parameters a weight format keeps in 16 bits"),
    "kept_replicated_parameters": quantity("P_16,rep", "", "16-bit parameters every device holds whole"),
    "kept_kv_projection_parameters": quantity("P_16,kv", "", "16-bit parameters of the K and V projections"),
    "kept_expert_parameters": quantity("P_16,exp", "", "16-bit parameters of the routed experts"),
    "kept_lookup_split_parameters": quantity(
        "P_16,lookup,tp", "", "16-bit parameters of the lookup tables split over t"
    ),
    "kept_lookup_replicated_parameters": quantity(
        "P_16,lookup,rep", "", "16-bit parameters of the lookup tables every device holds"
    ),
    "has_sliding_window": quantity("[W]", "", "sliding-window attention"),
    "has_experts": quantity("[E > 0]", "", "a mixture of experts"),
    "has_weight_format": quantity("[format]", "", "a weight format given"),
    "has_mixed_cache": quantity("[mixed]", "", "layers of several kinds of cache"),
    "has_layer_kinds": quantity("[kinds]", "", "layers of several kinds, or not plain attention"),
    "full_attended_width": quantity("w_att", "", "attended width of the full-context layers, summed"),
    "window_attended_width": quantity("w_att,W", "", "attended width of the windowed layers, summed"),
    "window_cache_values": quantity("n_kv,W", "", "cached values per token of the windowed layers, one device"),
    "cache_window": quantity("W_layer", "", "window of the windowed layers"),
    "full_cache_values": quantity("n_kv,full", "", "cached values per token of the full-context layers, one device"),
    "state_values": quantity("n_state", "", "values of the fixed states per sequence, one device"),
    "prompt_given": quantity("[s_p given]", "", "prompt length stated"),
    "chunk_given": quantity("[C given]", "", "prefill chunk stated"),
    "default_chunk": quantity(
        "C_vLLM", "", "vllm serve's default chunk: 8192 on a GPU of ≥ 70 GiB but an A100, else 2048"
    ),
    "cache_groups": quantity("n_grp", "", "vLLM's groups of layers with a block table each"),
}

#: The serving equations, in reading order.
EQUATIONS = Equations(
    "the serving equations",
    (*WEIGHTS, *CACHE, *FIT, *STARTUP, *DECODE, *PREFILL, *TIMING),
    {**NOTATION, **TIMING_NOTATION},
    constants={"activation_bytes": ACTIVATION_BYTES},
)
