"""The activation kind's named cases: the reference's activation cases, with its names and inputs."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.catalog import Factory, case
from mlsysim_nb.records.workloads import Workloads
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
}
