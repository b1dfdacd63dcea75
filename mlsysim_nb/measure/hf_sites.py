"""Where Hugging Face transformers' modules save each row of the layer table: (module, op, slot, shape) -> row key.

The rows themselves (labels, shapes, widths, notes) are the layer table's
(:mod:`mlsysim_nb.layers.transformers`); this module only says which saved tensor is which row. A site is
the module that was running when autograd saved the tensor (its path inside the decoder layer, or
``model.norm``, ``lm_head`` and ``""`` for the output layer and the loss), the autograd node and slot, and
where two tensors share those, their shape (the sizes are chosen so that s, d, h and f all differ).
No torch here: a result of :func:`site` is a plain string.
"""

from __future__ import annotations

import re

from mlsysim_nb.layers.rows import Dims

__all__ = ["layer_path", "site"]

_LAYER = re.compile(r"^(?:(?:model\.)?layers|transformer\.h)\.\d+\.")
_NORMS = {
    "input_layernorm": "ln1",
    "post_attention_layernorm": "ln2",
    "pre_feedforward_layernorm": "ln2",
    "post_feedforward_layernorm": "ln_post_mlp",
    "ln_1": "ln1",
    "ln_2": "ln2",
    "model.norm": "ln_final",
    "transformer.ln_f": "ln_final",
    "self_attn.q_norm": "q_norm",
    "self_attn.k_norm": "k_norm",
    "self_attn.q_a_layernorm": "q_latent_norm",
    "self_attn.kv_a_layernorm": "kv_latent_norm",
}
_FLASH = {
    "_saved_query": "q",
    "_saved_key": "k",
    "_saved_value": "v",
    "_saved_logsumexp": "lse",
    "_saved_output": "projection_input",
    "_saved_attn_mask": "window_mask",
}
_ROUTER = {"SoftmaxBackward0": "router_probs", "SigmoidBackward0": "router_probs", "TopkBackward0": "router_indices"}
_LINEAR_INPUT = ("_saved_self", "_saved_mat1")
_INPUTS = {
    "self_attn.q_proj": "qkv_input",
    "self_attn.k_proj": "qkv_input",
    "self_attn.v_proj": "qkv_input",
    "attn.c_attn": "qkv_input",
    "self_attn.q_a_proj": "qkv_input",
    "self_attn.kv_a_proj_with_mqa": "qkv_input",
    "self_attn.q_b_proj": "q_latent",
    "self_attn.kv_b_proj": "kv_latent",
    "self_attn.o_proj": "projection_input",
    "attn.c_proj": "projection_input",
    "mlp.gate_proj": "mlp_input",
    "mlp.up_proj": "mlp_input",
    "mlp.c_fc": "mlp_input",
    "mlp.gate": "mlp_input",
    "mlp.router": "mlp_input",
    "mlp.shared_experts.gate_proj": "mlp_input",
    "mlp.shared_experts.up_proj": "mlp_input",
    "mlp.shared_experts.down_proj": "shared_product",
    "mlp.down_proj": "product",
    "mlp.c_proj": "gelu_output",
    "lm_head": "output_projection_input",
}


def layer_path(module: str) -> str:
    """A module's path inside its decoder layer (``model.layers.3.mlp`` -> ``mlp``); others stay as they are."""
    return _LAYER.sub("", module)


def _norm(key: str, op: str, slot: str, shape: tuple[int, ...]) -> str | None:
    if op == "NativeLayerNormBackward0":  # GPT-2's LayerNorm: input, mean, 1/std
        return f"{key}_input" if slot == "_saved_input" else f"{key}_stats"
    if slot == "_saved_self":  # RMSNorm: pow's and the multiply's input, the FP32 copy (Gemma: and its FP32 result)
        return f"{key}_input"
    if slot == "_saved_result" or shape[-1] == 1:
        return f"{key}_rsqrt"
    if len(shape) == 1:  # Gemma's 1 + w
        return f"{key}_scale"
    return f"{key}_normalized"


def _attention(op: str, slot: str, shape: tuple[int, ...], dims: Dims, keys: frozenset[str]) -> str | None:
    if slot in _FLASH and "Attention" in op:
        return _FLASH[slot]
    scores = len(shape) >= 2 and shape[-1] == dims.s and shape[-2] == dims.s
    if op == "BmmBackward0":
        if slot == "_saved_self":
            if not scores:
                return "q"
            return "softmax_dropout_output" if "softmax_dropout_output" in keys else "softmax_cast"
        return "k" if shape[-1] == dims.s else "v"  # K is saved transposed, V as it is
    if op in ("SoftmaxBackward0", "SafeSoftmaxBackward0"):
        return "softmax_output"  # with a sink's column (s + 1 wide), split by the caller
    if op == "MaxBackward0":
        return "sink_max_index"
    if op == "MulBackward0" and slot == "_saved_other":
        return "softmax_dropout_mask" if scores else "rotary"
    return None


