"""The checks of a workload's architecture fields: each refusal names the field and the rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError
from mlsysim_nb.layers.architecture import ACTIVATIONS, BIASES, MLPS, NORMS, POSITIONS, Layer
from mlsysim_nb.model.fields import check_count, check_plain

__all__ = [
    "ARCHITECTURE_DEFAULTS",
    "ARCHITECTURE_LIMITS",
    "CHOICES",
    "MODEL_TYPES",
    "OPTIONAL_CHOICES",
    "SHAPE_LIMITS",
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
MODEL_TYPES = ("gpt2", "llama", "mistral", "qwen2", "mixtral")

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
}

#: The largest value each architecture field accepts.
ARCHITECTURE_LIMITS = {"head_dim": 2**16, "ffn_dim": 2**24, "vocab_size": 2**24, "experts": 2**16}


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
    if not isinstance(values["tied_embeddings"], bool):
        raise FieldError(owner, "tied_embeddings", f"must be True or False, got {values['tied_embeddings']!r}")
    return _check_experts(owner, values, out)


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
