"""Reading a Hugging Face ``config.json`` into a workload's fields, for the GPT-2, Llama, Mistral, Qwen2, Mixtral types.

The keys read are those of transformers' own configuration classes (``GPT2Config``, ``LlamaConfig``,
``MistralConfig``, ``Qwen2Config``, ``MixtralConfig``), with their defaults where a file leaves a key out.
An option that changes what a layer holds or keeps in a way the layer table does not describe is refused
by name, never ignored; options that change neither (token ids, epsilons, rope frequencies, dtype) are
not read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.weights import parameter_count
from mlsysim_nb.records.architecture_checks import ARCHITECTURE_LIMITS, MODEL_TYPES, SHAPE_LIMITS

__all__ = ["read_hf_config"]

_OWNER = "Workload.from_hf_config"
#: The largest shape a workload accepts (its own checks), read here before the parameters are counted.
_BOUNDS = {**SHAPE_LIMITS, **{k: v for k, v in ARCHITECTURE_LIMITS.items() if k in ("ffn_dim", "vocab_size")}}

#: Options refused when set to anything but the value given: each changes the layers beyond the table.
_REFUSED: dict[str, dict[str, Any]] = {
    "gpt2": {"add_cross_attention": False, "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False},
    "llama": {"attention_bias": False, "mlp_bias": False, "pretraining_tp": 1},
    "mistral": {},
    "qwen2": {"use_sliding_window": False},
    "mixtral": {"router_jitter_noise": 0.0},
}
_ACTIVATIONS = {"gpt2": ("gelu_new", "gelu"), "llama": ("silu",)}
_ANYWHERE = ("quantization_config",)
#: Families whose attention caches a compressed latent (DeepSeek-V2's multi-head latent attention)
_LATENT_ATTENTION = ("deepseek_v2", "deepseek_v3")
#: The config.json key each shape field is read from, so that a refusal names the key in the file.
_KEYS = {
    "gpt2": {"layers": "n_layer", "hidden_dim": "n_embd", "heads": "n_head", "ffn_dim": "n_inner",
             "vocab_size": "vocab_size"},
    "llama": {"layers": "num_hidden_layers", "hidden_dim": "hidden_size", "heads": "num_attention_heads",
              "kv_heads": "num_key_value_heads", "ffn_dim": "intermediate_size", "vocab_size": "vocab_size"},
}  # fmt: skip


def _load(config: Any) -> dict[str, Any]:
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        if not path.is_file():
            raise FieldError(_OWNER, "config", f"no such file: {path}")
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise FieldError(_OWNER, "config", f"{path} is not JSON: {err}") from err
        config = loaded
    if not isinstance(config, dict):
        msg = f"must be a path to config.json or the dict config.to_dict() gives, got {type(config).__name__}"
        raise FieldError(_OWNER, "config", msg)
    return config


def _refuse(model_type: str, config: dict[str, Any]) -> None:
    for key in _ANYWHERE:
        if config.get(key):
            raise FieldError(_OWNER, key, "is not supported: the layer table describes unquantized weights")
    family = model_type if model_type in ("gpt2", "qwen2", "mixtral") else "llama"
    for key, allowed in {**_REFUSED[family], **_REFUSED.get(model_type, {})}.items():
        if key in config and config[key] is not None and config[key] != allowed:
            raise FieldError(_OWNER, key, f"is not supported: only {allowed!r} is, got {config[key]!r}")
    activation = config.get("activation_function" if model_type == "gpt2" else "hidden_act",
                            "gelu_new" if model_type == "gpt2" else "silu")  # fmt: skip
    allowed_acts = _ACTIVATIONS["gpt2" if model_type == "gpt2" else "llama"]
    if activation not in allowed_acts:
        name = "activation_function" if model_type == "gpt2" else "hidden_act"
        raise FieldError(
            _OWNER, name, f"is not supported: only {', '.join(map(repr, allowed_acts))}, got {activation!r}"
        )


def _gpt2(c: dict[str, Any]) -> dict[str, Any]:
    hidden = c.get("n_embd", 768)
    if c.get("embd_pdrop", 0.1) != c.get("resid_pdrop", 0.1):
        shown = f"{c.get('embd_pdrop', 0.1)!r} and {c.get('resid_pdrop', 0.1)!r}"
        raise FieldError(_OWNER, "embd_pdrop", f"must equal resid_pdrop (one hidden dropout), got {shown}")
    return {
        "layers": c.get("n_layer", 12), "hidden_dim": hidden, "heads": c.get("n_head", 12),
        "context_length": c.get("n_positions", 1024), "ffn_dim": c.get("n_inner"),
        "activation": c.get("activation_function", "gelu_new"), "attention_dropout": c.get("attn_pdrop", 0.1),
        "hidden_dropout": c.get("resid_pdrop", 0.1), "vocab_size": c.get("vocab_size", 50257),
        "tied_embeddings": c.get("tie_word_embeddings", True),
    }  # fmt: skip


def _llama(model_type: str, c: dict[str, Any]) -> dict[str, Any]:
    heads = c["num_attention_heads"]
    fields = {
        "layers": c["num_hidden_layers"], "hidden_dim": c["hidden_size"], "heads": heads,
        "kv_heads": heads if c.get("num_key_value_heads") is None else c["num_key_value_heads"],
        "head_dim": c.get("head_dim"),
        "context_length": c.get("max_position_embeddings"), "ffn_dim": c["intermediate_size"], "mlp": "gated",
        "activation": "silu", "norm": "rmsnorm", "attention_dropout": c.get("attention_dropout", 0.0),
        "hidden_dropout": 0.0, "vocab_size": c["vocab_size"], "tied_embeddings": c.get("tie_word_embeddings", False),
        "bias": "qkv" if model_type == "qwen2" else "none", "positions": "rotary",
    }  # fmt: skip
    if fields["head_dim"] is not None and fields["head_dim"] * heads == fields["hidden_dim"]:
        fields["head_dim"] = None  # h/a, the default: config.to_dict() writes it out, config.json may not
    if model_type in ("mistral", "mixtral"):  # MistralConfig's default window is 4096, MixtralConfig's None
        fields["sliding_window"] = c.get("sliding_window", 4096 if model_type == "mistral" else None)
    # qwen2's sliding_window counts only with use_sliding_window, which is refused above: every layer sees all
    if model_type == "mixtral":
        fields |= {"experts": c.get("num_local_experts", 8), "experts_per_token": c.get("num_experts_per_tok", 2)}
    return fields


def _missing(model_type: str, c: dict[str, Any]) -> None:
    if model_type == "gpt2":
        return
    for key in ("num_attention_heads", "num_hidden_layers", "hidden_size", "intermediate_size", "vocab_size"):
        if c.get(key) is None:
            raise FieldError(_OWNER, key, f"is required in a {model_type} config.json")


def read_hf_config(config: Any, *, name: str | None = None, source: str = "") -> dict[str, Any]:
    """The keyword arguments of a :class:`~mlsysim_nb.records.workloads.Workload` read from ``config``."""
    c = _load(config)
    model_type = c.get("model_type")
    if model_type in _LATENT_ATTENTION or c.get("kv_lora_rank") is not None:
        msg = (
            f"is not supported: multi-head latent attention (DeepSeek-V2/V3's kv_lora_rank, model_type "
            f"{model_type!r}) caches one compressed latent per token, not keys and values per head, and is not "
            "modelled"
        )
        raise FieldError(_OWNER, "kv_lora_rank", msg)
    if model_type not in MODEL_TYPES:
        raise FieldError(
            _OWNER, "model_type", f"must be one of {', '.join(map(repr, MODEL_TYPES))}, got {model_type!r}"
        )
    _refuse(model_type, c)
    _missing(model_type, c)
    fields = _gpt2(c) if model_type == "gpt2" else _llama(model_type, c)
    fields["model_type"] = model_type
    arch = _architecture(fields, _KEYS["gpt2" if model_type == "gpt2" else "llama"])
    fields["parameters"] = parameter_count(arch, fields["layers"])
    fields["active_parameters"] = parameter_count(arch, fields["layers"], active=True)
    fields["name"] = name or c.get("_name_or_path") or model_type
    fields["source"] = source or "a Hugging Face config.json"
    return fields


def _architecture(f: dict[str, Any], keys: dict[str, str]) -> Architecture:
    """The fields' architecture, for the parameter count (the workload checks them again when built).

    A refusal names the config.json key (``hidden_size``) and the workload field it becomes (``hidden_dim``).
    """
    for field, key in keys.items():
        value = f.get(field)
        where = f"{key} (the workload's {field})" if key != field else key
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise FieldError(_OWNER, where, f"must be a whole number of at least 1, got {value!r}")
        if value is not None and value > _BOUNDS[field]:  # the workload's own bounds, before counting parameters
            raise FieldError(_OWNER, where, f"must be at most {_BOUNDS[field]:,}, got {show_number(value)}")
    return Architecture(
        hidden=f["hidden_dim"], heads=f["heads"], kv_heads=f.get("kv_heads"), head_dim=f.get("head_dim"),
        ffn=f["ffn_dim"], mlp=f.get("mlp", "plain"), activation=f["activation"], norm=f.get("norm", "layernorm"),
        vocab=f["vocab_size"], tied=f["tied_embeddings"], experts=f.get("experts", 0),
        experts_per_token=f.get("experts_per_token", 1), bias=f.get("bias", "all"),
        positions=f.get("positions", "learned"), max_positions=f.get("context_length"),
    )  # fmt: skip