def _mlp(path: str, op: str, slot: str, shape: tuple[int, ...], dims: Dims, *, prefix: str = "",
         keys: frozenset[str] = frozenset()) -> str | None:  # fmt: skip
    if path == "mlp.act_fn":
        return f"{prefix}gate_output"
    if path == "mlp.act":  # GPT-2's GeLU: gelu_new's four terms, or the exact GeLU's input
        return "gelu_terms" if op != "GeluBackward0" else "gelu_input"
    if path == "mlp" and op == "MulBackward0":
        return f"{prefix}up_output" if slot == "_saved_other" else f"{prefix}silu_output"
    if path in ("mlp.dropout", "attn.resid_dropout"):
        return "mlp_dropout_mask" if path == "mlp.dropout" else "attention_dropout_mask"
    if path == "mlp.router":  # gpt-oss's router: the softmax of the top k
        return {"SoftmaxBackward0": "router_weights", "TopkBackward0": "router_indices"}.get(op)
    if path == "mlp.gate":  # Mixtral's, Qwen3-MoE's and DeepSeek's routers
        if op == "GatherBackward0":
            return "router_probs" if slot == "_saved_self" else "router_indices"
        other = "router_norm" if slot == "_saved_other" else "router_weights"
        return _ROUTER.get(op, other)
    if path.startswith("mlp.shared_experts"):  # DeepSeek's shared experts: a gated MLP
        return _mlp(path.replace(".shared_experts", ""), op, slot, shape, dims, prefix="shared_")
    if path.startswith("mlp.experts"):
        return _experts(path, op, slot, shape, dims=dims, keys=keys)
    return None


def _experts(path: str, op: str, slot: str, shape: tuple[int, ...], *, dims: Dims, keys: frozenset[str]) -> str | None:
    if path == "mlp.experts.act_fn" or op == "ClampBackward1":  # gpt-oss clamps the gate and the up projection
        return "experts_gate_up"
    if op in ("IndexAddBackward0", "(not in the graph)") and slot != "_saved_source":
        return "token_index"  # index_add_'s index, and the gather's indices (saved as a list, outside the graph)
    if op == "IndexAddBackward0":
        return "expert_weighted"
    wide = shape[-1] == dims.f
    if "experts_glu_terms" in keys and wide and op in ("MulBackward0", "SigmoidBackward0"):
        return "experts_glu_terms"
    if op == "MmBackward0":
        return "experts_product" if wide else "expert_input"
    if op == "MulBackward0" and slot == "_saved_other":
        return "experts_gate_up" if wide else "routing_weights"
    if op == "MulBackward0":
        return "experts_silu_output" if wide else "expert_output"
    return None


_LOSS = {
    ("EmbeddingBackward0", "_saved_indices"): "token_ids",
    ("NllLossBackward0", "_saved_self"): "logits",
    ("LogSoftmaxBackward0", "_saved_result"): "logits",
    ("NllLossBackward0", "_saved_target"): "targets",
    ("NllLossBackward0", "_saved_total_weight"): "loss_weight",
}


def site(module: str, op: str, slot: str, shape: tuple[int, ...], *, dims: Dims, keys: frozenset[str]) -> str | None:
    """The row key of a tensor saved while ``module`` ran, by node ``op`` in ``slot``; ``None``: no row.

    ``keys`` are the keys of the rows the table predicts for this run (to tell the rows a slot can hold).
    """
    path = layer_path(module)
    if path == "post_attention_layernorm" and "ln_post_attention_input" in keys:  # Gemma: the attention's output
        return _norm("ln_post_attention", op, slot, shape)
    if path in _NORMS:
        return _norm(_NORMS[path], op, slot, shape)
    if path == "mlp.gate" and op == "MmBackward0" and "router_input" in keys:  # DeepSeek: FP32 input and weight
        return "router_weight_fp32" if slot == "_saved_mat2" else "router_input"
    if path in _INPUTS and slot in _LINEAR_INPUT and op in ("MmBackward0", "AddmmBackward0"):
        return _INPUTS[path]
    if path in ("self_attn", "attn", "attn.attn_dropout"):
        return _attention(op, slot, shape, dims, keys)
    if path == "transformer.wpe":
        return "position_ids"
    if path == "transformer.drop":
        return "embedding_dropout_mask"
    if (op, slot) in _LOSS:
        return _LOSS[op, slot]
    return _mlp(path, op, slot, shape, dims, keys=keys)
