"""Reading a Hugging Face ``config.json`` into a workload's fields, for GPT-2, Llama and the families built on it.

GPT-2, Llama, Mistral, Qwen2, Mixtral, and the 2025 families (Qwen3, Qwen3-MoE, Gemma 2 and 3, gpt-oss,
DeepSeek-V2 and V3, Bamba, Nemotron-H; :mod:`mlsysim_nb.records.hf_families`).

The keys read are those of transformers' own configuration classes (``GPT2Config``, ``LlamaConfig``,
``MistralConfig``, ``Qwen2Config``, ``MixtralConfig``, ...), with their defaults where a file leaves a key out.
An option that changes what a layer holds or keeps in a way the layer table does not describe is refused
by name, never ignored; options that change neither (token ids, epsilons, rope frequencies, dtype) are
not read. ``architectures`` is read: only the family's causal language model (``LlamaForCausalLM``,
``GPT2LMHeadModel``, ...), whose output layer the count includes, is described; absent or ``null``, that
model is meant (what ``AutoModelForCausalLM.from_config`` builds).

Every refusal names the config.json key (and the workload field it becomes, where the names differ). Each
key read must hold a JSON value of its kind: a whole number is a JSON integer (never text or ``32.0``), a
probability a number, a switch ``true``/``false``; ``null`` only where transformers reads ``null`` as "use the
default" (``n_inner``, ``head_dim``, ``num_key_value_heads``, ``sliding_window``). A file is read only if it
is a regular file of at most :data:`MAX_CONFIG_BYTES` (not a FIFO or a device), as UTF-8 (a byte-order mark
allowed) holding a JSON object; a mapping is copied into a plain dict through ``dict``'s own methods, so a
subclass's overridden ``get`` or ``__getitem__`` is never called.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from collections.abc import Iterator
from typing import Any

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.files import UnreadableFileError, read_bytes
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.transformers import MODEL_TYPES
from mlsysim_nb.layers.weights import parameter_count

__all__ = ["CAUSAL_LM", "MAX_CONFIG_BYTES", "read_hf_config", "translated"]

_OWNER = "Workload.from_hf_config"
#: The largest config.json read: published ones are a few kilobytes.
MAX_CONFIG_BYTES = 1 << 20
#: The most keys a configuration may hold (published ones hold under a hundred).
_MAX_KEYS = 10_000
#: The quantisation methods a checkpoint may state: the count is of the model's parameters either way (the serving
#: kind's ``weight_format`` states how they are stored); DeepSeek-V3's block FP8, gpt-oss's MXFP4.
_QUANTIZATIONS = ("fp8", "mxfp4")
#: Most of any count read beyond the workload's own fields (a latent width, a state size, a number of layers).
_OTHER_BOUND = 2**24
#: The one model class of each family the layer table describes: its causal language model.
CAUSAL_LM = {
    "gpt2": "GPT2LMHeadModel",
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "gemma2": "Gemma2ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM",
    "gpt_oss": "GptOssForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM",
    "deepseek_v3": "DeepseekV3ForCausalLM",
    "bamba": "BambaForCausalLM",
    "nemotron_h": "NemotronHForCausalLM",
}

#: Options refused when set to anything but the value given: each changes the layers beyond the table.
_REFUSED: dict[str, dict[str, Any]] = {
    "gpt2": {"add_cross_attention": False, "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False},
    "llama": {"attention_bias": False, "mlp_bias": False, "pretraining_tp": 1},
    "mistral": {},
    "qwen2": {},
    "mixtral": {"router_jitter_noise": 0.0},
    "gpt_oss": {"attention_bias": True},
    "bamba": {"attention_bias": False, "mlp_bias": False},
    "nemotron_h": {
        "attention_bias": False,
        "mlp_bias": False,
        "use_bias": False,
        "use_conv_bias": True,
        "mamba_conv_bias": True,
        "sliding_window": None,
    },
}
_ACTIVATIONS = {"gpt2": ("gelu_new", "gelu"), "llama": ("silu",), "gemma": ("gelu_pytorch_tanh",)}
_ANYWHERE = ("quantization_config",)
#: The config.json key each workload field is read from, so that a refusal names the key in the file.
_KEYS = {
    "gpt2": {"layers": "n_layer", "hidden_dim": "n_embd", "heads": "n_head", "ffn_dim": "n_inner",
             "vocab_size": "vocab_size", "context_length": "n_positions", "activation": "activation_function",
             "attention_dropout": "attn_pdrop", "hidden_dropout": "resid_pdrop",
             "tied_embeddings": "tie_word_embeddings"},
    "llama": {"layers": "num_hidden_layers", "hidden_dim": "hidden_size", "heads": "num_attention_heads",
              "kv_heads": "num_key_value_heads", "head_dim": "head_dim", "ffn_dim": "intermediate_size",
              "vocab_size": "vocab_size", "context_length": "max_position_embeddings", "activation": "hidden_act",
              "attention_dropout": "attention_dropout", "tied_embeddings": "tie_word_embeddings",
              "sliding_window": "sliding_window", "experts": "num_local_experts",
              "experts_per_token": "num_experts_per_tok"},
}  # fmt: skip
#: The JSON value types a key may hold, exactly (a subclass's methods are never called).
_JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def _keys(model_type: str) -> dict[str, str]:
    """The config.json key of each workload field of ``model_type``'s family."""
    if model_type == "gpt2":
        return _KEYS["gpt2"]
    moe = {"deepseek_v2": ("moe_intermediate_size", "n_routed_experts"), "deepseek_v3": ("moe_intermediate_size",
           "n_routed_experts"), "qwen3_moe": ("moe_intermediate_size", "num_experts")}  # fmt: skip
    if model_type not in moe:
        return _KEYS["llama"]
    ffn, experts = moe[model_type]
    extra = {"dense_ffn": "intermediate_size", "shared_experts": "n_shared_experts"}
    return _KEYS["llama"] | {"ffn_dim": ffn, "experts": experts} | (extra if model_type != "qwen3_moe" else {})


