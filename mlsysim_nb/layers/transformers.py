"""The framework's accounting: what Hugging Face transformers' own modules keep for backward (version 5.x).

Read from the modules' source (``transformers/models/{gpt2,llama,mistral,qwen2,mixtral,qwen3,qwen3_moe,gemma3,
gpt_oss,deepseek_v3}/modeling_*.py``, ``loss/loss_utils.py``) and measured with saved-tensor hooks
(:mod:`mlsysim_nb.measure.hf`). Three module families: GPT-2's (``GPT2Block``: LayerNorm, GeLU MLP, dropout),
Llama's (``LlamaDecoderLayer`` and Mistral's, Qwen2's, Mixtral's, Qwen3's, Qwen3-MoE's, gpt-oss's and
DeepSeek-V2/V3's, which share its RMSNorm and rotary code) and Gemma 3's (an RMSNorm that keeps its normalized
input in FP32 and multiplies by ``1 + w``; four norms a layer). Within the Llama family the mixtures of experts
differ in their routers (:func:`_router`) and gpt-oss in its experts' clamped GLU. Each row that differs from
the paper's accounting (:mod:`mlsysim_nb.layers.megatron`) says why in its ``note``.

The rows assume training with ``use_cache=False``. With the configurations' default ``use_cache=True`` a
``*ForCausalLM`` also builds a key/value cache while training: Llama's layers then keep the cache's copies of
K and V instead of their own (the same bytes), but GPT-2's attention keeps its Q as a view of the fused QKV
output, which then stays whole beside the cache's K and V copies: 2sbh more per GPT-2 layer (measured).
"""

from __future__ import annotations

from mlsysim_nb.layers import mixers
from mlsysim_nb.layers.architecture import Architecture, Layer
from mlsysim_nb.layers.rows import Saved

__all__ = ["FAMILIES", "MODEL_TYPES", "family", "transformers_layer", "transformers_output"]

#: The Hugging Face model types whose modules this accounting follows, by module family.
FAMILIES = {"gpt2": "gpt2", "llama": "llama", "mistral": "llama", "qwen2": "llama", "mixtral": "llama",
            "qwen3": "llama", "qwen3_moe": "llama", "gpt_oss": "llama", "deepseek_v3": "llama",
            "gemma3_text": "gemma"}  # fmt: skip
#: Hybrids whose decoder layers wrap a mixer of their own in Llama's norms and gated MLP (Bamba's Mamba-2 layers;
#: its attention layers are refused by name).
FAMILIES |= {"bamba": "llama", "nemotron_h": "llama"}
#: The Hugging Face model types a workload may name (``Workload.from_hf_config`` reads their config.json).
#: Gemma 2 and DeepSeek-V2 are read too; their modules' saved tensors (Gemma 2's soft-capped scores, DeepSeek-V2's
#: softmax router) are not measured, so their transformers accounting is refused (the paper's describes them).
MODEL_TYPES = (
    *FAMILIES, "qwen3", "qwen3_moe", "gemma2", "gemma3_text", "gpt_oss", "deepseek_v2", "deepseek_v3", "bamba",
    "nemotron_h",
)  # fmt: skip

_T = ("s", "b")
_H = ("s", "b", "h")

_LN_STATS = "LayerNorm keeps its mean and 1/std per token, in the activation dtype"
_RMS_FP32 = "RMSNorm computes in FP32: it keeps an FP32 copy of its input (in FP32, the input itself), not the input"
_RMS_RSQRT = "RMSNorm keeps 1/rms per token in FP32"
_RMS_NORMALIZED = (
    "RMSNorm keeps its normalized input, cast back to the activation dtype, before the scale: the scale's "
    "gradient reads it; the scaled output is a second tensor, the next projections' input"
)
_SILU_OUT = "the product keeps SiLU's output as well as the up projection's (a fused SwiGLU kernel recomputes it)"
_GEMMA_NORM = (
    "Gemma's RMSNorm computes in FP32 and multiplies the FP32 normalized input by 1 + w: it keeps its FP32 input "
    "and the FP32 normalized input (in FP32, the first is the input itself)"
)
_RMS_FP32_SCALE = (
    "gpt-oss's RMSNorm multiplies the FP32 normalized input by its weight before the cast: it keeps it in FP32"
)
_MASKED_SDPA = (
    "a sliding layer (the sequence reaching its window, as training sequences do) hands SDPA an explicit mask: "
    "transformers then repeats K and V to every head (use_gqa_in_sdpa) and the kernel keeps the mask, b·s² values "
    "in the activation dtype (measured on the CPU); masked blocks' arithmetic is skipped by a fused GPU kernel, "
    "never these bytes"
)
_GEMMA_SCALE = "Gemma's RMSNorm keeps 1 + w in FP32, a weight-sized tensor per norm (its weight's gradient reads it)"
_GLU_TERMS = (
    "gpt-oss's clamped GLU: (up + 1) · gate · sigmoid(α·gate) keeps sigmoid's output, the clamped gate, the GLU and "
    "up + 1"
)
_GELU_NEW = "GPT-2's GeLU (gelu_new) is four elementwise ops, each keeping an f-wide tensor: x, x/2, tanh, 1 + tanh"


