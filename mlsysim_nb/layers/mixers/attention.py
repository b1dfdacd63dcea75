"""Multi-head and grouped-query attention: its weights, saved rows, cache rows and tensor-parallel rules.

``a`` query heads of width ``d`` share ``kv`` key/value heads (``kv = a``: multi-head attention; Ainslie et al.
2023, "GQA"). The rows:

* weights: the Q, K, V and output projections (``h·a·d``, ``h·kv·d`` twice, ``a·d·h``) and their biases;
* saved (Korthikanti et al. 2022, Sec. 4.1, generalised): the QKV input, Q, K and V, the scores, softmax and
  dropout (eager) or one FP32 log-sum-exp per row and head (fused), the output projection's input; the
  framework's rows follow Hugging Face transformers' modules (:mod:`mlsysim_nb.layers.transformers`);
* cache: K and V, ``kv·d`` values each per token and layer (Kwon et al. 2023, Sec. 3: 2 × layers × heads ×
  head_dim per token), at most the layer's window of tokens.

Tensor parallelism splits the heads; the engines differ on key/value heads:

* **Megatron-LM** (the training kinds): ``megatron/core/transformer/attention.py``, ``Attention.__init__``,
  divides both the attention heads and the query groups (key/value heads) by the tensor-parallel size with
  ``divide()``, which asserts that each divides evenly: ``t`` must divide ``a`` and ``kv``; each device holds
  ``a/t`` query heads and ``kv/t`` key/value heads.
* **vLLM** (the serving kind): ``vllm/model_executor/layers/linear.py``, ``QKVParallelLinear.__init__``,
  divides the query heads by ``t``; when ``t ≥ kv`` each device holds one key/value head and each head is
  replicated ``t/kv`` times (``divide(tp_size, total_num_kv_heads)``: ``kv`` must divide ``t``), otherwise
  each device holds ``kv/t`` (``t`` must divide ``kv``).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.formula import Formula
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.mixers import ENGINES, Mixer
from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["KV_HEADS_PER_DEVICE", "KV_HEAD_REPLICAS", "MIXER", "Attention", "kv_head_replicas", "kv_heads_per_device"]

_T = ("s", "b")
_H = ("s", "b", "h")
_HEADS = ("s", "b", "a", "d")
_KV_HEADS = ("s", "b", "kv", "d")
_SCORES = ("b", "a", "s", "s")

_REPEAT = "eager attention repeats K and V to every query head (repeat_kv) before the products"
_SOFTMAX_FP32 = "Llama's eager attention computes the softmax in FP32"
_SOFTMAX_CAST = "the FP32 softmax cast back to the activation dtype, which the AV product keeps (no copy in FP32)"
_ROTARY = (
    "the rotary cos and sin tables the layer multiplies Q and K by (for one sequence, broadcast over the batch); "
    "one pair per model, all layers read it"
)
_MATH = "DEVICE_EFFECTS['cpu sdpa math path']: with dropout, SDPA on the CPU runs its math path in FP32"
_LSE = "one FP32 log-sum-exp per row and head instead of the s² scores"
_QK_NORM = "Qwen3's and Gemma 3's RMSNorm over each head's Q and K (the projections' outputs)"
_SINKS = (
    "gpt-oss joins one learned sink logit per head to each row of scores: the softmax runs over s + 1 columns "
    "and keeps the sink's column too; a per-token row, kept under selective recomputation here"
)
_SINK_MAX = "gpt-oss subtracts each row's maximum before its softmax: the max keeps its int64 index per row"

#: Key/value heads one device holds, by engine, as a formula over ``kv_heads`` and ``tensor_parallel`` (the
#: serving equations show vLLM's; :func:`kv_heads_per_device` evaluates either).
KV_HEADS_PER_DEVICE = {"megatron": "kv_heads / tensor_parallel", "vllm": "max(kv_heads / tensor_parallel, 1)"}
#: Devices holding a copy of each key/value head, by engine: Megatron-LM never replicates; vLLM when t > kv.
KV_HEAD_REPLICAS = {"megatron": "1", "vllm": "max(tensor_parallel / kv_heads, 1)"}
_PER_DEVICE = {engine: Formula("kv_heads_per_device", rule) for engine, rule in KV_HEADS_PER_DEVICE.items()}
_REPLICAS = {engine: Formula("kv_head_replicas", rule) for engine, rule in KV_HEAD_REPLICAS.items()}


def kv_heads_per_device(kv: Any, tensor_parallel: Any, engine: str) -> Any:
    """Key/value heads on one device by ``engine``'s rule (:data:`KV_HEADS_PER_DEVICE`); arrays in a sweep."""
    return _PER_DEVICE[engine].evaluate({"kv_heads": kv, "tensor_parallel": tensor_parallel})