def _refuse_file(path: str, rule: str) -> FieldError:
    return FieldError(_OWNER, "config", f"{path} {rule}")


def _read_file(config: str | os.PathLike[str]) -> Any:
    """The JSON in a regular file of at most MAX_CONFIG_BYTES, read as UTF-8 (a byte-order mark allowed)."""
    path = os.fspath(config)
    try:
        data = read_bytes(path, limit=MAX_CONFIG_BYTES, what="a config.json")
    except UnreadableFileError as err:
        raise _refuse_file(path, err.reason) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _refuse_file(path, f"is not UTF-8 text (byte {err.start}: {data[err.start]:#04x})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise _refuse_file(path, f"is not JSON: {err}") from None
    except RecursionError:
        raise _refuse_file(path, "is not a config.json: its JSON is nested too deeply to read") from None
    except ValueError as err:  # an integer of more digits than Python converts
        raise _refuse_file(path, f"is not a config.json: {err}") from None


def _load(config: Any) -> dict[str, Any]:
    """A plain dict of the configuration's top-level keys, copied through ``dict``'s own methods."""
    if isinstance(config, (str, os.PathLike)):
        config = _read_file(config)
    if not isinstance(config, dict):
        msg = f"must be a path to config.json or the dict config.to_dict() gives, got {type(config).__name__}"
        raise FieldError(_OWNER, "config", msg)
    if dict.__len__(config) > _MAX_KEYS:
        raise FieldError(_OWNER, "config", f"holds {dict.__len__(config):,} keys; a config.json holds at most "
                                           f"{_MAX_KEYS:,}")  # fmt: skip
    plain: dict[str, Any] = {}
    for key, value in dict.items(config):
        if type(key) is not str:
            raise FieldError(_OWNER, "config", f"keys must be text, got a {type(key).__name__}")
        plain[key] = value
    return plain


def _value(c: dict[str, Any], key: str, where: str | None = None) -> Any:
    """``c[key]`` if it is a JSON value (a subclass of one, or any other object, is refused by the key)."""
    value = c[key]
    if type(value) not in _JSON_TYPES:
        key = where or key
        kind = type(value).__name__
        msg = f"must be a JSON value (a number, text, true/false, null, a list or an object), got a {kind}"
        raise FieldError(_OWNER, key, msg)
    return value


def _where(key: str, field: str | None) -> str:
    return key if field is None or field == key else f"{key} (the workload's {field})"


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value!r}, a number written with a decimal point" if math.isfinite(value) else repr(value)
    return show_number(value) if isinstance(value, int) and not isinstance(value, bool) else repr(value)


