"""The checks of a workload's architecture fields: each refusal names the field and the rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError
from mlsysim_nb.layers.architecture import ACTIVATIONS, BIASES, MLPS, NORMS, POSITIONS, Architecture, Layer
from mlsysim_nb.model.fields import check_count, check_plain

__all__ = [
    "ARCHITECTURE_DEFAULTS",
    "ARCHITECTURE_LIMITS",
    "CHOICES",
    "MODEL_TYPES",
    "OPTIONAL_CHOICES",
    "SHAPE_LIMITS",
    "architecture_of",
    "check_architecture",
]

#: The largest value each field of a transformer's shape accepts.
SHAPE_LIMITS = {
    "layers": 10**5,
    "hidden_dim": 2**20,
    "heads": 2**16,
    "kv_heads": 2**16,
    "context_length": 2**24,
}

#: The Hugging Face model types ``Workload.from_hf_config`` reads and the transformers accounting follows.
MODEL_TYPES = (
    "gpt2", "llama", "mistral", "qwen2", "mixtral", "qwen3", "qwen3_moe", "gemma2", "gemma3_text", "gpt_oss",
    "deepseek_v2", "deepseek_v3", "bamba",
)  # fmt: skip

#: The text-valued architecture fields and what each accepts.
CHOICES: dict[str, tuple[str, ...]] = {
    "mlp": MLPS,
    "activation": ACTIVATIONS,
    "norm": NORMS,
    "bias": BIASES,
}
#: The text-valued fields that may be left unstated (``None``), and what each accepts when given.
OPTIONAL_CHOICES: dict[str, tuple[str, ...]] = {"positions": POSITIONS, "model_type": MODEL_TYPES}

#: A workload that gives none of these is a GPT-style layer, as Korthikanti et al. (2022) count it; its position
#: encoding is then not stated (``None``), so no position table is counted among its weights.
ARCHITECTURE_DEFAULTS: dict[str, Any] = {
    "head_dim": None,
    "ffn_dim": None,
    "mlp": "plain",
    "activation": "gelu",
    "norm": "layernorm",
    "attention_dropout": 0.1,
    "hidden_dropout": 0.1,
    "vocab_size": None,
    "tied_embeddings": True,
    "experts": None,
    "experts_per_token": None,
    "shared_experts": 0,
    "bias": "all",
    "positions": None,
    "model_type": None,
    "pattern": (),
    "qk_norm": False,
    "sandwich_norms": False,
    "attention_sinks": False,
    "router_bias": False,
    "dense_ffn": None,
    "mixer_shapes": (),
}
#: The switches among the architecture fields (True or False).
_SWITCHES = ("tied_embeddings", "qk_norm", "sandwich_norms", "attention_sinks", "router_bias")

#: The largest value each architecture field accepts.
ARCHITECTURE_LIMITS = {
    "head_dim": 2**16, "ffn_dim": 2**24, "vocab_size": 2**24, "experts": 2**16, "dense_ffn": 2**24,
}  # fmt: skip
#: The largest size of a mixer's own symbol (a latent width, a state size).
_SHAPE_LIMIT = 2**24


def _probability(owner: str, name: str, value: Any) -> float:
    """A probability, read as every share is (0.1, "0.1", "10 %", a NumPy number); a size is refused."""
    rule = "must be a probability from 0 up to (not including) 1"
    try:
        share = check_plain(owner, name, value, positive=False, maximum=1, rule="a probability")
    except FieldUnitError:
        raise
    except FieldError as err:
        raise FieldError(owner, name, f"{rule} ({err.reason})") from None
    if np.ndim(share) or share >= 1:
        raise FieldError(owner, name, f"{rule}, got {value!r}")
    return float(share)


def _choice(owner: str, name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise FieldError(owner, name, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def check_architecture(owner: str, values: dict[str, Any]) -> dict[str, Any]:
    """The architecture fields checked and normalised (counts as ints, probabilities as floats)."""
    out = dict(values)
    for name, limit in ARCHITECTURE_LIMITS.items():
        out[name] = check_count(owner, name, values[name], optional=True, maximum=limit)
    for name, allowed in CHOICES.items():
        out[name] = _choice(owner, name, values[name], allowed)
    for name, allowed in OPTIONAL_CHOICES.items():
        if values[name] is not None:
            out[name] = _choice(owner, name, values[name], allowed)
    for name in ("attention_dropout", "hidden_dropout"):
        out[name] = _probability(owner, name, values[name])
    out["pattern"] = _pattern(owner, values["pattern"])
    out["mixer_shapes"] = _mixer_shapes(owner, values["mixer_shapes"])
    for name in _SWITCHES:
        if not isinstance(values[name], bool):
            raise FieldError(owner, name, f"must be True or False, got {values[name]!r}")
    return _check_experts(owner, values, out)


def _mixer_shapes(owner: str, value: Any) -> tuple[tuple[str, int], ...]:
    """``(symbol, size)`` pairs: a symbol once, a whole size from 0 (latent attention's ``r_q`` may be 0)."""
    rule = "must be (symbol, size) pairs such as (('r_kv', 512),), each symbol once, each size a whole number"
    if isinstance(value, dict):
        value = tuple(value.items())
    if not isinstance(value, (tuple, list)) or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in value):
        raise FieldError(owner, "mixer_shapes", f"{rule}, got {value!r}")
    out = []
    for symbol, size in value:
        if not isinstance(symbol, str) or not symbol.isidentifier():
            raise FieldError(owner, "mixer_shapes", f"{rule}, got the symbol {symbol!r}")
        out.append((symbol, int(check_count(owner, "mixer_shapes", size, minimum=0, maximum=_SHAPE_LIMIT))))
    if len({symbol for symbol, _ in out}) != len(out):
        raise FieldError(owner, "mixer_shapes", f"{rule}, got a symbol twice in {value!r}")
    return tuple(out)


