"""The weights of a layer and of the embeddings and output layer, as rows: a model's exact parameter count.

Shapes follow the Hugging Face modules (GPT-2's fused ``c_attn`` is Q, K and V side by side; Mixtral's experts
are one ``gate_up_proj`` and one ``down_proj`` per expert), so the counts equal those of the real models
instantiated on PyTorch's meta device (``tests/measure/test_configs.py``).
"""

from __future__ import annotations

from dataclasses import replace

from mlsysim_nb.layers import mixers
from mlsysim_nb.layers.architecture import Architecture, Layer
from mlsysim_nb.layers.rows import Weight

__all__ = ["layer_weights", "model_weights", "parameter_count"]


def _norm(arch: Architecture, key: str, block: str) -> list[Weight]:
    return [Weight(key, f"{key} scale" + (" and shift" if arch.norm == "layernorm" else ""), block, ("h",),
                   count=2 if arch.norm == "layernorm" else 1)]  # fmt: skip


def _mlp(arch: Architecture, block: str, *, per_expert: bool = False, count: int = 1, f: str = "f") -> list[Weight]:
    ins = 2 if arch.mlp == "gated" else 1
    rows = [
        Weight(f"{block}_in", "gate and up projections" if ins == 2 else "up projection", block,
               ("h", f), count=ins * count, per_expert=per_expert),
        Weight(f"{block}_out", "down projection", block, (f, "h"), count=count, per_expert=per_expert),
    ]  # fmt: skip
    if arch.bias == "all":
        rows += [
            Weight(f"{block}_in_bias", "up projection bias", block, (f,), count=ins * count, per_expert=per_expert),
            Weight(f"{block}_out_bias", "down projection bias", block, ("h",), count=count, per_expert=per_expert),
        ]
    return rows


def layer_weights(arch: Architecture, layer: Layer | None = None) -> tuple[Weight, ...]:
    """The weights of one decoder layer: norms, the mixer's (``layer``'s; the pattern's first by default), MLP."""
    layer = layer or arch.layer_kinds()[0]
    mixer = mixers.find(layer.mixer)
    rows = [*_norm(arch, "norm1", "layer norms"), *mixer.weights(arch)] if layer.has_mixer else []
    if not layer.mlp:  # a mixer alone (Nemotron-H's Mamba-2 and attention layers): its norm and itself
        return tuple(rows)
    rows += _norm(arch, "norm2", "layer norms")
    if arch.sandwich_norms:  # Gemma 2 and 3: a norm after attention and after the MLP too
        rows += [*_norm(arch, "norm3", "layer norms"), *_norm(arch, "norm4", "layer norms")]
    if arch.moe and not layer.dense:
        rows.append(Weight("router", "router", "router", ("E", "h")))
        if arch.router_bias:
            rows.append(Weight("router_bias", "router bias", "router", ("E",)))
        rows += _mlp(arch, "experts", per_expert=True)
        if arch.shared_experts:
            rows += _mlp(arch, "shared", count=arch.shared_experts)
    else:
        rows += _mlp(arch, "MLP", f="f_dense" if arch.moe else "f")
    return tuple(rows)


def model_weights(arch: Architecture) -> tuple[Weight, ...]:
    """The weights outside the layers: token (and learned position) embeddings, final norm, output layer."""
    rows = [Weight("embedding", "token embeddings", "embeddings", ("v", "h"))]
    if arch.positions == "learned" and arch.context_length:
        rows.append(Weight("positions", "position embeddings", "embeddings", ("h",), count=arch.context_length))
    rows += _norm(arch, "final_norm", "output")
    if not arch.tied_embeddings:
        rows.append(Weight("output", "output layer", "output", ("v", "h")))
    return tuple(rows)


def parameter_count(arch: Architecture, layers: int, *, active: bool = False) -> int:
    """Exact parameters of ``layers`` layers of ``arch``'s pattern; ``active``: those one token uses (MoE)."""
    if arch.layers != layers:
        arch = replace(arch, layers=layers)
    dims = arch.dims(1, 1)
    found = sum(w.parameters(dims, active=active) for w in model_weights(arch))
    for layer, count in arch.layer_counts():
        found += count * sum(w.parameters(dims, active=active) for w in layer_weights(arch, layer))
    return found