class _Reader:
    """Reads one family's keys from a plain configuration, each by its rule, refusing by the key's name."""

    def __init__(self, c: dict[str, Any], keys: dict[str, str], bounds: dict[str, int]) -> None:
        self.c = c
        self.fields = {key: field for field, key in keys.items()}
        self.bounds = bounds

    def _get(self, key: str, default: Any, *, nullable: bool) -> Any:
        """The key's JSON value, or ``default`` where the file leaves it out (transformers' own default)."""
        if key not in self.c:
            return default
        value = _value(self.c, key, _where(key, self.fields.get(key)))
        if value is None and not nullable:
            rule = "must be given a value, not null (transformers' own default is used only when the key is left out)"
            raise FieldError(_OWNER, _where(key, self.fields.get(key)), rule)
        return value

    def count(self, key: str, default: int | None, *, nullable: bool = False, minimum: int = 1) -> Any:
        """A whole number (a JSON integer) from ``minimum`` up to the workload's bound for the field it becomes."""
        value = self._get(key, default, nullable=nullable)
        if value is None:
            return None
        where = _where(key, self.fields.get(key))
        if type(value) is not int:
            raise FieldError(_OWNER, where, f"must be a whole number (a JSON integer), got {_shown(value)}")
        if value < minimum:
            raise FieldError(_OWNER, where, f"must be a whole number of at least {minimum}, got {_shown(value)}")
        limit = self.bounds.get(self.fields.get(key, key), _OTHER_BOUND)
        if value > limit:
            raise FieldError(_OWNER, where, f"must be at most {limit:,}, got {show_number(value)}")
        return value

    def probability(self, key: str, default: float) -> float:
        """A dropout probability from 0 up to (not including) 1."""
        value = self._get(key, default, nullable=False)
        ok = type(value) in (int, float) and math.isfinite(value) and 0 <= value < 1
        if not ok:
            rule = f"must be a probability from 0 up to (not including) 1, got {_shown(value)}"
            raise FieldError(_OWNER, _where(key, self.fields.get(key)), rule)
        return float(value)

    def switch(self, key: str, *, default: bool) -> bool:
        """``true`` or ``false``."""
        value = self._get(key, default, nullable=False)
        if type(value) is not bool:
            raise FieldError(_OWNER, _where(key, self.fields.get(key)), f"must be true or false, got {_shown(value)}")
        return bool(value)

    def choice(self, key: str, default: str, allowed: tuple[str, ...]) -> str:
        """One of ``allowed``."""
        value = self._get(key, default, nullable=False)
        if type(value) is not str or value not in allowed:
            rule = f"is not supported: only {', '.join(map(repr, allowed))}, got {_shown(value)}"
            raise FieldError(_OWNER, key, rule)
        return str(value)