def family(arch: Architecture) -> str:
    """Which module family the framework runs for ``arch``: ``"gpt2"``, ``"llama"`` or ``"gemma"``."""
    if arch.model_type is not None:
        if arch.model_type not in FAMILIES:
            msg = f"model_type {arch.model_type!r} has no transformers accounting; known: {', '.join(FAMILIES)}"
            raise ValueError(msg)
        return FAMILIES[arch.model_type]
    if arch.norm == "layernorm" and arch.mlp == "plain" and not arch.moe:
        return "gpt2"
    if arch.norm == "rmsnorm" and arch.mlp == "gated":
        return "llama"
    msg = f"a {arch.norm} layer with a {arch.mlp} MLP matches no transformers module family (GPT-2's, Llama's)"
    raise ValueError(msg)


def norm_rows(arch: Architecture, key: str, label: str, block: str, shape: tuple[str, ...], *,
              split: str = "sp", paper: str | None = None) -> list[Saved]:  # fmt: skip
    """The rows one RMSNorm over the last axis of ``shape`` keeps, as the family's module computes it."""
    tokens = shape[:-1]
    if family(arch) == "gemma":
        return [
            Saved(f"{key}_input", f"{label} input and normalized input (FP32)", block, shape, width="fp32", count=2,
                  split=split, paper=paper, note=_GEMMA_NORM),
            Saved(f"{key}_rsqrt", f"{label} 1/rms (FP32)", block, tokens, width="fp32", split=split, note=_RMS_RSQRT),
            Saved(f"{key}_scale", f"{label} 1 + w (FP32)", block, shape[-1:], width="fp32", split="none",
                  note=_GEMMA_SCALE),
        ]  # fmt: skip
    wide = arch.model_type == "gpt_oss"  # gpt-oss scales in FP32, then casts
    return [
        Saved(f"{key}_input", f"{label} input (FP32)", block, shape, width="fp32", split=split, paper=paper,
              note=_RMS_FP32),
        Saved(f"{key}_rsqrt", f"{label} 1/rms (FP32)", block, tokens, width="fp32", split=split, note=_RMS_RSQRT),
        Saved(f"{key}_normalized", f"{label} normalized input" + (" (FP32)" if wide else ""), block, shape,
              width="fp32" if wide else "act", split=split, note=_RMS_FP32_SCALE if wide else _RMS_NORMALIZED),
    ]  # fmt: skip


def _norm(arch: Architecture, which: str, block: str = "layer norms") -> list[Saved]:
    paper = {"1": "ln1_input", "2": "ln2_input"}.get(which, f"ln{which}_input" if which.startswith("_post") else None)
    if family(arch) == "gpt2":
        return [
            Saved(f"ln{which}_input", f"LayerNorm {which} input", block, _H, split="sp", paper=paper),
            Saved(f"ln{which}_stats", f"LayerNorm {which} mean and 1/std", block, _T, count=2, split="sp",
                  note=_LN_STATS),
        ]  # fmt: skip
    name = {"_post_attention": "post-attention", "_post_mlp": "post-MLP", "_final": "final"}.get(which, which)
    return norm_rows(arch, f"ln{which}", f"RMSNorm {name}", block, _H, paper=paper)


