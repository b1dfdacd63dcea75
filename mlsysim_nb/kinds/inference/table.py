"""What the layer table gives the serving equations: which weights tensor parallelism splits, and the experts'.

Each weight row of the workload's layer (:func:`mlsysim_nb.layers.layer_weights`) and of the embeddings and
output layer (:func:`mlsysim_nb.layers.model_weights`) is sorted by its shape, never by a typed coefficient:

* a row with a key/value-head axis (``kv``: the K and V projections and their biases) is split by the key/value
  heads each device holds, so it is replicated when there are fewer key/value heads than devices;
* a row with a query-head axis (``a``), an MLP-width axis (``f``, each expert's too) or a vocabulary axis
  (``v``: the token embeddings and the output layer) is split over the ``t`` devices, as Megatron-LM's
  column- and row-parallel layers and vocabulary-parallel embeddings split them (Shoeybi et al. 2019, Sec. 3);
  so is a Mamba-2 row (its heads ``H_ssm``, groups ``G_ssm`` and the widths they make), as vLLM's MambaMixer2
  splits them where t divides both (the mixer refuses any other t);
* every other row (the norms' scales, the router, a bias of width ``h``) is replicated on every device.

A lookup table (the token embeddings when the output layer has weights of its own, learned position
embeddings) is resident but read per decode step only in the rows of the batch's tokens: its parameters are
counted apart (split over ``t`` by the vocabulary, or replicated), so that a step's read can leave them out.
When the embeddings are tied, the table is the output layer too, which every step reads whole.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from mlsysim_nb import layers
from mlsysim_nb.layers import Architecture

__all__ = ["kept_groups", "parameter_groups"]

#: Mamba-2's heads and groups split as vLLM's MambaMixer2 splits them (every width of its rows follows them).
_SPLIT_AXES = frozenset({"a", "f", "f_dense", "v", "H_ssm", "G_ssm", "d_ssm", "c_ssm", "p_ssm"})


#: the model-level rows a decode step reads only where the batch's tokens index them
_LOOKUPS = frozenset({"embedding", "positions"})


@lru_cache(maxsize=256)
def _groups(arch: Architecture, layer_count: int, keep: frozenset[str] | None = None) -> tuple[int, ...]:
    """The groups of every weight row, or (``keep``) of the rows a weight format's layout leaves in 16 bits."""
    from mlsysim_nb.records.formats import weight_role

    arch = replace(arch, layers=layer_count)
    dims = arch.dims(1, 1)
    replicated = kv_projection = experts = lookup_split = lookup_replicated = total = 0
    every = [(layers.layer_weights(arch, layer), count) for layer, count in arch.layer_counts()]
    for rows, times in (*every, (layers.model_weights(arch), 1)):
        for row in rows:
            if keep is not None and weight_role(row) not in keep:
                continue
            count = row.parameters(dims) * times
            total += count
            split = bool(_SPLIT_AXES & set(row.shape))
            if "kv" in row.shape:
                kv_projection += count
            elif not split:
                replicated += count
            if row.per_expert:
                experts += count
            if times == 1 and row.key in _LOOKUPS and not (row.key == "embedding" and arch.tied_embeddings):
                if split:
                    lookup_split += count
                else:
                    lookup_replicated += count
    return replicated, kv_projection, experts, lookup_split, lookup_replicated, total


def parameter_groups(workload: Any) -> dict[str, int]:
    """The parameter groups the serving equations split or leave out, by name.

    ``replicated_parameters``, ``kv_projection_parameters``, ``expert_parameters``, and the lookup tables'
    ``lookup_split_parameters`` (split over t) and ``lookup_replicated_parameters``.
    """
    arch = workload.architecture()
    replicated, kv_projection, experts, lookup_split, lookup_replicated, _ = _groups(arch, int(workload.layers))
    return {
        "replicated_parameters": replicated,
        "kv_projection_parameters": kv_projection,
        "expert_parameters": experts,
        "lookup_split_parameters": lookup_split,
        "lookup_replicated_parameters": lookup_replicated,
    }


def kept_groups(workload: Any, weight_format: str | None) -> dict[str, int]:
    """The same groups of the weights ``weight_format``'s layout keeps in 16 bits, as ``kept_*`` (0 without one)."""
    names = ("replicated", "kv_projection", "expert", "lookup_split", "lookup_replicated", "")
    if weight_format is None:
        counts: tuple[int, ...] = (0,) * len(names)
    else:
        from mlsysim_nb.records.formats import weight_format as read_format

        keep = read_format(weight_format).keep
        counts = _groups(workload.architecture(), int(workload.layers), keep)
    return {f"kept_{name}_parameters" if name else "kept_parameters": n for name, n in zip(names, counts, strict=True)}
