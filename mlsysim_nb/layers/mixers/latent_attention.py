"""Multi-head latent attention (DeepSeek-V2 and V3): its weights, its cache of one latent per token, its rules.

Keys and values are compressed into one latent of ``r_kv`` values per token (``kv_a_proj_with_mqa``, then a norm),
beside a rotary key of ``d_rope`` values shared by every head; the heads' keys (``d_nope`` values each, plus the
rotary key) and values (``d_v`` each) are decompressed from the latent by ``kv_b_proj``. The queries go through a
latent of their own, ``r_q`` values (``q_a_proj``, a norm, ``q_b_proj``), or one projection when ``r_q`` is 0
(DeepSeek-V2-Lite). DeepSeek-AI (2024), DeepSeek-V2, Sec. 2.1; transformers' ``DeepseekV3Attention``.

Symbols of its own (``Architecture.mixer_shapes``): ``r_q``, ``r_kv``, ``d_rope``, ``d_nope``, ``d_v``; ``d_qk`` is
``d_nope + d_rope``.

The cache is the latent and the rotary key, ``r_kv + d_rope`` values per token and layer, as inference engines
(vLLM's MLA backends, SGLang) and transformers keep it: 576 values for DeepSeek-V3, 61 × 576 × 2 B = 70,272 B per
token in BF16 (DeepSeek's ISCA '25 paper, Table 1). A cache of the decompressed keys and values would hold
``a·(d_qk + d_v)`` = 128 × 320 values per layer, 4,997,120 B per token, 71 times as much; no engine keeps it, as
the products with ``kv_b_proj`` are absorbed into the query and output projections at decode time.

Tensor parallelism (vLLM, ``DeepseekV2MLAAttention``): the heads split over ``t`` (``q_b_proj`` and
``kv_b_proj`` column-parallel, ``o_proj`` row-parallel); ``q_a_proj`` and ``kv_a_proj_with_mqa`` are replicated,
and every device keeps the whole latent cache (it has no head axis). Megatron-LM (``MLASelfAttention``) splits
the heads the same way. The saved tensors of a training step are not described yet: the training kinds refuse a
latent attention layer by name.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.mixers import ENGINES, Mixer
from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["MIXER", "LatentAttention"]

_OWN = ("r_q", "r_kv", "d_rope", "d_nope", "d_v")


class LatentAttention(Mixer):
    """DeepSeek's multi-head latent attention."""

    name = "latent_attention"
    label = "latent attention"

    def check(self, arch: Architecture) -> None:
        """Needs heads and its own sizes (``r_q`` may be 0: no query latent); no biases (DeepSeek has none)."""
        if arch.heads is None:
            raise FieldError("Architecture", "heads", "is needed by a latent attention layer; give the heads")
        for symbol in _OWN:
            size = arch.shape(symbol)
            if size < (0 if symbol == "r_q" else 1):
                raise FieldError("Architecture", "mixer_shapes", f"must give {symbol} at least 1, got {size}")
        if arch.bias != "none":
            raise FieldError("Architecture", "bias", f"must be 'none' for latent attention, got {arch.bias!r}")

    def symbols(self, arch: Architecture) -> dict[str, int]:
        """``r_q``, ``r_kv``, ``d_rope``, ``d_nope``, ``d_v`` and ``d_qk = d_nope + d_rope``."""
        own = {symbol: arch.shape(symbol) for symbol in _OWN}
        return own | {"d_qk": own["d_nope"] + own["d_rope"]}

    def weights(self, arch: Architecture) -> tuple[Weight, ...]:
        """The query latent (or one Q projection), the key/value latent and rotary key, their decompression, output."""
        if arch.shape("r_q"):
            rows = [
                Weight("wq_a", "query latent projection", "attention", ("h", "r_q")),
                Weight("norm_q_latent", "query latent norm", "attention", ("r_q",)),
                Weight("wq_b", "Q from the query latent", "attention", ("r_q", "a", "d_qk")),
            ]
        else:
            rows = [Weight("wq", "Q projection", "attention", ("h", "a", "d_qk"))]
        return (
            *rows,
            Weight("wkv_a", "key/value latent projection", "attention", ("h", "r_kv")),
            Weight("wk_rope", "rotary key projection (one head)", "attention", ("h", "d_rope")),
            Weight("norm_kv_latent", "key/value latent norm", "attention", ("r_kv",)),
            Weight("wk_b", "keys from the latent", "attention", ("r_kv", "a", "d_nope")),
            Weight("wv_b", "values from the latent", "attention", ("r_kv", "a", "d_v")),
            Weight("wo", "output projection", "attention", ("a", "d_v", "h")),
        )

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """Not described yet: refused by name, never a number for another layer."""
        msg = "holds a latent attention layer, whose saved tensors in training are not described yet"
        raise FieldError("Architecture", "pattern", msg)

    def cache(self, arch: Architecture) -> tuple[Cached, ...]:
        """The latent and the rotary key of each token: ``r_kv + d_rope`` values, one copy for every head."""
        return (Cached("latent", "cached key/value latent", ("r_kv",)), Cached("rope_key", "cached rotary key",
                                                                                ("d_rope",)))  # fmt: skip

    def attended_width(self, arch: Architecture) -> float:
        """``a·(d_qk + d_v)/2``: QKᵀ over ``d_qk`` and AV over ``d_v`` per head, keys and values decompressed.

        That is the form transformers runs; an engine that absorbs kv_b_proj into Q and the output does other
        arithmetic.
        """
        own = self.symbols(arch)
        return (arch.heads or 1) * (own["d_qk"] + own["d_v"]) / 2

    def per_device(self, arch: Architecture, tensor_parallel: Any, engine: str) -> dict[str, Any]:
        """Heads ``a/t``; the latent and the rotary key whole on every device."""
        return {"a": (arch.heads or 1) / tensor_parallel}

    def refusal(self, arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
        """``t`` must divide the heads (both engines split them; the latent has no head axis to split)."""
        heads = arch.heads or 1
        if heads % tensor_parallel:
            name = ENGINES[engine]
            return f"must divide the {heads} attention heads", f"{name} splits latent attention by its heads"
        return None


MIXER = LatentAttention()
