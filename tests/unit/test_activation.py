"""ActivationMemoryScenario: hand-worked cases, segments, line items, recompute arithmetic."""

from __future__ import annotations

import pytest

from mlsysim_nb import ActivationMemoryScenario, FieldError, NotApplicableError, Scenarios, Workload, Workloads, ureg


def test_gpt2_xl_batch32_by_hand() -> None:
    """48 layers x sbh(34 + 5as/h) at s=1024, b=32, h=1600, a=25: 34 + 80 = 114 bytes per element."""
    s = Scenarios.Gpt2XlBatch32Activations
    sbh = 1024 * 32 * 1600
    assert 48 * sbh * 114 == s.activations("none").m_as("byte")
    assert 48 * sbh * 34 == s.activations("selective").m_as("byte")
    assert 48 * sbh * 2 == s.activations("full").m_as("byte")
    assert s.per_token_bytes_coefficient == 34.0
    assert s.score_bytes_coefficient == 80.0
    assert pytest.approx(s.score_share, rel=1e-12) == 80 / 114


def test_output_units_match_reference() -> None:
    """GB for totals, MB for per-layer items and segment_input."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    for name in (
        "per_token_activations",
        "per_sequence_activations",
        "score_activations",
        "segment_inputs",
        "live_segment",
        "checkpointed_activations",
        "line_items_total",
    ):
        assert getattr(s, name).units == ureg.GB, name
    for name in (
        "segment_input",
        "projection_activations_per_layer",
        "ffn_activations_per_layer",
        "score_activations_per_layer",
        "line_items_per_layer",
    ):
        assert getattr(s, name).units == ureg.MB, name


def test_segments_by_hand() -> None:
    """8 segments of 6 layers: 8 inputs of sbh*2 B plus one live segment of 6 layers' per-token bytes."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    sbh = 1024 * 32 * 1600
    assert s.segment_layers == 6
    assert sbh * 2 == pytest.approx(s.segment_input.m_as("byte"), rel=1e-12)
    expected = 8 * sbh * 2 + 6 * sbh * 34
    assert expected == pytest.approx(s.checkpointed_activations.m_as("byte"), rel=1e-12)


def test_line_items_by_hand() -> None:
    """4 projections + 4h feed-forward + scores/L + 10 MB norm, per layer."""
    s = Scenarios.Gpt2XlBatch32Activations
    sbh2 = 1024 * 32 * 1600 * 2
    per_layer = 4 * sbh2 + 4 * sbh2 + s.score_activations.m_as("byte") / 48 + 10e6
    assert per_layer == pytest.approx(s.line_items_per_layer.m_as("byte"), rel=1e-12)


def test_recompute_arithmetic() -> None:
    """6PD / 2PD = 3 forward passes; full recomputation adds one: 8/6 - 1 = 1/3."""
    s = Scenarios.Gpt3ActivationsMicrobatch4
    assert s.forward_equivalents == 3.0
    assert pytest.approx(s.recompute_overhead, rel=1e-12) == 1 / 3
    assert pytest.approx(s.recompute_forward_equivalents, rel=1e-12) == 4.0


def test_sequence_falls_back_to_context() -> None:
    """GPT-3's context of 2048 is used when seq_len is absent."""
    assert Scenarios.Gpt3ActivationsMicrobatch4.sequence == 2048
    assert isinstance(Scenarios.Gpt3ActivationsMicrobatch4.sequence, int)


def test_segments_not_applicable_without_segments() -> None:
    """segment_layers needs checkpoint_segments."""
    with pytest.raises(NotApplicableError, match="checkpoint_segments"):
        Scenarios.Gpt2XlBatch32Activations.segment_layers


def test_scores_need_heads() -> None:
    """A workload without heads has no 'none' footprint but a selective one."""
    s = ActivationMemoryScenario(workload=Workloads.HYPOTHETICAL_8B, micro_batch=1, seq_len=2048)
    assert s.activations("selective").m_as("byte") == 34 * 2048 * 1 * 4096 * 32  # 34 s b h L = 9.13 GB
    with pytest.raises(NotApplicableError, match=r"workload\.heads"):
        s.activations("none")


def test_unknown_strategy() -> None:
    """An unknown strategy lists the valid ones."""
    with pytest.raises(ValueError, match="'none', 'selective', 'full'"):
        Scenarios.Gpt2XlBatch32Activations.activations("some")


def test_checkpoint_memory_units_method() -> None:
    """K + L/k on the workload's layers, validated."""
    s = Scenarios.Gpt2XlBatch32Activations
    assert s.checkpoint_memory_units(6) == 14.0  # 6 + 48/6
    with pytest.raises(FieldError, match="checkpoints: must be at least 1"):
        s.checkpoint_memory_units(0)


def test_llama3_gqa_scores_use_query_heads() -> None:
    """Score coefficient 5 * 32 * 2048 / 4096 = 80 with 32 query heads (KV heads do not enter)."""
    assert Scenarios.Llama3_8BBatch4Activations.score_bytes_coefficient == 80.0


def test_activations_linear_in_micro_batch() -> None:
    """Doubling the micro-batch doubles each strategy."""
    a, b = Scenarios.Gpt2XlMicroBatch16Activations, Scenarios.Gpt2XlBatch32Activations
    for strategy in ("none", "selective", "full"):
        assert 2 * a.activations(strategy) == b.activations(strategy)


def test_tiny_workload() -> None:
    """A toy two-layer model by hand."""
    w = Workload(name="toy", parameters=1000, layers=2, hidden_dim=8, heads=2, context_length=4)
    s = ActivationMemoryScenario(workload=w, micro_batch=1)
    assert s.activations("none").m_as("byte") == 2 * 4 * 1 * 8 * (34 + 5 * 2 * 4 / 8)


def test_a_sliding_window_is_said_where_a_model_has_one() -> None:
    """Gemma 3 27B (52 sliding layers): the caveat says the window caps the cache, not the saved bytes; GPT-2 XL: none."""
    from mlsysim_nb import ActivationMemoryScenario, Workloads

    gemma = ActivationMemoryScenario(workload=Workloads.configuration("gemma-3-27b"), micro_batch=1, seq_len=4096)
    assert any("A sliding window caps the cache, not these bytes" in c for c in gemma.caveats())
    assert "A sliding window caps the cache" in gemma.to_text()
    gpt2 = ActivationMemoryScenario(workload=Workloads.configuration("gpt2-xl"), micro_batch=1, seq_len=1024)
    assert not any("sliding window" in c for c in gpt2.caveats())
    assert "sliding window" not in gpt2.to_text()
