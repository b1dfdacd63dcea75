"""The training kind's named cases: the reference's training-state cases, with its names and inputs.

Where a case carries saved activations, they are read from the matching activation case when the case is
built, so the numbers visibly come from one another (the reference states the same values as literals).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.model.cases import Factory, case
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.units import Q_

__all__ = ["CASES"]

_MIXED_ADAM = {"bytes_per_value": 2, "optimizer_bytes_per_parameter": 8, "master_bytes_per_parameter": 4}
_FP32_ADAM = {"bytes_per_value": 4, "optimizer_bytes_per_parameter": 8}


def _training(**fields: Any) -> Any:
    """A training-state scenario (the model loads when the first case is built)."""
    from mlsysim_nb.kinds.training.model import TrainingStateFitScenario

    return TrainingStateFitScenario(**fields)


def _gpt2_train(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.GPT2_XL, "hardware": "H100", **_MIXED_ADAM, **kw}
    return case(_training, title, description, **fields)


def _resnet(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.RESNET50, "hardware": "H100", **_FP32_ADAM, **kw}
    return case(_training, title, description, **fields)


def _llama3(title: str, description: str, **kw: Any) -> Factory:
    fields = {"workload": Workloads.LLAMA3_8B, "hardware": "H100", **_MIXED_ADAM, "batch_size": 4,
              "activations": lambda c: c.Llama3_8BBatch4Activations.per_token_activations, **kw}  # fmt: skip
    return case(_training, title, description, **fields)


def _adapters(title: str, description: str, rank: int) -> Factory:
    shape = {"adapter_rank": rank, "adapted_matrices": 2, "adapter_in_dim": 4096, "adapter_out_dim": 4096}
    return case(_training, title, description, workload=Workloads.HYPOTHETICAL_8B, **_MIXED_ADAM, **shape)


def _lora_parameters(rank: int) -> int:
    """Rank-``rank`` adapters on every query and value projection of Llama 3.1 8B, from its config.json."""
    w = Workloads.configuration("llama-3.1-8b")
    h, d = w.hidden_dim, w.head_dim or w.hidden_dim // w.heads  # type: ignore[operator]
    query, value = h + w.heads * d, h + w.kv_heads * d  # type: ignore[operator]  # in + out widths of each
    return w.layers * rank * (query + value)  # type: ignore[operator]


def _q_v_adapters(key: str, rank: int) -> int:
    """Rank-``rank`` adapters on every query and value projection of a shipped configuration (in + out widths)."""
    w = Workloads.configuration(key)
    h, d = w.hidden_dim, w.head_dim or w.hidden_dim // w.heads  # type: ignore[operator]
    return w.layers * rank * (h + w.heads * d + h + w.kv_heads * d)  # type: ignore[operator]


def _full_recompute(key: str, seq_len: int) -> Any:
    """The whole model's saved activations for one sequence under full recomputation, fused attention, 16 bits."""
    from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario

    acts = ActivationMemoryScenario(workload=Workloads.configuration(key), seq_len=seq_len, micro_batch=1,
                                    attention="fused")  # fmt: skip
    return acts.model_activations("full")


def _fine_tune(key: str, title: str, description: str, rank: int | None = None) -> Factory:
    """One 8,192-token sequence of ``key`` on one H100, mixed-precision Adam: full, or rank-``rank`` LoRA on Q and V."""
    adapters = {} if rank is None else {"adapter_parameters": lambda _: _q_v_adapters(key, rank)}
    return case(_training, title, description, workload=lambda _: Workloads.configuration(key), hardware="H100",
                **_MIXED_ADAM, batch_size=1, activations=lambda _: _full_recompute(key, 8192), **adapters)  # fmt: skip


