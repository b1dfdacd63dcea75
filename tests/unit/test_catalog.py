"""The named scenarios: the reference's 22 cases (names, titles, composed inputs) and two many-device cases."""

from __future__ import annotations

import pytest

from mlsysim_nb import (
    ActivationMemoryScenario,
    ParallelTrainingScenario,
    Scenarios,
    TrainingStateFitScenario,
    TrainingTimeScenario,
    Workload,
    Workloads,
)


def test_forty_cases() -> None:
    """15 training and 7 activation cases (the reference's), 7 many-device, 2 training-time, 8 on real architectures, 14 serving."""
    assert len(Scenarios) == 53
    assert len(Scenarios.names(TrainingStateFitScenario)) == 20
    assert len(Scenarios.names(ActivationMemoryScenario)) == 10
    assert Scenarios.names(ParallelTrainingScenario) == [
        "Gpt3_175BKorthikantiTable3OnA100",
        "Llama3_8BZero3On8H100",
        "Bamba9BFullFineTuneOnH100",
        "Bamba9BZero3On8H100",
        "Llama3_1_70BZero3On8H100",
        "Llama3_1_70BZero3On64H100",
        "Mixtral8x7BExpertParallel8On32H100",
    ]
    assert Scenarios.names(TrainingTimeScenario) == ["Gpt3_175BKorthikantiTable5OnA100", "Gpt3_175BFullRecomputeOnA100"]


def test_every_case_has_a_one_line_title() -> None:
    """Each case carries a title without line breaks and a description."""
    for s in dict(Scenarios.items()).values():
        assert s.name and "\n" not in s.name
        assert s.description


def test_training_activations_come_from_activation_cases() -> None:
    """The GPT-2 training cases reuse the activation cases' numbers."""
    assert Scenarios.Gpt2XlBatch32Activations.activations("none") == Scenarios.Gpt2MixedPrecisionAdamOnH100.activations
    assert (
        Scenarios.Gpt2XlBatch32SegmentCheckpointed.checkpointed_activations
        == Scenarios.Gpt2MixedPrecisionSegmentCheckpointedOnH100.activations
    )


def test_unknown_name() -> None:
    """An unknown case names the known ones."""
    with pytest.raises(AttributeError, match="Gpt2Fp32AdamOnH100"):
        Scenarios.Gpt2OnAbacus


def test_workload_catalog_numbers() -> None:
    """The reference's workload numbers."""
    w = Workloads.GPT3_175B
    assert (w.layers, w.hidden_dim, w.heads, w.context_length) == (96, 12288, 96, 2048)
    assert Workloads.LLAMA3_8B.kv_heads == 8
    assert Workloads.RESNET50.hidden_dim is None


def test_every_shipped_workload_and_case_still_loads() -> None:
    """The shipped workloads and every named case satisfy the layout rules (heads divide the width, GQA divides)."""
    from mlsysim_nb import Workloads

    for workload in Workloads.all().values():
        rebuilt = Workload(
            name=workload.name,
            parameters=workload.parameters,
            layers=workload.layers,
            hidden_dim=workload.hidden_dim,
            heads=workload.heads,
            kv_heads=workload.kv_heads,
            context_length=workload.context_length,
        )
        assert rebuilt == workload
    assert all(Scenarios[name].title() for name in Scenarios)