def kv_head_replicas(kv: Any, tensor_parallel: Any, engine: str) -> Any:
    """Devices holding a copy of each key/value head by ``engine``'s rule (:data:`KV_HEAD_REPLICAS`)."""
    return _REPLICAS[engine].evaluate({"kv_heads": kv, "tensor_parallel": tensor_parallel})


class Attention(Mixer):
    """Multi-head and grouped-query attention (``kv_heads`` below ``heads``: grouped)."""

    name = "attention"
    label = "attention"

    def check(self, arch: Architecture) -> None:
        """Attention needs heads; key/value heads share them evenly; heads split the width unless head_dim is given."""
        if arch.heads is None:
            raise FieldError("Architecture", "heads", "is needed by an attention layer; give the attention heads")
        if arch.heads % arch.kv:
            raise FieldError("Architecture", "kv_heads", f"must divide heads ({arch.heads}), got {arch.kv}")
        if arch.head_dim is None and arch.hidden_dim % arch.heads:
            msg = f"must divide hidden_dim ({arch.hidden_dim}) unless head_dim is given, got {arch.heads}"
            raise FieldError("Architecture", "heads", msg)

    def weights(self, arch: Architecture) -> tuple[Weight, ...]:
        """The Q, K, V and output projections, and the biases ``arch.bias`` gives."""
        rows = [
            Weight("wq", "Q projection", "attention", ("h", "a", "d")),
            Weight("wk", "K projection", "attention", ("h", "kv", "d")),
            Weight("wv", "V projection", "attention", ("h", "kv", "d")),
            Weight("wo", "output projection", "attention", ("a", "d", "h")),
        ]
        if arch.bias in ("all", "qkv"):
            rows += [
                Weight("bq", "Q bias", "attention", ("a", "d")),
                Weight("bkv", "K and V biases", "attention", ("kv", "d"), count=2),
            ]
        if arch.bias == "all":
            rows.append(Weight("bo", "output projection bias", "attention", ("h",)))
        if arch.qk_norm:  # Qwen3, Gemma 3: an RMSNorm over each head's Q and K
            rows.append(Weight("qk_norm", "Q and K norm scales", "attention", ("d",), count=2))
        if arch.attention_sinks:  # gpt-oss: one learned sink logit per head
            rows.append(Weight("sinks", "attention sinks", "attention", ("a",)))
        return tuple(rows)

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """The block's rows, from its input to the output projection's input, in forward order."""
        if implementation == "megatron":
            core = _fused("fused attention") if attention == "fused" else _paper_eager(arch)
            head = [Saved("qkv_input", "QKV input", "attention", _H, split="sp", paper="qkv_input")]
            if arch.qk_norm:  # the norms over each head keep their inputs, as every norm of the paper does
                head += [Saved("q_norm_input", "Q norm input", "attention", _HEADS, note=_QK_NORM),
                         Saved("k_norm_input", "K norm input", "attention", _KV_HEADS, note=_QK_NORM)]  # fmt: skip
        else:
            from mlsysim_nb.layers.transformers import family, norm_rows

            fam = family(arch)
            llama = fam != "gpt2"
            if arch.attention_sinks and attention == "fused":
                msg = (
                    "transformers runs gpt-oss's attention with its sinks eagerly (or with a hub kernel), never with "
                    "PyTorch's SDPA, which has no sinks (GptOssPreTrainedModel._supports_sdpa is False)"
                )
                raise ValueError(msg)
            core = _framework_fused(arch, device) if attention == "fused" else _framework_eager(arch, llama)
            head = [Saved("qkv_input", "QKV input" + (" (the norm's output)" if llama else ""), "attention", _H,
                          split="sp", paper="qkv_input")]  # fmt: skip
            if llama and arch.positions is not None:  # Nemotron-H's attention has no position encoding
                half = arch.attention_sinks  # gpt-oss's rotary tables hold half a head each
                head.append(Saved("rotary", "rotary cos and sin" + (" (half a head each)" if half else ""),
                                  "attention", ("s", "d"), count=1 if half else 2, split="none", per_model=True,
                                  note=_ROTARY))  # fmt: skip
            if arch.qk_norm:
                head += norm_rows(arch, "q_norm", "Q norm", "attention", _HEADS, split="tp")
                head += norm_rows(arch, "k_norm", "K norm", "attention", _KV_HEADS, split="tp")
        tail = Saved("projection_input", "output projection input", "attention", _HEADS, paper="projection_input")
        return (*head, *core, tail)

    def attended_width(self, arch: Architecture) -> float:
        """``a·d``: QKᵀ and AV take 2·a·d FLOPs each per token attended."""
        return (arch.heads or 1) * arch.d

    def cache(self, arch: Architecture) -> tuple[Cached, ...]:
        """K and V of each token: ``kv·d`` values each (Kwon et al. 2023)."""
        return (Cached("k", "cached K", ("kv", "d")), Cached("v", "cached V", ("kv", "d")))

    def per_device(self, arch: Architecture, tensor_parallel: Any, engine: str) -> dict[str, Any]:
        """Query heads ``a/t``; key/value heads by the engine's rule (:func:`kv_heads_per_device`)."""
        return {"a": (arch.heads or 1) / tensor_parallel, "kv": kv_heads_per_device(arch.kv, tensor_parallel, engine)}

    def refusal(self, arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
        """Each engine's rule, as its code asserts it (see the module's docstring).

        Megatron-LM: t divides the heads and the key/value heads; vLLM: t divides the heads, and divides or is a
        multiple of the key/value heads.
        """
        heads, kv, t, name = arch.heads or 1, arch.kv, tensor_parallel, ENGINES[engine]
        if heads % t:
            return f"must divide the {heads} attention heads", f"each device holds whole heads, as {name} splits them"
        if engine == "megatron" and kv % t:
            return (
                f"must divide the {kv} key/value heads",
                "Megatron-LM splits the query groups and never replicates them",
            )
        if engine == "vllm" and kv % t and t % kv:
            rule = f"must divide the {kv} key/value heads, or be a multiple of them"
            return rule, f"vLLM splits them, or replicates each head t/{kv} times"
        return None


def _score_dropout() -> list[Saved]:
    """The softmax's dropout: its one-byte mask and its output, both s² per head (both accountings)."""
    return [
        Saved("softmax_dropout_mask", "softmax dropout mask", "attention", _SCORES, width="mask",
              recompute="selective", paper="softmax_dropout_mask"),
        Saved("softmax_dropout_output", "softmax dropout output", "attention", _SCORES, recompute="selective",
              paper="softmax_dropout_output"),
    ]  # fmt: skip


def _sink_column(arch: Architecture) -> list[Saved]:
    """The softmax's extra column when the scores are joined by a sink logit per head (gpt-oss)."""
    if not arch.attention_sinks:
        return []
    return [Saved("sink_probs", "softmax output's sink column", "attention", ("b", "a", "s"), note=_SINKS)]


def _paper_eager(arch: Architecture) -> list[Saved]:
    rows = [
        Saved("q", "Q for QKᵀ", "attention", _HEADS, paper="qk"),
        Saved("k", "K for QKᵀ", "attention", _KV_HEADS, paper="qk"),
        Saved("softmax_output", "softmax output", "attention", _SCORES, recompute="selective",
              paper="softmax_output"),
        *_sink_column(arch),
    ]  # fmt: skip
    if arch.attention_dropout > 0:
        rows += _score_dropout()
    rows.append(Saved("v", "V", "attention", _KV_HEADS, paper="v"))
    return rows


def _fused(who: str) -> list[Saved]:
    """What a fused kernel keeps: Q, K and V and one FP32 log-sum-exp per row and head; ``who`` keeps them."""
    return [
        Saved("q", "Q", "attention", _HEADS, paper="qk"),
        Saved("k", "K", "attention", _KV_HEADS, paper="qk"),
        Saved("v", "V", "attention", _KV_HEADS, paper="v"),
        Saved("lse", "log-sum-exp per row (FP32)", "attention", ("b", "a", "s"), width="fp32",
              note=f"{who} keeps {_LSE}"),
    ]  # fmt: skip


def _framework_eager(arch: Architecture, llama: bool) -> list[Saved]:
    repeat = _REPEAT if arch.kv != arch.heads else ""
    sinks = arch.attention_sinks  # gpt-oss: its softmax in the activation dtype, over the sink's column too
    fp32 = llama and not sinks
    rows = [
        Saved("q", "Q for QKᵀ", "attention", _HEADS, paper="qk"),
        Saved("k", "K for QKᵀ", "attention", _HEADS, paper="qk", note=repeat),
    ]
    if sinks:
        rows.append(Saved("sink_max_index", "each row's maximum's index (int64)", "attention", ("b", "a", "s"),
                          width="int64", note=_SINK_MAX))  # fmt: skip
    rows += [
        Saved("softmax_output", "softmax output" + (" (FP32)" if fp32 else ""), "attention", _SCORES,
              width="fp32" if fp32 else "act", recompute="selective", paper="softmax_output",
              note=_SOFTMAX_FP32 if fp32 else ""),
        *_sink_column(arch),
    ]  # fmt: skip
    if arch.attention_dropout > 0:
        rows += _score_dropout()
    elif fp32:
        rows.append(Saved("softmax_cast", "softmax output in the activation dtype", "attention", _SCORES,
                          recompute="selective", narrow_only=True, note=_SOFTMAX_CAST))  # fmt: skip
    rows.append(Saved("v", "V", "attention", _HEADS, paper="v", note=repeat))
    return rows


def _framework_fused(arch: Architecture, device: str) -> list[Saved]:
    if arch.attention_dropout > 0 and device == "cpu":
        return [
            Saved("q", "Q (FP32)", "attention", _HEADS, width="fp32", paper="qk", note=_MATH),
            Saved("k", "K (FP32, every head)", "attention", _HEADS, width="fp32", paper="qk", note=_MATH),
            Saved("softmax_output", "softmax output (FP32)", "attention", _SCORES, width="fp32",
                  recompute="selective", paper="softmax_output", note=_MATH),
            Saved("softmax_dropout_mask", "softmax dropout mask (FP32)", "attention", _SCORES, width="fp32",
                  recompute="selective", paper="softmax_dropout_mask", note=_MATH),
            Saved("softmax_dropout_output", "softmax dropout output (FP32)", "attention", _SCORES, width="fp32",
                  recompute="selective", paper="softmax_dropout_output", note=_MATH),
            Saved("v", "V (FP32, every head)", "attention", _HEADS, width="fp32", paper="v", note=_MATH),
        ]  # fmt: skip
    return _fused("the fused kernel")


MIXER = Attention()