def _mlp_gpt2(arch: Architecture) -> list[Saved]:
    wide = ("s", "b", "f")
    if arch.activation == "gelu_new":
        act = [Saved("gelu_terms", "GeLU's elementwise terms", "MLP", wide, count=4, paper="gelu_input",
                     note=_GELU_NEW)]  # fmt: skip
    else:
        act = [Saved("gelu_input", "GeLU input", "MLP", wide, paper="gelu_input")]
    return [
        Saved("mlp_input", "MLP input", "MLP", _H, split="sp", paper="mlp_input"),
        *act,
        Saved("gelu_output", "GeLU output", "MLP", wide, paper="gelu_output"),
    ]


def _gated(arch: Architecture, key: str = "", block: str = "MLP", tokens: tuple[str, ...] = _T,
           count: int = 1) -> list[Saved]:  # fmt: skip
    """A gated MLP's four wide tensors (``key`` prefixes the keys: ``"shared_"`` for DeepSeek's shared experts)."""
    wide = (*tokens, "f")
    name = "SiLU" if arch.activation == "silu" else "GeLU"
    return [
        Saved(f"{key}gate_output", f"gate projection output ({name} input)", block, wide, count=count),
        Saved(f"{key}up_output", "up projection output", block, wide, count=count),
        Saved(f"{key}silu_output", f"{name} output", block, wide, count=count,
              note=_SILU_OUT.replace("SiLU", name).replace("SwiGLU", "gated")),
        Saved(f"{key}product", "gated product (down projection input)", block, wide, count=count),
    ]  # fmt: skip


def _router(arch: Architecture) -> list[Saved]:
    """What each family's router keeps.

    Mixtral's and Qwen3-MoE's softmax, gpt-oss's softmax over the top k, DeepSeek-V3's sigmoid scores on an FP32
    copy of its input and weight (``noaux_tc``). Qwen3-MoE's rows assume ``norm_topk_prob`` true, as every published
    Qwen3 MoE config.json sets it (with false its router keeps 4·s·b·(1 + k) bytes fewer a layer).
    """
    routed = ("s", "b", "k")
    if arch.model_type == "gpt_oss":
        return [
            Saved("router_indices", "top-k expert indices", "router", routed, width="int64", split="sp"),
            Saved("router_weights", "softmax over the top-k logits", "router", routed, split="sp",
                  note="gpt-oss's router takes the softmax of the k largest logits only, in the activation dtype"),
        ]  # fmt: skip
    rows = []
    deepseek = (arch.model_type or "").startswith("deepseek")
    if deepseek:
        rows += [
            Saved("router_weight_fp32", "router weight (an FP32 copy)", "router", ("h", "E"), width="fp32",
                  split="none", narrow_only=True, note="DeepSeek's router casts its weight to FP32"),
            Saved("router_input", "router input (FP32)", "router", _H, width="fp32", split="sp",
                  note="DeepSeek's router casts its input to FP32 (in FP32, the MLP input itself)"),
        ]  # fmt: skip
    label = "router sigmoid scores (FP32)" if deepseek else "router probabilities (FP32)"
    return [
        *rows,
        Saved("router_probs", label, "router", ("s", "b", "E"), width="fp32", split="sp"),
        Saved("router_indices", "top-k expert indices", "router", routed, width="int64", split="sp"),
        Saved("router_norm", "sum of the top-k probabilities (FP32)", "router", _T, width="fp32", split="sp"),
        Saved("router_weights", "top-k weights before normalising (FP32)", "router", routed, width="fp32",
              split="sp"),
    ]  # fmt: skip


def _experts(arch: Architecture) -> list[Saved]:
    routed = ("s", "b", "k")
    gathered = (*routed, "h")
    wide = (*routed, "f")
    if arch.model_type == "gpt_oss":
        act = [Saved("experts_glu_terms", "clamped GLU's terms", "experts", wide, count=4, note=_GLU_TERMS)]
    else:
        act = [Saved("experts_silu_output", "SiLU output", "experts", wide, note=_SILU_OUT)]
    fp32 = arch.model_type in ("mixtral", "deepseek_v2", "deepseek_v3")  # Qwen3-MoE and gpt-oss cast them back
    rows = [
        *_router(arch),
        Saved("token_index", "tokens each expert takes (two int64 indices)", "experts", routed, width="int64",
              count=2, split="sp"),
        Saved("expert_input", "tokens gathered for the experts", "experts", gathered, split="sp"),
        Saved("experts_gate_up", "gate and up projection outputs (one storage)", "experts", wide, count=2),
        *act,
        Saved("experts_product", "gated product (down projection input)", "experts", wide),
        Saved("routing_weights", "routing weight per routed token" + (" (FP32)" if fp32 else ""), "experts", routed,
              width="fp32" if fp32 else "act", split="sp"),
        Saved("expert_output", "experts' outputs", "experts", gathered, split="sp"),
        Saved("expert_weighted", "weighted outputs added back (index_add_ source)", "experts", gathered,
              split="sp"),
    ]  # fmt: skip
    if arch.shared_experts:
        rows += _gated(arch, "shared_", "shared experts", count=arch.shared_experts)
    return rows


