"""What the layer table gives the serving equations: which weights tensor parallelism splits, and the experts'.

Each weight row of the workload's layer (:func:`mlsysim_nb.layers.layer_weights`) and of the embeddings and
output layer (:func:`mlsysim_nb.layers.model_weights`) is sorted by its shape, never by a typed coefficient:

* a row with a key/value-head axis (``kv``: the K and V projections and their biases) is split by the key/value
  heads each device holds, so it is replicated when there are fewer key/value heads than devices;
* a row with a query-head axis (``a``), an MLP-width axis (``f``, each expert's too) or a vocabulary axis
  (``v``: the token embeddings and the output layer) is split over the ``t`` devices, as Megatron-LM's
  column- and row-parallel layers and vocabulary-parallel embeddings split them (Shoeybi et al. 2019, Sec. 3);
* every other row (the norms' scales, the router, a bias of width ``h``) is replicated on every device.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mlsysim_nb import layers
from mlsysim_nb.layers import Architecture

__all__ = ["parameter_groups"]

_SPLIT_AXES = frozenset({"a", "f", "v"})


@lru_cache(maxsize=256)
def _groups(arch: Architecture, layer_count: int) -> tuple[int, int, int]:
    dims = arch.dims(1, 1)
    replicated = kv_projection = experts = 0
    for rows, times in ((layers.layer_weights(arch), layer_count), (layers.model_weights(arch), 1)):
        for row in rows:
            count = row.parameters(dims) * times
            if "kv" in row.shape:
                kv_projection += count
            elif not _SPLIT_AXES & set(row.shape):
                replicated += count
            if row.per_expert:
                experts += count
    return replicated, kv_projection, experts


def parameter_groups(workload: Any) -> dict[str, int]:
    """``replicated_parameters``, ``kv_projection_parameters`` and ``expert_parameters`` of ``workload``."""
    arch = workload.architecture()
    replicated, kv_projection, experts = _groups(arch, int(workload.layers))
    return {
        "replicated_parameters": replicated,
        "kv_projection_parameters": kv_projection,
        "expert_parameters": experts,
    }
