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
and every device keeps the whole latent cache (it has no head axis). Megatron-LM (the training kinds' engine;
``megatron/core/transformer/multi_latent_attention.py``, ``MLASelfAttention``) splits the heads the same way:
``linear_q_up_proj`` and ``linear_kv_up_proj`` are column-parallel (``num_attention_heads_per_partition`` =
``divide(a, t)``, which asserts that t divides the heads), ``linear_proj`` row-parallel, and the down projections
``linear_q_down_proj`` and ``linear_kv_down_proj`` are replicated (``TELinear`` with ``parallel_mode="duplicated"``,
the default layer spec): every device computes the whole latents, which sequence parallelism splits along the
sequence. So Q, K, V, the scores and the output projection's input divide by t; the latents' rows do not.

Saved tensors in training (:meth:`LatentAttention.saved`): the latents and their norms' inputs, then the
decompressed keys and values, which do exist in training (the absorption into the projections is a decoding
trick), as transformers' ``DeepseekV3Attention`` keeps them (measured: ``tests/measure/test_families_2025.py``).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.mixers import ENGINES, Mixer
from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["MIXER", "LatentAttention"]

_OWN = ("r_q", "r_kv", "d_rope", "d_nope", "d_v")


_H = ("s", "b", "h")
_Q = ("s", "b", "a", "d_qk")
_V = ("s", "b", "a", "d_v")
_SCORES = ("b", "a", "s", "s")
_ROTARY = "the rotary cos and sin tables of the rotary key's d_rope values; one pair per model, all layers read it"
_LATENT = (
    "latent attention keeps its low-rank latents: the norms' and the up projections' inputs, r_q and r_kv per token"
)
_BESIDE = (
    "in FP32 the key/value latent norm's input is a view of kv_a_proj_with_mqa's output, which holds the rotary "
    "key's d_rope values too: the whole storage stays alive"
)
_JOINED = "the decompressed keys: d_nope per head from the latent, and the one rotary key joined to every head"
_SOFTMAX_FP32 = "transformers' eager attention computes the softmax in FP32"
_SOFTMAX_CAST = "the FP32 softmax cast back to the activation dtype, which the AV product keeps (no copy in FP32)"
_MATH = (
    "DEVICE_EFFECTS['cpu sdpa unequal head dims']: SDPA on the CPU has no fused kernel for d_qk ≠ d_v and runs its "
    "math path in FP32"
)
_LSE = "one FP32 log-sum-exp per row and head instead of the s² scores"


