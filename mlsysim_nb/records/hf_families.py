"""Reading the 2025 families' ``config.json``: Qwen3(-MoE), Gemma 2 and 3, gpt-oss, DeepSeek-V2/V3, Bamba, Nemotron-H.

Each reader gives a workload's fields from transformers' own keys (and its configuration class's default where
a file leaves a key out), on top of the Llama family's (:func:`mlsysim_nb.records.hf_config`): explicit head
dimensions, norms on Q and K, four norms a layer, attention sinks and router biases, a mixture's shared experts
and dense first layers, latent attention's and Mamba-2's own sizes, and the layers' pattern: ``layer_types``
where the file gives it, else the family's rule (Gemma 3: one global layer in ``sliding_window_pattern``; Gemma 2
and gpt-oss: alternating; Qwen2 and Qwen3: sliding from ``max_window_layers`` on when ``use_sliding_window``;
Bamba: attention at ``attn_layer_indices``; Nemotron-H: ``layers_block_type`` or ``hybrid_override_pattern``, whose
layers are a Mamba-2 mixer, attention or an MLP alone; DeepSeek: dense MLPs in the first ``first_k_dense_replace``).
An option that changes the layers beyond the table is refused by its key.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Layer

__all__ = ["FAMILY_DEFAULTS", "NEW_FAMILIES", "family_fields", "windows"]

_OWNER = "Workload.from_hf_config"
#: The model types read here.
NEW_FAMILIES = (
    "qwen3",
    "qwen3_moe",
    "gemma2",
    "gemma3_text",
    "gpt_oss",
    "deepseek_v2",
    "deepseek_v3",
    "bamba",
    "nemotron_h",
)

#: transformers' configuration classes' defaults of the keys read, where they differ from the Llama reader's.
FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma2": {"vocab_size": 256000, "head_dim": 256, "sliding_window": 4096, "tie_word_embeddings": True,
               "max_position_embeddings": 8192, "num_hidden_layers": 26, "hidden_size": 2304,
               "intermediate_size": 9216, "num_attention_heads": 8, "num_key_value_heads": 4},
    "gemma3_text": {"vocab_size": 262208, "head_dim": 256, "sliding_window": 4096, "tie_word_embeddings": True,
                    "max_position_embeddings": 131072, "num_hidden_layers": 26, "hidden_size": 2304,
                    "intermediate_size": 9216, "num_attention_heads": 8, "num_key_value_heads": 4,
                    "sliding_window_pattern": 6},
    "gpt_oss": {"vocab_size": 201088, "head_dim": 64, "sliding_window": 128, "num_hidden_layers": 36,
                "hidden_size": 2880, "intermediate_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8,
                "max_position_embeddings": 131072},
    "qwen3": {"head_dim": 128},
    "bamba": {"vocab_size": 128000, "num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 14336,
              "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 262144},
    # NemotronHConfig's: its layers come from its pattern (four layers, "M", "E", "*", "-", unless given)
    "nemotron_h": {"vocab_size": 131072, "num_hidden_layers": 4, "hidden_size": 4096, "intermediate_size": 21504,
                   "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                   "max_position_embeddings": 4096},
}  # fmt: skip
_SLIDING, _FULL = "sliding_attention", "full_attention"


def _layer_types(model_type: str, r: Any, layers: int, window: int | None) -> list[str]:
    """Each layer's attention: ``layer_types`` as given, else the family's rule."""
    if "layer_types" in r.c and r.c["layer_types"] is not None:
        given = r.c["layer_types"]
        if type(given) is not list or len(given) != layers or any(t not in (_SLIDING, _FULL) for t in given):
            msg = f"must list {layers} entries, each 'sliding_attention' or 'full_attention'"
            raise FieldError(_OWNER, "layer_types", msg)
        return list(given)
    if model_type == "gemma3_text":
        every = r.count("sliding_window_pattern", 6)
        return [_SLIDING if (i + 1) % every else _FULL for i in range(layers)]
    if model_type in ("gemma2", "gpt_oss"):
        return [_SLIDING if (i + 1) % 2 else _FULL for i in range(layers)]
    if model_type in ("qwen2", "qwen3", "qwen3_moe") and r.switch("use_sliding_window", default=False):
        first = r.count("max_window_layers", 28) if "max_window_layers" in r.c else 28
        return [_SLIDING if i >= first else _FULL for i in range(layers)]
    return [_FULL] * layers if window is None or model_type in ("qwen2", "qwen3", "qwen3_moe") else [_SLIDING] * layers


def _period(layers: list[Layer]) -> tuple[Layer, ...]:
    """The shortest prefix whose repetition over the model gives every layer (the pattern as a workload holds it)."""
    for size in range(1, len(layers) + 1):
        if all(layer == layers[i % size] for i, layer in enumerate(layers)):
            return tuple(layers[:size])
    return tuple(layers)  # pragma: no cover - size = len(layers) always matches


def windows(model_type: str, r: Any, fields: dict[str, Any]) -> None:
    """Set ``sliding_window`` (every layer the same) or ``pattern`` (local and global layers) from the layer types."""
    window = r.count("sliding_window", FAMILY_DEFAULTS.get(model_type, {}).get("sliding_window"), nullable=True)
    types = _layer_types(model_type, r, fields["layers"], window)
    if _SLIDING in types and window is None:
        raise FieldError(_OWNER, "sliding_window", "must be given when a layer is 'sliding_attention'")
    if set(types) == {_SLIDING}:
        fields["sliding_window"] = window
    elif _SLIDING in types:
        fields["pattern"] = _period([Layer("attention", window if t == _SLIDING else None) for t in types])


def _deepseek(model_type: str, r: Any, fields: dict[str, Any]) -> None:
    """Latent attention's sizes, routed and shared experts, the dense first layers (DeepseekV3Config's keys)."""
    if "moe_layer_freq" in r.c and r.c["moe_layer_freq"] != 1:
        raise FieldError(_OWNER, "moe_layer_freq", f"is not supported: only 1 is, got {r.c['moe_layer_freq']!r}")
    q_rank = r.count("q_lora_rank", 1536, nullable=True)
    shapes = {"r_q": q_rank or 0, "r_kv": r.count("kv_lora_rank", 512), "d_rope": r.count("qk_rope_head_dim", 64),
              "d_nope": r.count("qk_nope_head_dim", 128), "d_v": r.count("v_head_dim", 128)}  # fmt: skip
    dense = r.count("first_k_dense_replace", 3 if model_type == "deepseek_v3" else 0, minimum=0)
    layers = fields["layers"]
    if dense > layers:
        raise FieldError(_OWNER, "first_k_dense_replace", f"must be at most num_hidden_layers ({layers}), got {dense}")
    default_experts = (256, 8, 1) if model_type == "deepseek_v3" else (64, None, 2)
    fields |= {
        "kv_heads": None, "head_dim": None, "mixer_shapes": tuple(shapes.items()),
        "dense_ffn": fields["ffn_dim"], "ffn_dim": r.count("moe_intermediate_size", 2048 if model_type == "deepseek_v3"
                                                                                      else 1407),
        "experts": r.count("n_routed_experts", default_experts[0]),
        "experts_per_token": r.count("num_experts_per_tok", default_experts[1]),
        "shared_experts": r.count("n_shared_experts", default_experts[2], minimum=0),
        "pattern": _period([Layer("latent_attention", dense=i < dense) for i in range(layers)]),
    }  # fmt: skip


def _bamba(r: Any, fields: dict[str, Any]) -> None:
    """Mamba-2 layers, with attention at ``attn_layer_indices`` (BambaConfig's keys)."""
    for key, allowed in (("mamba_conv_bias", True), ("mamba_proj_bias", False)):
        if key in r.c and r.c[key] is not allowed:
            raise FieldError(_OWNER, key, f"is not supported: only {allowed!r} is, got {r.c[key]!r}")
    heads = r.count("mamba_n_heads", 128)
    expand = r.count("mamba_expand", 2)
    width = r.c.get("mamba_d_head", "auto")
    head = expand * fields["hidden_dim"] // heads if width == "auto" else r.count("mamba_d_head", None)
    if head * heads != expand * fields["hidden_dim"]:
        msg = f"times mamba_n_heads must be mamba_expand x hidden_size ({expand * fields['hidden_dim']}), got {head}"
        raise FieldError(_OWNER, "mamba_d_head", msg)
    shapes = {"H_ssm": heads, "P_ssm": head, "N_ssm": r.count("mamba_d_state", 256),
              "G_ssm": r.count("mamba_n_groups", 1), "K_conv": r.count("mamba_d_conv", 4),
              "Q_ssm": r.count("mamba_chunk_size", 256)}  # fmt: skip
    given = r.c.get("attn_layer_indices") or []
    layers = fields["layers"]
    if type(given) is not list or any(type(i) is not int or not 0 <= i < layers for i in given):
        raise FieldError(_OWNER, "attn_layer_indices", f"must list layer indices from 0 to {layers - 1}")
    mixers = [Layer("attention" if i in given else "mamba2") for i in range(layers)]
    fields |= {"mixer_shapes": tuple(shapes.items()), "pattern": _period(mixers)}


#: Nemotron-H's layer types, by their letter in ``hybrid_override_pattern`` and their names in ``layers_block_type``
#: (transformers' legacy names too): a Mamba-2 mixer alone, attention alone, an MLP alone.
_NEMOTRON_LAYERS = {
    "M": Layer("mamba2", mlp=False), "linear_attention": Layer("mamba2", mlp=False),
    "mamba": Layer("mamba2", mlp=False),
    "*": Layer("attention", mlp=False), "full_attention": Layer("attention", mlp=False),
    "attention": Layer("attention", mlp=False), "-": Layer("none"), "mlp": Layer("none"),
}  # fmt: skip


def _nemotron_types(r: Any) -> tuple[str, list[str]]:
    """The key read and the layer types: ``layers_block_type`` (or ``layer_types``), else ``hybrid_override_pattern``.

    Neither given: NemotronHConfig's own four layers (a Mamba-2, a mixture of experts, attention, an MLP).
    """
    for key in ("layers_block_type", "layer_types"):
        if r.c.get(key) is not None:
            given = r.c[key]
            if type(given) is not list or not given or any(type(t) is not str for t in given):
                raise FieldError(_OWNER, key, "must list each layer's type")
            return key, list(given)
    key = "hybrid_override_pattern"
    if key not in r.c:
        return key, ["linear_attention", "moe", "full_attention", "mlp"]
    pattern = r.c[key]
    if type(pattern) is not str or not pattern:
        raise FieldError(_OWNER, key, f"must be text of layer letters, got {pattern!r}")
    return key, list(pattern)


def _nemotron_h(r: Any, fields: dict[str, Any]) -> None:
    """Mamba-2, attention and MLP layers, each alone after its one norm (NemotronHConfig's keys).

    transformers builds ``len(layers_block_type)`` layers whatever ``num_hidden_layers`` says; the attention has
    no position encoding; the MLP is ``up_proj``, squared ReLU, ``down_proj``. A mixture-of-experts layer
    (``"moe"``, ``E``) is refused by name.
    """
    key, types = _nemotron_types(r)
    unknown = sorted({t for t in types if t not in _NEMOTRON_LAYERS})
    if unknown:
        msg = (
            f"is not supported: only Mamba-2 ('M'), attention ('*') and MLP ('-') layers are, got "
            f"{', '.join(map(repr, unknown))} (a mixture of experts, 'E', is not described for Nemotron-H)"
        )
        raise FieldError(_OWNER, key, msg)  # fmt: skip
    r.choice("mlp_hidden_act", "relu2", ("relu2",))
    r.choice("mamba_hidden_act", "silu", ("silu",))
    heads, head = r.count("mamba_num_heads", 128), r.count("mamba_head_dim", 64)
    groups = r.count("mamba_n_groups" if "mamba_n_groups" in r.c else "n_groups", 8)
    if heads * head % groups:
        msg = f"must divide mamba_num_heads x mamba_head_dim ({heads * head}), got {groups}"
        raise FieldError(_OWNER, "n_groups", msg)
    shapes = {"H_ssm": heads, "P_ssm": head, "N_ssm": r.count("ssm_state_size", 128), "G_ssm": groups,
              "K_conv": r.count("mamba_d_conv" if "mamba_d_conv" in r.c else "conv_kernel", 4),
              "Q_ssm": r.count("mamba_chunk_size" if "mamba_chunk_size" in r.c else "chunk_size", 128)}  # fmt: skip
    layers = [_NEMOTRON_LAYERS[t] for t in types]
    fields |= {"layers": len(layers), "mlp": "plain", "activation": "relu2", "positions": None, "bias": "none",
               "mixer_shapes": tuple(shapes.items()), "pattern": _period(layers)}  # fmt: skip


def family_fields(model_type: str, r: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The Llama reader's ``fields`` completed for ``model_type``'s layers."""
    if model_type in ("qwen3", "qwen3_moe", "gemma3_text"):
        fields["qk_norm"] = True
    if model_type in ("gemma2", "gemma3_text"):
        fields["sandwich_norms"] = True
    if model_type == "qwen3_moe":
        _qwen3_moe(r, fields)
    if model_type == "gpt_oss":
        fields |= {
            "attention_sinks": True,
            "router_bias": True,
            "bias": "all",
            "experts": r.count("num_local_experts", 128),
            "experts_per_token": r.count("num_experts_per_tok", 4),
        }
    if model_type.startswith("deepseek"):
        _deepseek(model_type, r, fields)
    elif model_type == "bamba":
        _bamba(r, fields)
    elif model_type == "nemotron_h":
        _nemotron_h(r, fields)
    else:
        windows(model_type, r, fields)
    return fields


def _qwen3_moe(r: Any, fields: dict[str, Any]) -> None:
    """Every layer a mixture (no ``mlp_only_layers``, ``decoder_sparse_step`` 1), each expert moe_intermediate_size."""
    if r.c.get("mlp_only_layers") not in (None, []):
        raise FieldError(_OWNER, "mlp_only_layers", "is not supported: only [] (every layer a mixture) is")
    if r.c.get("decoder_sparse_step", 1) != 1:
        raise FieldError(_OWNER, "decoder_sparse_step", "is not supported: only 1 (every layer a mixture) is")
    key = "num_experts" if "num_experts" in r.c else "num_local_experts"
    fields |= {"experts": r.count(key, 128), "experts_per_token": r.count("num_experts_per_tok", 8),
               "ffn_dim": r.count("moe_intermediate_size", 768)}  # fmt: skip
