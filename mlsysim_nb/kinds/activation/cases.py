"""The activation kind's named cases: the reference's, with its names and inputs, then real architectures.

The real architectures are read from their shipped ``config.json`` (:meth:`Workloads.configuration`).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.model.cases import Factory, case
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.units import Q_

__all__ = ["CASES"]


def _activations(**fields: Any) -> Any:
    """An activation scenario (the model loads when the first case is built)."""
    from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario

    return ActivationMemoryScenario(**fields)


def _gpt2_acts(title: str, description: str, **kw: Any) -> Factory:
    fields = {"micro_batch": 32, "seq_len": 1024, "precision_bytes": 2, "normalization_per_layer": Q_(10, "MB")}
    return case(_activations, title, description, workload=Workloads.GPT2_XL, **{**fields, **kw})


def _gpt3(title: str, micro_batch: int) -> Factory:
    description = "Full-context GPT-3 activations per replica, with and without recomputation."
    return case(_activations, title, description, workload=Workloads.GPT3_175B, micro_batch=micro_batch)


_LLAMA_SOURCE = (
    "Meta's published config.json for Llama 3.1 8B (huggingface.co/meta-llama/Llama-3.1-8B): 32 layers, h = 4096, "
    "32 heads, 8 key/value heads, a 14,336-wide SwiGLU MLP, RMSNorm, no dropout, a 128,256-token vocabulary."
)


def _llama_8k(title: str, implementation: str, accounting: str) -> Factory:
    description = f"{_LLAMA_SOURCE} Fused attention, one sequence of 8,192 tokens, 16-bit; {accounting}"
    return case(_activations, title, description, workload=lambda _: Workloads.configuration("llama-3.1-8b"),
                micro_batch=1, seq_len=8192, attention="fused", implementation=implementation)  # fmt: skip


_REAL: dict[str, Factory] = {
    "Llama3_1_8BActivations8kMegatron": _llama_8k(
        "Llama 3.1 8B's saved activations at 8,192 tokens, fused attention, as the paper counts them",
        "megatron",
        "Korthikanti et al. (2022)'s rows generalised to grouped-query attention and a gated MLP, plus the FP32 "
        "log-sum-exp FlashAttention keeps per row and head.",
    ),
    "Llama3_1_8BActivations8kTransformers": _llama_8k(
        "Llama 3.1 8B's saved activations at 8,192 tokens, fused attention, as Hugging Face transformers keeps them",
        "transformers",
        "the rows LlamaDecoderLayer keeps with SDPA attention (RMSNorm's FP32 copies, SiLU's output), measured "
        "with saved-tensor hooks on small random configurations.",
    ),
    "Mixtral8x7BActivations": case(
        _activations,
        "Mixtral 8x7B's saved activations at 4,096 tokens, fused attention, as the paper counts them",
        "Mistral AI's published config.json for Mixtral 8x7B (huggingface.co/mistralai/Mixtral-8x7B-v0.1): "
        "32 layers, h = 4096, 8 experts of which each token uses 2; the experts' rows hold s·b·2 tokens, "
        "the router keeps FP32 probabilities. One sequence of 4,096 tokens, 16-bit.",
        workload=lambda _: Workloads.configuration("mixtral-8x7b"),
        micro_batch=1,
        seq_len=4096,
        attention="fused",
    ),
}

CASES: dict[str, Factory] = {
    "Gpt3ActivationsMicrobatch4": _gpt3("175B activations at four sequences per micro-batch", 4),
    "Gpt3ActivationsMicrobatch1": _gpt3("175B activations at one sequence per micro-batch", 1),
    "Gpt2XlBatch32Activations": _gpt2_acts(
        "GPT-2 XL's saved activations at batch 32 and 1,024 tokens, 16-bit",
        "Korthikanti et al. per-layer bytes with no recomputation, and the per-layer line items "
        "(projections, feed-forward expansion, attention scores, normalization).",
    ),
    "Gpt2XlBatch32ActivationsFp32": _gpt2_acts(
        "GPT-2 XL's saved activations at batch 32 and 1,024 tokens, FP32",
        "The same tensors stored in 32 bits.",
        precision_bytes=4,
    ),
    "Gpt2XlMicroBatch16Activations": _gpt2_acts(
        "GPT-2 XL's saved activations for a micro-batch of 16 sequences of 1,024 tokens, 16-bit",
        "Half the batch resident at a time, accumulated twice per update.",
        micro_batch=16,
    ),
    "Gpt2XlBatch32SegmentCheckpointed": _gpt2_acts(
        "GPT-2 XL's batch-32 activations, checkpointed in 8 segments of 6 layers, scores not stored",
        "Each segment's 16-bit input is kept; the backward pass rebuilds one segment at a time.",
        checkpoint_segments=8,
    ),
    "Llama3_8BBatch4Activations": case(
        _activations,
        "Llama 3.1 8B's saved activations at batch 4 and 2,048 tokens, 16-bit",
        "Per-token tensors only: fused attention keeps no score matrices.",
        workload=Workloads.LLAMA3_8B,
        micro_batch=4,
        seq_len=2048,
        precision_bytes=2,
    ),
    **_REAL,
}
