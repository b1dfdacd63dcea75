"""The paper's accounting: what a Megatron-style layer saves, as Korthikanti et al. (2022) count it, generalised.

Source: Korthikanti, Casper, Lym, McAfee, Andersch, Shoeybi and Catanzaro (2022), "Reducing Activation
Recomputation in Large Transformer Models", arXiv:2205.05198, Sec. 4.1 (one GPT layer at 16 bits:
attention 11sbh + 5as²b, MLP 19sbh, layer norms 4sbh), Sec. 4.2 (tensor and sequence parallelism split
what they split) and Sec. 4.3 (the input embeddings' dropout, the last layer norm and the output layer:
logits for the loss in 32 bits, 4sbv).

The generalisations, each following the paper's own rule (a matrix product keeps its inputs, an
elementwise op keeps what its derivative needs, fused kernels keep nothing in between):

* grouped-query attention: K and V have kv·d per token, not h;
* a gated MLP (SwiGLU) keeps three f-wide tensors: the gate's and the up projection's outputs (a fused
  SwiGLU kernel recomputes the activation from them) and the down projection's input;
* no dropout, no masks (and the AV product reads the softmax output itself);
* fused attention (FlashAttention) keeps Q, K, V, its output and one FP32 log-sum-exp per row and head,
  instead of the s² scores;
* a mixture of experts routes each token to k experts: the router's FP32 probabilities, the dispatched
  tokens, each expert's MLP tensors for s·b·k tokens, the experts' outputs and the FP32 routing weights;
  shared experts add a dense MLP for every token; a mixture's dense layers (DeepSeek's first
  ``first_k_dense_replace``) keep a dense MLP of their own width. RMSNorm keeps its input, as LayerNorm does;
* norms beyond the paper's two keep their inputs too: Qwen3's and Gemma 3's norms over each head's Q and K
  (``s·b·a·d`` and ``s·b·kv·d``), Gemma's norms after attention and after the MLP (``s·b·h`` each);
* attention sinks (gpt-oss): the softmax runs over one more column per row, the sink's (``b·a·s``);
* latent attention (DeepSeek-V2/V3): its mixer's rows (:mod:`mlsysim_nb.layers.mixers.latent_attention`).
"""

from __future__ import annotations

from mlsysim_nb.layers import mixers
from mlsysim_nb.layers.architecture import Architecture, Layer
from mlsysim_nb.layers.rows import Saved

__all__ = ["LAYER_INPUT", "megatron_layer", "megatron_output"]

_NORM = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}
_SANDWICH = "Gemma's norms after attention and after the MLP keep their inputs, as the paper's norms do"
_ACTIVATION = {"gelu": "GeLU", "silu": "SiLU", "relu2": "squared ReLU"}

#: What full recomputation keeps of a layer: its input, whole on every device unless sequence-parallel.
LAYER_INPUT = Saved("layer_input", "layer input", "layer", ("s", "b", "h"), split="sp", paper="ln1_input")


def _mlp(arch: Architecture, tokens: tuple[str, ...], block: str, count: int = 1) -> list[Saved]:
    """The MLP's wide tensors for ``tokens`` (``count`` MLPs of width f side by side, as shared experts)."""
    wide = (*tokens, "f")
    if arch.mlp == "gated":
        return [
            Saved(f"{block}_gate_output", "gate projection output", block, wide, count=count),
            Saved(f"{block}_up_output", "up projection output", block, wide, count=count),
            Saved(f"{block}_product", "gated product (down projection input)", block, wide, count=count),
        ]
    act = arch.activation.removesuffix("_new")
    name = _ACTIVATION[act]
    return [
        Saved(f"{block}_{act}_input", f"{name} input", block, wide, count=count, paper="gelu_input"),
        Saved(f"{block}_{act}_output", f"{name} output", block, wide, count=count, paper="gelu_output"),
    ]