def _pattern(owner: str, value: Any) -> tuple[Layer, ...]:
    """The layers' pattern as a tuple of :class:`Layer` (a mixer's name stands for its layer under no window)."""
    if isinstance(value, (str, Layer)) or not isinstance(value, (tuple, list)):
        msg = f"must be a tuple of layers (Layer, or a mixer's name such as 'attention'), got {value!r}"
        raise FieldError(owner, "pattern", msg)
    try:
        return tuple(layer if isinstance(layer, Layer) else Layer(layer) for layer in value)
    except FieldError as err:
        raise FieldError(owner, "pattern", err.reason) from None


def _check_experts(owner: str, values: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The mixture of experts' fields: given together, k of E."""
    experts = out["experts"]
    if experts is None:
        for name, idle in (("experts_per_token", None), ("shared_experts", 0)):
            if values[name] != idle:
                raise FieldError(owner, name, "needs experts (the number of routed experts) to be given as well")
        return out
    per_token = check_count(owner, "experts_per_token", values["experts_per_token"])
    if per_token > experts:
        raise FieldError(owner, "experts_per_token", f"must be at most experts ({experts:,}), got {per_token:,}")
    out["experts_per_token"] = per_token
    out["shared_experts"] = check_count(owner, "shared_experts", values["shared_experts"], minimum=0, maximum=2**10)
    return out


def architecture_of(f: dict[str, Any], *, kv_heads: Any = None) -> Architecture:
    """The layer table's :class:`Architecture` of a workload's fields (by the workload's names), the one mapping.

    ``Workload.architecture()`` and ``from_hf_config``'s count both build it here; ``kv_heads`` as the workload
    gives it (``None`` for the reference's multi-head count).
    """
    return Architecture(
        hidden=f["hidden_dim"], heads=f["heads"], kv_heads=kv_heads, head_dim=f.get("head_dim"),
        ffn=f.get("ffn_dim"), mlp=f.get("mlp", "plain"), activation=f.get("activation", "gelu"),
        norm=f.get("norm", "layernorm"), attention_dropout=f.get("attention_dropout", 0.1),
        hidden_dropout=f.get("hidden_dropout", 0.1), vocab=f.get("vocab_size"), tied=f.get("tied_embeddings", True),
        experts=f.get("experts") or 0, experts_per_token=f.get("experts_per_token") or 1,
        shared_experts=f.get("shared_experts", 0), bias=f.get("bias", "all"), positions=f.get("positions"),
        max_positions=f.get("context_length"), model_type=f.get("model_type"), layers=f.get("layers"),
        sliding_window=f.get("sliding_window"), pattern=tuple(f.get("pattern", ())), qk_norm=f.get("qk_norm", False),
        sandwich_norms=f.get("sandwich_norms", False), attention_sinks=f.get("attention_sinks", False),
        router_bias=f.get("router_bias", False), dense_ffn=f.get("dense_ffn"),
        mixer_shapes=tuple(f.get("mixer_shapes", ())),
    )  # fmt: skip