def _windowed(rows: tuple[Saved, ...], layer: Layer, attention: str) -> tuple[Saved, ...]:
    """A sliding layer's rows under SDPA: K and V repeated to every head, and the mask the kernel keeps.

    Eager attention saves what it saves for any causal mask (the masked s² scores are materialised and kept); the
    rows assume the sequence reaches the window (below it transformers passes no mask and the rows are a full
    layer's).
    """
    if layer.window is None or attention != "fused" or layer.mixer != "attention" or "lse" not in {r.key for r in rows}:
        return rows  # (SDPA's math path on the CPU, under dropout, adds the mask to its scores and keeps none)
    out = []
    for found in rows:
        row = found
        if row.key in ("k", "v") and row.width == "act":
            row = Saved(row.key, f"{row.label} (every head)", row.block, ("s", "b", "a", "d"), paper=row.paper,
                        note=_MASKED_SDPA)  # fmt: skip
        out.append(row)
        if row.key == "v":
            out.append(Saved("window_mask", "sliding-window mask", "attention", ("b", "s", "s"), recompute="selective",
                             split="none", note=_MASKED_SDPA))  # fmt: skip
    return tuple(out)


_NEMOTRON_NORM = "NemotronHRMSNorm multiplies by its scale in FP32 and keeps the FP32 normalized input"


def _nemotron_block(arch: Architecture, attention: str, device: str, layer: Layer) -> tuple[Saved, ...]:
    """``NemotronHBlock``: one RMSNorm, then its mixer (Mamba-2 or attention) or its MLP (up, squared ReLU, down).

    Its norm keeps the normalized input in FP32 (the scale multiplies in FP32) and, where the activations are
    narrower, an FP32 copy of its scale; the squared ReLU keeps the ReLU's output once (its square reads it).
    """
    which = "1" if layer.has_mixer else "2"
    rows = [
        Saved(f"ln{which}_input", f"RMSNorm {which} input (FP32)", "layer norms", _H, width="fp32", split="sp",
              paper=f"ln{which}_input", note=_RMS_FP32),
        Saved(f"ln{which}_rsqrt", f"RMSNorm {which} 1/rms (FP32)", "layer norms", _T, width="fp32", split="sp",
              note=_RMS_RSQRT),
        Saved(f"ln{which}_normalized", f"RMSNorm {which} normalized input (FP32)", "layer norms", _H, width="fp32",
              split="sp", note=_NEMOTRON_NORM),
        Saved(f"ln{which}_scale", f"RMSNorm {which} scale in FP32", "layer norms", ("h",), width="fp32",
              split="none", narrow_only=True, note="the scale's FP32 copy, where the weights are narrower"),
    ]  # fmt: skip
    if layer.has_mixer:
        return (*rows, *mixers.find(layer.mixer).saved(arch, "transformers", attention, device))
    wide = ("s", "b", "f")
    return (
        *rows,
        Saved("mlp_input", "MLP input (the norm's output)", "MLP", _H, split="sp", paper="mlp_input"),
        Saved("relu2_output", "ReLU output (its square's input)", "MLP", wide, paper="gelu_input",
              note="squared ReLU: relu keeps its output, and the square reads the same tensor"),
        Saved("relu2_squared", "squared ReLU output (down projection input)", "MLP", wide, paper="gelu_output"),
    )  # fmt: skip