def _experts(arch: Architecture) -> list[Saved]:
    routed = ("s", "b", "k")
    rows = [
        Saved("router_probs", "router probabilities (FP32)", "router", ("s", "b", "E"), width="fp32", split="sp"),
        Saved("expert_input", "tokens dispatched to the experts", "experts", (*routed, "h"), split="sp"),
        *_mlp(arch, routed, "experts"),
        Saved("expert_output", "experts' outputs before combining", "experts", (*routed, "h"), split="sp"),
        Saved("routing_weights", "routing weights (FP32)", "experts", routed, width="fp32", split="sp"),
    ]
    if arch.shared_experts:
        rows += _mlp(arch, ("s", "b"), "shared", count=arch.shared_experts)
    return rows


def _dense_mlp(arch: Architecture, width: str = "f") -> list[Saved]:
    """The dense MLP's wide tensors; ``width`` ``"f_dense"`` for a mixture's dense layers (DeepSeek's first ones)."""
    rows = _mlp(arch, ("s", "b"), "MLP")
    return [Saved(r.key.removeprefix("MLP_"), r.label, r.block, (*r.shape[:-1], width), paper=r.paper) for r in rows]


def megatron_layer(arch: Architecture, attention: str = "eager", layer: Layer | None = None) -> tuple[Saved, ...]:
    """The rows one decoder layer saves by the paper's accounting, in forward order.

    ``attention``: ``"eager"`` (scores, softmax and dropout kept) or ``"fused"`` (FlashAttention-style); the
    mixer's block is its own (:mod:`mlsysim_nb.layers.mixers`), ``layer``'s (the pattern's first by default).
    """
    norm = _NORM[arch.norm]
    tokens = ("s", "b", "h")
    layer = layer or arch.layer_kinds()[0]
    mixer = mixers.find(layer.mixer)
    rows = [
        Saved("ln1_input", f"{norm} 1 input", "layer norms", tokens, split="sp", paper="ln1_input"),
        *mixer.saved(arch, "megatron", attention, "gpu"),
    ]
    if not layer.has_mixer:  # an MLP alone (Nemotron-H): no mixer, no norm before it
        rows = []
    if not layer.mlp:  # a mixer alone (Nemotron-H): no MLP, no norm before it
        return tuple(rows)
    if arch.hidden_dropout > 0 and layer.has_mixer:
        rows.append(Saved("attention_dropout_mask", "attention dropout mask", "attention", tokens, width="mask",
                          split="sp", paper="attention_dropout_mask"))  # fmt: skip
    if arch.sandwich_norms:  # Gemma 2 and 3: a norm on the attention's output before the residual
        rows.append(Saved("ln_post_attention_input", f"{norm} post-attention input", "layer norms", tokens,
                          split="sp", note=_SANDWICH))  # fmt: skip
    rows += [
        Saved("ln2_input", f"{norm} 2 input", "layer norms", tokens, split="sp", paper="ln2_input"),
        Saved("mlp_input", "MLP input", "MLP", tokens, split="sp", paper="mlp_input"),
    ]
    if arch.moe and not layer.dense:
        rows += _experts(arch)
    else:
        rows += _dense_mlp(arch, "f_dense" if arch.moe else "f")
    if arch.hidden_dropout > 0:
        rows.append(Saved("mlp_dropout_mask", "MLP dropout mask", "MLP", tokens, width="mask", split="sp",
                          paper="mlp_dropout_mask"))  # fmt: skip
    if arch.sandwich_norms:
        rows.append(Saved("ln_post_mlp_input", f"{norm} post-MLP input", "layer norms", tokens, split="sp",
                          note=_SANDWICH))  # fmt: skip
    return tuple(rows)


def megatron_output(arch: Architecture) -> tuple[Saved, ...]:
    """What the embeddings, the last norm, the output layer and the loss keep, once per model (Sec. 4.3)."""
    tokens = ("s", "b", "h")
    rows = []
    if arch.hidden_dropout > 0:
        rows.append(Saved("embedding_dropout_mask", "input embeddings' dropout mask", "output", tokens,
                          width="mask", split="sp"))  # fmt: skip
    rows += [
        Saved("final_norm_input", f"final {_NORM[arch.norm]} input", "output", tokens, split="sp"),
        Saved("output_projection_input", "output layer input", "output", tokens, split="sp"),
        Saved("logits", "logits for the loss (FP32)", "output", ("s", "b", "v"), width="fp32"),
    ]
    return tuple(rows)