def _core(arch: Architecture, framework: bool, attention: str, device: str) -> list[Saved]:
    """Q, K, V decompressed and what the attention kernel keeps of them."""
    q = Saved("q", "Q (decompressed, rotary part joined)", "attention", _Q, paper="qk")
    k = Saved("k", "K (decompressed, rotary key joined)", "attention", _Q, paper="qk", note=_JOINED)
    v = Saved("v", "V (decompressed)", "attention", _V, paper="v")
    unequal = arch.shape("d_nope") + arch.shape("d_rope") != arch.shape("d_v")
    if attention == "fused" and framework and device == "cpu" and unequal:
        return [
            Saved("q", "Q (FP32)", "attention", _Q, width="fp32", paper="qk", note=_MATH),
            Saved("k", "K (FP32)", "attention", _Q, width="fp32", paper="qk", note=_MATH),
            Saved("softmax_output", "softmax output (FP32)", "attention", _SCORES, width="fp32",
                  recompute="selective", paper="softmax_output", note=_MATH),
            Saved("v", "V (FP32)", "attention", _V, width="fp32", paper="v", note=_MATH),
        ]  # fmt: skip
    if attention == "fused":
        lse = Saved("lse", "log-sum-exp per row (FP32)", "attention", ("b", "a", "s"), width="fp32", note=_LSE)
        return [q, k, v, lse]
    if arch.attention_dropout > 0:
        msg = "latent attention with attention dropout is not described; DeepSeek's models use none"
        raise FieldError("Architecture", "attention_dropout", msg)
    softmax = Saved("softmax_output", "softmax output" + (" (FP32)" if framework else ""), "attention", _SCORES,
                    width="fp32" if framework else "act", recompute="selective", paper="softmax_output",
                    note=_SOFTMAX_FP32 if framework else "")  # fmt: skip
    rows = [q, k, softmax]
    if framework:
        rows.append(Saved("softmax_cast", "softmax output in the activation dtype", "attention", _SCORES,
                          recompute="selective", narrow_only=True, note=_SOFTMAX_CAST))  # fmt: skip
    return [*rows, v]


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
                Weight("wq_b", "Q from the query latent", "attention", ("r_q", "a", "d_qk"), matrix=True),
            ]
        else:
            rows = [Weight("wq", "Q projection", "attention", ("h", "a", "d_qk"))]
        return (
            *rows,
            Weight("wkv_a", "key/value latent projection", "attention", ("h", "r_kv")),
            Weight("wk_rope", "rotary key projection (one head)", "attention", ("h", "d_rope")),
            Weight("norm_kv_latent", "key/value latent norm", "attention", ("r_kv",)),
            Weight("wk_b", "keys from the latent", "attention", ("r_kv", "a", "d_nope"), matrix=True),
            Weight("wv_b", "values from the latent", "attention", ("r_kv", "a", "d_v"), matrix=True),
            Weight("wo", "output projection", "attention", ("a", "d_v", "h")),
        )

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """The block's rows, from its input to the output projection's input, in forward order.

        Both accountings keep the latents (the up projections' inputs) and the decompressed heads: Q and K of
        ``d_qk`` per head (the rotary key joined to every head's key), V of ``d_v``; eager attention the s²
        scores, fused attention one FP32 log-sum-exp per row and head. Transformers' own module adds its norms'
        FP32 work and, on the CPU, SDPA's math path (``d_qk ≠ d_v``: DEVICE_EFFECTS["cpu sdpa unequal head dims"]).
        """
        framework = implementation == "transformers"
        rows = [Saved("qkv_input", "latent projections' input" + (" (the norm's output)" if framework else ""),
                      "attention", _H, split="sp", paper="qkv_input")]  # fmt: skip
        if framework:
            rows.append(Saved("rotary", "rotary cos and sin", "attention", ("s", "d_rope"), count=2, split="none",
                              per_model=True, note=_ROTARY))  # fmt: skip
        for latent, label, width in (("q", "query", "r_q"), ("kv", "key/value", "r_kv")):
            if latent == "q" and not arch.shape("r_q"):
                continue
            rows += self._latent(arch, framework, latent, label, width)
        rows += _core(arch, framework, attention, device)
        rows.append(Saved("projection_input", "output projection input", "attention", ("s", "b", "a", "d_v"),
                          paper="projection_input"))  # fmt: skip
        return tuple(rows)

    @staticmethod
    def _latent(arch: Architecture, framework: bool, latent: str, label: str, width: str) -> list[Saved]:
        """A latent's norm (its input; transformers' FP32 work) and the up projection's input (the norm's output)."""
        shape = ("s", "b", width)
        if framework:
            from mlsysim_nb.layers.transformers import norm_rows

            rows = norm_rows(arch, f"{latent}_latent_norm", f"{label} latent norm", "attention", shape)
            if latent == "kv":  # in FP32 the norm's input is a view of the projection's output, rotary key and all
                rest = Saved("kv_latent_norm_input_rest", "the rotary key beside it (FP32 only)", "attention",
                             ("s", "b", "d_rope"), width="fp32", split="sp", wide_only=True, note=_BESIDE)  # fmt: skip
                rows.append(rest)
        else:
            rows = [Saved(f"{latent}_latent_norm_input", f"{label} latent norm input", "attention", shape, split="sp",
                          note=_LATENT)]  # fmt: skip
        up = "Q" if latent == "q" else "K and V"
        rows.append(Saved(f"{latent}_latent", f"{label} latent ({up} up-projection input)", "attention", shape,
                          split="sp", note=_LATENT))  # fmt: skip
        return rows

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