CASES: dict[str, Factory] = {
    "Gpt2Fp32AdamOnH100": _gpt2_train(
        "GPT-2 XL trained in FP32 with Adam, against one H100's memory",
        "Weights, gradients and two Adam values per parameter, all FP32, before activations.",
        bytes_per_value=4,
        master_bytes_per_parameter=None,
    ),
    "Gpt2Fp32AdamBatch32OnH100": _gpt2_train(
        "GPT-2 XL's FP32 Adam training step at batch 32 on one H100",
        "FP32 weights, gradients and Adam moments, plus FP32 activations at batch 32.",
        bytes_per_value=4,
        master_bytes_per_parameter=None,
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32ActivationsFp32.activations("none"),
    ),
    "Gpt2MixedPrecisionAdamOnH100": _gpt2_train(
        "GPT-2 XL trained in mixed precision with Adam on one H100, batch 32",
        "16-bit weights and gradients, an FP32 master copy, two FP32 Adam moments (16 B per parameter), "
        "and 16-bit activations at batch 32 and 1,024 tokens.",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32Activations.activations("none"),
    ),
    "Gpt2MixedPrecisionFlashAttentionOnH100": _gpt2_train(
        "GPT-2 XL in mixed precision at batch 32 on one H100, attention scores not stored",
        "16 B per parameter of state and the per-token activations (per_token_activations): the scores dropped "
        "and nothing kept in their place, what selective recomputation keeps. A FlashAttention kernel also keeps "
        "one FP32 log-sum-exp per row and head, 0.16 GB more (ActivationMemoryScenario with attention='fused').",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32Activations.per_token_activations,
    ),
    "Gpt2MixedPrecisionTwoMicroBatchesOnH100": _gpt2_train(
        "GPT-2 XL's batch of 32 as two accumulated micro-batches of 16 on one H100",
        "Mixed precision, FlashAttention, and 16 sequences' activations resident at a time.",
        batch_size=16,
        activations=lambda c: c.Gpt2XlMicroBatch16Activations.per_token_activations,
    ),
    "Gpt2MixedPrecisionSegmentCheckpointedOnH100": _gpt2_train(
        "GPT-2 XL's batch of 32 with segment checkpointing on one H100",
        "Mixed precision, FlashAttention, and 8 kept segment inputs plus one rebuilt segment.",
        batch_size=32,
        activations=lambda c: c.Gpt2XlBatch32SegmentCheckpointed.checkpointed_activations,
    ),
    "Llama2_7BMixedPrecisionAdam": case(
        _training,
        "A 7B model trained in mixed precision with Adam, against one H100",
        "16 B per parameter before activations, against the 2 B per parameter it serves from.",
        workload=Workloads.LLAMA2_7B,
        hardware="H100",
        **_MIXED_ADAM,
    ),
    "Llama3_8BFullFineTuneOnH100": _llama3(
        "Full fine-tuning of Llama 3.1 8B on one H100",
        "Mixed-precision Adam on every parameter plus activations at batch 4 and 2,048 tokens.",
    ),
    "Llama3_8BLoraOnH100": _llama3(
        "Rank-16 LoRA fine-tuning of Llama 3.1 8B on one H100",
        "Frozen 16-bit base weights; rank-16 adapters on every query and value projection carry the "
        "mixed-precision Adam state; the same activations.",
        # 32 layers x (q: 16*(4096+4096) + v: 16*(4096+1024)) = 6,815,744 with GQA's narrower v projection
        adapter_parameters=6_815_744,
    ),
    "Rank16AdaptersOnHypothetical8B": _adapters(
        "Rank-16 low-rank adapters on a hypothetical 8B-parameter transformer, mixed-precision Adam",
        "Two 4,096-by-4,096 matrices adapted in each of 32 layers; 2 B per frozen parameter, "
        "16 B per trained parameter, before activations.",
        16,
    ),
    "Rank32AdaptersOnHypothetical8B": _adapters(
        "The same adapters at rank 32",
        "Adapter state is linear in the rank; the frozen base is unchanged.",
        32,
    ),
    "ResNet50Fp32SgdMomentum": _resnet(
        "ResNet-50 trained in FP32 with SGD and momentum",
        "Weights, gradients and one momentum value per parameter, all FP32, before activations.",
        optimizer_bytes_per_parameter=4,
        hardware=None,
    ),
    "ResNet50Fp32AdamBatch64": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 64, low activation estimate",
        "Weights, gradients, two Adam values per parameter, and 8 GB of saved activations for "
        "224x224 images, against one H100's memory.",
        batch_size=64,
        activations=Q_(8, "GB"),
    ),
    "ResNet50Fp32AdamBatch64HighActivations": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 64, high activation estimate",
        "The same training state with 12 GB of saved activations.",
        batch_size=64,
        activations=Q_(12, "GB"),
    ),
    "ResNet50Fp32AdamBatch512": _resnet(
        "ResNet-50 trained in FP32 with Adam at batch 512, low activation estimate",
        "The batch-64 state with its saved activations scaled linearly to batch 512.",
        batch_size=512,
        activations=lambda c: c.ResNet50Fp32AdamBatch64.activations_at(512),
    ),
    "Llama3_1_8BConfigLoraOnH100": case(
        _training,
        "Rank-16 LoRA on Llama 3.1 8B from its config.json, one 8,192-token sequence on one H100",
        "Meta's published config.json (huggingface.co/meta-llama/Llama-3.1-8B): the exact 8,030,261,248 "
        "parameters frozen at 16 bits; rank-16 adapters on every query (4096 to 4096) and value (4096 to 1024, "
        "grouped-query) projection carry mixed-precision Adam state; the activations are the whole model's under "
        "full recomputation with fused attention (32 layer inputs beside the FP32 logits), which LoRA needs as "
        "full fine-tuning does.",
        workload=lambda _: Workloads.configuration("llama-3.1-8b"),
        hardware="H100",
        **_MIXED_ADAM,
        batch_size=1,
        adapter_parameters=lambda _: _lora_parameters(16),
        activations=lambda c: c.Llama3_1_8BActivations8kMegatron.model_activations("full"),
    ),
    "Qwen3_8BFullFineTuneOnH100": _fine_tune(
        "qwen3-8b",
        "Full fine-tuning of Qwen3 8B on one H100, one 8,192-token sequence",
        "Qwen's published config.json: 8,190,735,360 parameters, each with 16-bit weights and gradients, an FP32 "
        "master copy and two FP32 Adam moments (16 bytes a parameter: 131 GB before any activation), beside the "
        "whole model's activations under full recomputation with fused attention.",
    ),
    "Qwen3_8BLoraOnH100": _fine_tune(
        "qwen3-8b",
        "Rank-16 LoRA on Qwen3 8B on one H100, one 8,192-token sequence",
        "The same model frozen at 16 bits; rank-16 adapters on every query (4096 to 4096) and value (4096 to "
        "1024) projection of its 36 layers carry the mixed-precision Adam state; the activations as for full "
        "fine-tuning (LoRA's backward still passes through every layer).",
        rank=16,
    ),
    "GptOss20BLoraOnH100": _fine_tune(
        "gpt-oss-20b",
        "Rank-16 LoRA on gpt-oss 20B in BF16 on one H100, one 8,192-token sequence",
        "OpenAI's published config.json: 20,914,757,184 parameters (32 experts of which 4 a token) frozen at 16 "
        "bits (the MXFP4 experts dequantized, as transformers' fine-tuning recipe loads them); rank-16 adapters on "
        "every query (2880 to 4096) and value (2880 to 512) projection of its 24 layers; the activations under full "
        "recomputation with fused attention.",
        rank=16,
    ),
    "Gemma3_27BLoraOnH100": _fine_tune(
        "gemma-3-27b",
        "Rank-16 LoRA on Gemma 3 27B on one H100, one 8,192-token sequence",
        "Google's published config.json: 27,009,346,304 parameters frozen at 16 bits (54 GB); rank-16 adapters on "
        "every query (5376 to 4096) and value (5376 to 2048) projection of its 62 layers; the activations under full "
        "recomputation with fused attention, 8.6 GB of them the FP32 logits over its 262,208-token vocabulary.",
        rank=16,
    ),
}