def _refuse(model_type: str, c: dict[str, Any]) -> None:
    for key in _ANYWHERE:
        if key in c and _value(c, key):  # a JSON value's truth is safe to ask: null, {} and false are "none"
            method = c[key].get("quant_method") if type(c[key]) is dict else None
            if method not in _QUANTIZATIONS:
                msg = f"is not supported: only quant_method {' or '.join(map(repr, _QUANTIZATIONS))}, got {method!r}"
                raise FieldError(_OWNER, key, msg)
    family = model_type if model_type in ("gpt2", "qwen2", "mixtral") else "llama"
    for key, allowed in {**_REFUSED[family], **_REFUSED.get(model_type, {})}.items():
        if key in c and _value(c, key) is not None and not _same(c[key], allowed):
            raise FieldError(_OWNER, key, f"is not supported: only {allowed!r} is, got {_shown(c[key])}")
    if "architectures" in c and _value(c, "architectures") is not None:
        named = c["architectures"]
        wanted = CAUSAL_LM[model_type]
        if type(named) is not list or not named or any(type(a) is not str or a != wanted for a in named):
            shown = ", ".join(map(repr, named[:4])) if type(named) is list and named else _shown(named)
            msg = (
                f"is not supported: only {wanted!r} (the causal language model, whose output layer over the "
                f"vocabulary the count includes) is described for model_type {model_type!r}, got {shown}"
            )
            raise FieldError(_OWNER, "architectures", msg)


def _same(value: Any, allowed: Any) -> bool:
    """Whether a JSON value is ``allowed``: a switch only as true/false, a number as any equal number."""
    if isinstance(allowed, bool) or isinstance(value, bool):
        return type(value) is type(allowed) and value == allowed
    return type(value) in (int, float) and value == allowed


def _gpt2(r: _Reader) -> dict[str, Any]:
    embd = r.probability("embd_pdrop", 0.1)
    resid = r.probability("resid_pdrop", 0.1)
    if embd != resid:
        raise FieldError(
            _OWNER, "embd_pdrop", f"must equal resid_pdrop (one hidden dropout), got {embd!r} and {resid!r}"
        )
    return {
        "layers": r.count("n_layer", 12), "hidden_dim": r.count("n_embd", 768), "heads": r.count("n_head", 12),
        "context_length": r.count("n_positions", 1024), "ffn_dim": r.count("n_inner", None, nullable=True),
        "activation": r.choice("activation_function", "gelu_new", _ACTIVATIONS["gpt2"]),
        "attention_dropout": r.probability("attn_pdrop", 0.1), "hidden_dropout": resid,
        "vocab_size": r.count("vocab_size", 50257), "tied_embeddings": r.switch("tie_word_embeddings", default=True),
        "positions": "learned",
    }  # fmt: skip


def _llama(model_type: str, r: _Reader) -> dict[str, Any]:
    from mlsysim_nb.records.hf_families import FAMILY_DEFAULTS, NEW_FAMILIES, family_fields, windows

    given = FAMILY_DEFAULTS.get(model_type, {})
    for key in ("num_attention_heads", "num_hidden_layers", "hidden_size", "intermediate_size", "vocab_size"):
        if r.c.get(key) is None and key not in given:
            raise FieldError(_OWNER, key, f"is required in a {model_type} config.json")
    heads = r.count("num_attention_heads", given.get("num_attention_heads"))
    kv = r.count("num_key_value_heads", given.get("num_key_value_heads"), nullable=True)
    hidden = r.count("hidden_size", given.get("hidden_size"))
    gemma = model_type.startswith("gemma")
    activation = (r.choice("hidden_activation", "gelu_pytorch_tanh", _ACTIVATIONS["gemma"]) if gemma
                  else r.choice("hidden_act", "silu", _ACTIVATIONS["llama"]))  # fmt: skip
    fields = {
        "layers": r.count("num_hidden_layers", given.get("num_hidden_layers")), "hidden_dim": hidden, "heads": heads,
        "kv_heads": kv, "head_dim": r.count("head_dim", given.get("head_dim"), nullable=True),
        "context_length": r.count("max_position_embeddings", given.get("max_position_embeddings")),
        "ffn_dim": r.count("intermediate_size", given.get("intermediate_size")),
        "mlp": "gated", "activation": activation, "norm": "rmsnorm",
        "attention_dropout": r.probability("attention_dropout", 0.0), "hidden_dropout": 0.0,
        "vocab_size": r.count("vocab_size", given.get("vocab_size")),
        "tied_embeddings": r.switch("tie_word_embeddings", default=given.get("tie_word_embeddings", False)),
        "bias": "qkv" if model_type == "qwen2" else "none", "positions": "rotary",
    }  # fmt: skip
    if model_type in NEW_FAMILIES:
        return _tidy(family_fields(model_type, r, fields), heads, hidden)
    if model_type == "qwen2":  # Qwen2's window applies from max_window_layers on, with use_sliding_window
        windows(model_type, r, fields)
    _tidy(fields, heads, hidden)
    if model_type in ("mistral", "mixtral"):  # MistralConfig's default window is 4096, MixtralConfig's None
        window = r.count("sliding_window", 4096 if model_type == "mistral" else None, nullable=True)
        fields["sliding_window"] = window
    if model_type == "mixtral":
        fields |= {"experts": r.count("num_local_experts", 8), "experts_per_token": r.count("num_experts_per_tok", 2)}
    return fields


