"""Bad input: an error naming the field and the reason, never a silent wrong number."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import (
    Q_,
    ActivationMemoryScenario,
    FieldError,
    FieldUnitError,
    NotApplicableError,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    Workloads,
)

T = Scenarios.Gpt2MixedPrecisionAdamOnH100
A = Scenarios.Gpt2XlBatch32SegmentCheckpointed


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"batch_size": 0}, "batch_size", "at least 1"),
        ({"batch_size": -4}, "batch_size", "at least 1"),
        ({"batch_size": 2.5}, "batch_size", "fraction"),
        ({"batch_size": True}, "batch_size", "whole number"),
        ({"bytes_per_value": 0}, "bytes_per_value", "positive"),
        ({"bytes_per_value": -2}, "bytes_per_value", "positive"),
        ({"bytes_per_value": Q_(2, "GB/s")}, "bytes_per_value", "units of"),
        ({"bytes_per_value": Q_(2, "s")}, "bytes_per_value", "[time]"),
        ({"bytes_per_value": "two bytes"}, "bytes_per_value", "cannot read"),
        ({"optimizer_bytes_per_parameter": -8}, "optimizer_bytes_per_parameter", "zero or more"),
        ({"master_bytes_per_parameter": 0}, "master_bytes_per_parameter", "positive"),
        ({"activations": Q_(-1, "GB")}, "activations", "zero or more"),
        ({"activations": Q_(3, "count")}, "activations", "units of"),
        ({"adapter_parameters": -1}, "adapter_parameters", "at least 0"),
        ({"adapter_parameters": 10**12}, "adapter_parameters", "more than the model"),
        ({"adapter_rank": 16}, "adapted_matrices", "required with adapter_rank"),
        ({"adapted_matrices": 2, "adapter_in_dim": 8, "adapter_out_dim": 8}, "adapter_rank", "required when"),
        ({"adapter_in_dim": 8}, "adapter_rank", "required when"),
        (
            {
                "adapter_parameters": 5,
                "adapter_rank": 1,
                "adapted_matrices": 1,
                "adapter_in_dim": 1,
                "adapter_out_dim": 1,
            },
            "adapter_parameters",
            "5 disagrees with the adapter shape, which gives 96",
        ),
        (
            {"adapter_rank": 4096, "adapted_matrices": 8, "adapter_in_dim": 1600, "adapter_out_dim": 1600},
            "adapter_rank",
            "more than the model",
        ),
        ({"workload": "GPT-2"}, "workload", "must be a Workload"),
        ({"hardware": "H100"}, "hardware", "HardwareNode"),
        ({"name": 3}, "name", "string"),
    ],
)
def test_training_bad_input(changes: dict[str, Any], field: str, reason: str) -> None:
    """Each bad training input raises a FieldError naming the field and the reason."""
    with pytest.raises(FieldError, match=reason) as info:
        T.variant(**changes)
    assert field == info.value.field
    assert str(info.value).startswith(f"TrainingStateFitScenario.{field}:")


def test_wrong_dimension_is_also_a_type_error() -> None:
    """A quantity of the wrong dimension is a FieldUnitError, which is a TypeError and a ValueError."""
    with pytest.raises(TypeError):
        T.variant(bytes_per_value=Q_(2, "s"))
    assert issubclass(FieldUnitError, ValueError)


def test_missing_required_field() -> None:
    """A missing field names itself."""
    with pytest.raises(TypeError, match="optimizer_bytes_per_parameter"):
        TrainingStateFitScenario(workload=Workloads.GPT2_XL, bytes_per_value=2)  # type: ignore[call-arg]


def test_adapter_shape_needs_layers() -> None:
    """A rank on a workload without layers is refused."""
    w = Workload(name="flat", parameters=10**9)
    with pytest.raises(FieldError, match="layers"):
        TrainingStateFitScenario(
            workload=w,
            bytes_per_value=2,
            optimizer_bytes_per_parameter=8,
            adapter_rank=4,
            adapted_matrices=1,
            adapter_in_dim=8,
            adapter_out_dim=8,
        )


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"micro_batch": 0}, "micro_batch", "at least 1"),
        ({"micro_batch": -1}, "micro_batch", "at least 1"),
        ({"micro_batch": 1.5}, "micro_batch", "fraction"),
        ({"seq_len": 0}, "seq_len", "at least 1"),
        ({"precision_bytes": 0}, "precision_bytes", "positive"),
        ({"precision_bytes": -2}, "precision_bytes", "positive"),
        ({"precision_bytes": Q_(2, "s")}, "precision_bytes", "units of"),
        ({"ffn_multiple": 0}, "ffn_multiple", "at least 1"),
        ({"ffn_multiple": -4}, "ffn_multiple", "at least 1"),
        ({"normalization_per_layer": Q_(-1, "MB")}, "normalization_per_layer", "zero or more"),
        ({"checkpoint_segments": 0}, "checkpoint_segments", "at least 1"),
        ({"checkpoint_segments": 49}, "checkpoint_segments", r"at most 48 \(the model's layers\)"),
        ({"workload": Workloads.RESNET50}, "workload", "hidden_dim"),
    ],
)
def test_activation_bad_input(changes: dict[str, Any], field: str, reason: str) -> None:
    """Each bad activation input raises a FieldError naming the field and the reason."""
    with pytest.raises(FieldError, match=reason) as info:
        A.variant(**changes)
    assert field == info.value.field


def test_sequence_neither_given_nor_known() -> None:
    """No seq_len and no context_length is an error on seq_len."""
    with pytest.raises(FieldError, match="seq_len: is required"):
        ActivationMemoryScenario(workload=Workloads.HYPOTHETICAL_8B, micro_batch=1)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"parameters": 0}, "parameters"),
        ({"parameters": -5}, "parameters"),
        ({"parameters": 1.5}, "parameters"),
        ({"parameters": Q_(3, "GB")}, "parameters"),
        ({"layers": 0}, "layers"),
        ({"hidden_dim": -1}, "hidden_dim"),
        ({"kv_heads": 64}, "kv_heads"),
        ({"name": ""}, "name"),
    ],
)
def test_workload_bad_input(changes: dict[str, Any], field: str) -> None:
    """Workload fields are validated too."""
    base = {"name": "w", "parameters": 10**9, "layers": 4, "hidden_dim": 64, "heads": 4}
    with pytest.raises(FieldError) as info:
        Workload(**{**base, **changes})
    assert field == info.value.field


def test_method_arguments_validated() -> None:
    """activations_at and checkpoint_write_time check their argument."""
    with pytest.raises(FieldError, match="batch_size: must be at least 1"):
        Scenarios.ResNet50Fp32AdamBatch64.activations_at(0)
    with pytest.raises(FieldUnitError, match="bandwidth"):
        T.checkpoint_write_time(Q_(2, "GB"))
    with pytest.raises(FieldUnitError, match="bandwidth"):
        T.checkpoint_write_time(2e9)
    with pytest.raises(FieldError, match="bandwidth: must be positive"):
        T.checkpoint_write_time(Q_(0, "GB/s"))
    with pytest.raises(NotApplicableError):
        Scenarios.Gpt2Fp32AdamOnH100.activations_at(4)


def test_zero_activations_give_no_batch_limit() -> None:
    """Zero stored activations leave the resident batch unbounded: not applicable, not a crash."""
    s = T.variant(activations=Q_(0, "GB"))
    with pytest.raises(NotApplicableError, match="non-zero"):
        s.resident_batch_limit
