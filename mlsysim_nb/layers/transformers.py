"""The framework's accounting: what Hugging Face transformers' own modules keep for backward (version 5.x).

Read from the modules' source (``transformers/models/{gpt2,llama,mistral,qwen2,mixtral}/modeling_*.py``,
``loss/loss_utils.py``) and measured with saved-tensor hooks (:mod:`mlsysim_nb.measure.hf`). Two module
families: GPT-2's (``GPT2Block``: LayerNorm, GeLU MLP, dropout) and Llama's (``LlamaDecoderLayer`` and
Mistral's, Qwen2's and Mixtral's, which share its attention, RMSNorm and rotary code). Each row that
differs from the paper's accounting (:mod:`mlsysim_nb.layers.megatron`) says why in its ``note``.

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
FAMILIES = {"gpt2": "gpt2", "llama": "llama", "mistral": "llama", "qwen2": "llama", "mixtral": "llama"}
#: Hybrids whose decoder layers wrap a mixer of their own in Llama's norms and gated MLP (Bamba's Mamba-2 layers;
#: its attention layers are refused by name).
FAMILIES |= {"bamba": "llama", "nemotron_h": "llama"}
#: The Hugging Face model types a workload may name (``Workload.from_hf_config`` reads their config.json).
#: The 2025 families are read too; the transformers accounting of their saved tensors is not described (refused).
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
_GELU_NEW = "GPT-2's GeLU (gelu_new) is four elementwise ops, each keeping an f-wide tensor: x, x/2, tanh, 1 + tanh"


def family(arch: Architecture) -> str:
    """Which module family the framework runs for ``arch``: ``"gpt2"`` or ``"llama"``."""
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


def _norm(arch: Architecture, which: str, block: str = "layer norms") -> list[Saved]:
    paper = {"1": "ln1_input", "2": "ln2_input"}.get(which)
    if family(arch) == "gpt2":
        return [
            Saved(f"ln{which}_input", f"LayerNorm {which} input", block, _H, split="sp", paper=paper),
            Saved(f"ln{which}_stats", f"LayerNorm {which} mean and 1/std", block, _T, count=2, split="sp",
                  note=_LN_STATS),
        ]  # fmt: skip
    return [
        Saved(f"ln{which}_input", f"RMSNorm {which} input (FP32)", block, _H, width="fp32", split="sp", paper=paper,
              note=_RMS_FP32),
        Saved(f"ln{which}_rsqrt", f"RMSNorm {which} 1/rms (FP32)", block, _T, width="fp32", split="sp",
              note=_RMS_RSQRT),
        Saved(f"ln{which}_normalized", f"RMSNorm {which} normalized input", block, _H, split="sp",
              note=_RMS_NORMALIZED),
    ]  # fmt: skip


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


def _gated() -> list[Saved]:
    wide = ("s", "b", "f")
    return [
        Saved("gate_output", "gate projection output (SiLU input)", "MLP", wide),
        Saved("up_output", "up projection output", "MLP", wide),
        Saved("silu_output", "SiLU output", "MLP", wide, note=_SILU_OUT),
        Saved("product", "gated product (down projection input)", "MLP", wide),
    ]


def _experts(_: Architecture) -> list[Saved]:
    routed = ("s", "b", "k")
    gathered = (*routed, "h")
    return [
        Saved("router_probs", "router probabilities (FP32)", "router", ("s", "b", "E"), width="fp32", split="sp"),
        Saved("router_indices", "top-k expert indices", "router", routed, width="int64", split="sp"),
        Saved("router_norm", "sum of the top-k probabilities (FP32)", "router", _T, width="fp32", split="sp"),
        Saved("router_weights", "top-k weights before normalising (FP32)", "router", routed, width="fp32",
              split="sp"),
        Saved("token_index", "tokens each expert takes (two int64 indices)", "experts", routed, width="int64",
              count=2, split="sp"),
        Saved("expert_input", "tokens gathered for the experts", "experts", gathered, split="sp"),
        Saved("experts_gate_up", "gate and up projection outputs (one storage)", "experts", (*routed, "f"),
              count=2),
        Saved("experts_silu_output", "SiLU output", "experts", (*routed, "f"), note=_SILU_OUT),
        Saved("experts_product", "gated product (down projection input)", "experts", (*routed, "f")),
        Saved("routing_weights", "routing weight per routed token (FP32)", "experts", routed, width="fp32",
              split="sp"),
        Saved("expert_output", "experts' outputs", "experts", gathered, split="sp"),
        Saved("expert_weighted", "weighted outputs added back (index_add_ source)", "experts", gathered,
              split="sp"),
    ]  # fmt: skip


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


def transformers_layer(
    arch: Architecture, attention: str = "eager", device: str = "gpu", layer: Layer | None = None
) -> tuple[Saved, ...]:
    """The rows one Hugging Face decoder layer saves, in forward order (``layer``: the pattern's first by default).

    ``attention``: ``"eager"`` or ``"fused"`` (PyTorch's ``scaled_dot_product_attention``, transformers'
    ``"sdpa"``); ``device``: ``"gpu"`` or ``"cpu"`` (see :data:`~mlsysim_nb.layers.rows.DEVICE_EFFECTS`).
    """
    fam = family(arch)
    if fam == "llama" and arch.hidden_dropout > 0:
        msg = "Llama-family modules have no hidden dropout: hidden_dropout must be 0 for the transformers accounting"
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
    rows = [*_norm(arch, "1"), *mixer.saved(arch, "transformers", attention, device)]
    if arch.hidden_dropout > 0:
        rows.append(Saved("attention_dropout_mask", "attention dropout mask", "attention", _H, width="mask",
                          split="sp", paper="attention_dropout_mask"))  # fmt: skip
    rows += _norm(arch, "2")
    if fam == "gpt2":
        rows += _mlp_gpt2(arch)
    else:
        rows.append(Saved("mlp_input", "MLP input (the norm's output)", "MLP", _H, split="sp", paper="mlp_input"))
        rows += _experts(arch) if arch.moe else _gated()
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