def _mlp_gated(arch: Architecture, layer: Layer) -> list[Saved]:
    """The MLP's input and its gated MLP, a mixture's experts, or a mixture's dense layer (DeepSeek's first ones)."""
    # DeepSeek's router reads an FP32 copy of the MLP's input: in FP32 that copy is the input itself
    upcast = arch.moe and not layer.dense and (arch.model_type or "").startswith("deepseek")
    rows = [Saved("mlp_input", "MLP input (the norm's output)", "MLP", _H, split="sp", paper="mlp_input",
                  narrow_only=upcast)]  # fmt: skip
    if arch.moe and not layer.dense:
        return rows + _experts(arch)
    if arch.moe:  # DeepSeek's dense first layers: one MLP of width dense_ffn
        return rows + [Saved(r.key, r.label, r.block, (*_T, "f_dense"), count=r.count, note=r.note)
                       for r in _gated(arch)]  # fmt: skip
    return rows + _gated(arch)


def transformers_layer(
    arch: Architecture, attention: str = "eager", device: str = "gpu", layer: Layer | None = None
) -> tuple[Saved, ...]:
    """The rows one Hugging Face decoder layer saves, in forward order (``layer``: the pattern's first by default).

    ``attention``: ``"eager"`` or ``"fused"`` (PyTorch's ``scaled_dot_product_attention``, transformers'
    ``"sdpa"``); ``device``: ``"gpu"`` or ``"cpu"`` (see :data:`~mlsysim_nb.layers.rows.DEVICE_EFFECTS`).
    """
    fam = family(arch)
    if fam != "gpt2" and arch.hidden_dropout > 0:
        msg = f"{fam.title()}-family modules have no hidden dropout: hidden_dropout must be 0 for this accounting"
        raise ValueError(msg)
    layer = layer or arch.layer_kinds()[0]
    if arch.model_type == "nemotron_h":
        return _nemotron_block(arch, attention, device, layer)
    if not (layer.has_mixer and layer.mlp):
        msg = "a layer of a mixer alone or of an MLP alone has transformers rows only as Nemotron-H's blocks"
        raise ValueError(msg)
    if arch.model_type == "bamba" and layer.mixer == "attention":  # measured apart from Llama's: they differ
        msg = (
            "Bamba's attention layers have no transformers accounting yet (measured: its partial rotary tables "
            "and, under SDPA, a second copy of the output projection's input differ from Llama's rows)"
        )
        raise ValueError(msg)
    mixer = mixers.find(layer.mixer)
    rows = [*_norm(arch, "1"), *_windowed(mixer.saved(arch, "transformers", attention, device), layer, attention)]
    if arch.hidden_dropout > 0:
        rows.append(Saved("attention_dropout_mask", "attention dropout mask", "attention", _H, width="mask",
                          split="sp", paper="attention_dropout_mask"))  # fmt: skip
    if arch.sandwich_norms:
        rows += _norm(arch, "_post_attention")
    rows += _norm(arch, "2")
    rows += _mlp_gpt2(arch) if fam == "gpt2" else _mlp_gated(arch, layer)
    if arch.sandwich_norms:
        rows += _norm(arch, "_post_mlp")
    if arch.hidden_dropout > 0:
        rows.append(Saved("mlp_dropout_mask", "MLP dropout mask", "MLP", _H, width="mask", split="sp",
                          paper="mlp_dropout_mask"))  # fmt: skip
    return tuple(rows)


def transformers_output(arch: Architecture) -> tuple[Saved, ...]:
    """What a ``*ForCausalLM`` (``GPT2LMHeadModel``) keeps outside its layers, with the loss (``labels=`` given)."""
    rows = [Saved("token_ids", "token ids (embedding lookup)", "output", _T, width="int64", split="none")]
    if family(arch) == "gpt2":
        rows.append(Saved("position_ids", "position ids (one sequence's)", "output", ("s",), width="int64",
                          split="none", note="learned positions look up one sequence's ids"))  # fmt: skip
        if arch.hidden_dropout > 0:
            rows.append(Saved("embedding_dropout_mask", "input embeddings' dropout mask", "output", _H, width="mask",
                              split="sp"))  # fmt: skip
    return (
        *rows,
        *_norm(arch, "_final", "output"),
        Saved("output_projection_input", "output layer input (the norm's output)", "output", _H, split="sp"),
        Saved("logits", "log-softmax of the logits (FP32)", "output", ("s", "b", "v"), width="fp32",
              note="the loss upcasts the logits to FP32; its log-softmax keeps the FP32 result"),
        Saved("targets", "shifted labels", "output", _T, width="int64", split="none",
              note="the loss keeps its int64 targets"),
        Saved("loss_weight", "the loss's total weight", "output", (), width="fp32", split="none",
              note="one FP32 scalar"),
    )  # fmt: skip