def _tidy(fields: dict[str, Any], heads: int | None, hidden: int | None) -> dict[str, Any]:
    """``head_dim`` left out where it is h/a, the default: config.to_dict() writes it out, config.json may not."""
    if fields["head_dim"] is not None and heads is not None and fields["head_dim"] * heads == hidden:
        fields["head_dim"] = None
    return fields


def _model_type(c: dict[str, Any]) -> str:
    model_type = _value(c, "model_type") if "model_type" in c else None
    if type(model_type) is not str or model_type not in MODEL_TYPES:
        raise FieldError(
            _OWNER, "model_type", f"must be one of {', '.join(map(repr, MODEL_TYPES))}, got {_shown(model_type)}"
        )
    return str(model_type)


def read_hf_config(config: Any, *, bounds: dict[str, int], name: str | None = None, source: str = "") -> dict[str, Any]:
    """The keyword arguments of a :class:`~mlsysim_nb.records.workloads.Workload` read from ``config``.

    ``bounds``: the largest value of each whole-number field, the workload's own (its knobs), read here before
    the parameters are counted.

    ``active_parameters`` is among them only for a mixture of experts (a dense model's is its ``parameters``,
    derived again by the workload when they change).
    """
    c = _load(config)
    model_type = _model_type(c)
    _refuse(model_type, c)
    keys = _keys(model_type)
    reader = _Reader(c, keys, bounds)
    fields = _gpt2(reader) if model_type == "gpt2" else _llama(model_type, reader)
    fields["model_type"] = model_type
    with translated(model_type):
        arch = _architecture(fields)
        fields["parameters"] = parameter_count(arch, fields["layers"])
        if arch.moe:
            fields["active_parameters"] = parameter_count(arch, fields["layers"], active=True)
    given_name = _value(c, "_name_or_path") if "_name_or_path" in c else None
    fields["name"] = name or (given_name if type(given_name) is str and given_name else model_type)
    fields["source"] = source or "a Hugging Face config.json"
    return fields


@contextlib.contextmanager
def translated(model_type: str) -> Iterator[None]:
    """Re-raise a workload's or the layer table's refusal under the config.json key of the field it names."""
    keys = _keys(model_type)
    try:
        yield
    except FieldError as error:
        if error.owner == _OWNER:
            raise
        field = error.field  # the layer table's fields are the workload's, by the same names
        key = keys.get(field)
        where = _where(key, field) if key else f"config (the workload's {field})"
        raise FieldError(_OWNER, where, error.reason) from error


def _architecture(f: dict[str, Any]) -> Architecture:
    """The fields' architecture, for the parameter count (the workload checks them again when built)."""
    names = {field.name for field in dataclasses.fields(Architecture)}
    return Architecture(**{k: v for k, v in f.items() if k in names})
