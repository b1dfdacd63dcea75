"""What transformers itself builds and keeps, for any family it implements: the oracle the layer table is held to.

``meta_parameter_count(config)`` builds the causal language model a ``config.json`` names on PyTorch's meta
device (no memory, no weights) and counts its parameters. ``generated_cache(config, ...)`` builds a small random
model of that configuration on the CPU, generates greedily and lists every floating-point tensor its cache object
holds (dynamic, sliding-window, latent and hybrid caches alike: keys and values, a latent attention's compressed
latent and rotary key, a state-space layer's convolution and SSM states), each storage counted once.
Nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.measure.torch_extra import require_transformers

__all__ = ["CacheMeasurement", "CacheTensor", "generated_cache", "meta_parameter_count"]

_OWNER = "generated_cache"
#: How deep the walk through a cache object goes (cache -> layers -> layer -> dict of states -> tensor).
_DEPTH = 6


@dataclass(frozen=True)
class CacheTensor:
    """One floating-point tensor a cache holds: where it is in the cache object, its shape, dtype and bytes."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int  # of its storage: a view (a sliding window's last W - 1 tokens) may show fewer


@dataclass(frozen=True)
class CacheMeasurement:
    """The cache after ``generate``: its class, its tensors (each storage once) and their bytes in all."""

    cache_class: str
    tensors: tuple[CacheTensor, ...]
    tokens: int

    @property
    def total(self) -> int:
        """Bytes of every floating-point storage the cache holds."""
        return sum(t.nbytes for t in self.tensors)

    def layer(self, index: int) -> tuple[CacheTensor, ...]:
        """The tensors of layer ``index`` (``layers[index]`` in the cache object)."""
        prefix = f"layers[{index}]"
        return tuple(t for t in self.tensors if t.path.startswith(prefix))


def _model_class(transformers: Any, config: dict[str, Any]) -> Any:
    names = config.get("architectures") or []
    if len(names) != 1 or not hasattr(transformers, names[0]):
        raise FieldError("meta_parameter_count", "architectures", f"must name one transformers class, got {names!r}")
    return getattr(transformers, names[0])


def meta_parameter_count(config: dict[str, Any]) -> int:
    """Parameters of the model class ``config["architectures"]`` names, built on the meta device from ``config``."""
    require_transformers()
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = _model_class(transformers, config)(cfg)
    return int(sum(p.numel() for p in model.parameters()))


def _walk(obj: Any, path: str, depth: int, seen: set[int], out: list[CacheTensor]) -> None:
    import torch

    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        if obj.is_floating_point() and storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            out.append(CacheTensor(path, tuple(obj.shape), str(obj.dtype).removeprefix("torch."), storage.nbytes()))
        return
    if depth >= _DEPTH:
        return
    if isinstance(obj, dict):
        items: Any = ((f"{path}[{k!r}]", v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(obj))
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        items = ((f"{path}.{k}" if path else k, v) for k, v in vars(obj).items())
    else:
        return
    for where, value in items:
        _walk(value, where, depth + 1, seen, out)


def generated_cache(
    config: dict[str, Any], *, batch: int, prompt: int, new_tokens: int, dtype: str = "float32", random_state: int = 0
) -> CacheMeasurement:
    """The cache a small random model of ``config`` keeps after generating ``new_tokens`` for ``batch`` prompts.

    ``generate`` feeds the prompt and all but the last new token, so a full-attention layer holds
    ``prompt + new_tokens - 1`` tokens. Eager attention is used (every family implements it on the CPU).
    """
    require_transformers()
    import torch
    import transformers

    if dtype not in ("float32", "bfloat16"):
        raise FieldError(_OWNER, "dtype", f"must be 'float32' or 'bfloat16', got {dtype!r}")
    cfg = transformers.AutoConfig.for_model(**config)
    cfg._attn_implementation = "eager"  # noqa: SLF001 - transformers' own switch of the attention kernel
    torch.manual_seed(random_state)
    model = _model_class(transformers, config)(cfg).to(getattr(torch, dtype)).eval()
    ids = torch.randint(1, int(cfg.vocab_size), (batch, prompt))
    out = model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                         return_dict_in_generate=True, use_cache=True, pad_token_id=0)  # fmt: skip
    cache = out.past_key_values
    tensors: list[CacheTensor] = []
    _walk(cache, "", 0, set(), tensors)
    return CacheMeasurement(type(cache).__name__, tuple(tensors), prompt + new_tokens - 1)
