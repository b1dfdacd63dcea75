"""Invariants of both scenarios for any valid input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mlsysim_nb import Q_, NotApplicableError
from tests.strategies import activation_scenarios, training_scenarios


@given(training_scenarios(adapters=False))
def test_total_is_sum_of_parts_full_tuning(s: Any) -> None:
    """Full tuning: total = weights + gradients + optimizer state + master weights."""
    parts = s.weights + s.gradients + s.optimizer_state + s.master_weights
    assert parts.m_as("byte") == pytest.approx(s.total.m_as("byte"), rel=1e-12)
    assert s.total == s.full_state


@given(training_scenarios(adapters=True))
def test_total_is_sum_of_parts_adapter_mode(s: Any) -> None:
    """Adapter mode: total = frozen weights + the adapters' weights, gradients, master and optimizer state."""
    adapter = s.adapter_weights + s.adapter_gradients + s.adapter_master + s.adapter_optimizer_state
    assert adapter.m_as("byte") == pytest.approx(s.adapter_state.m_as("byte"), rel=1e-12)
    assert (s.weights + adapter).m_as("byte") == pytest.approx(s.total.m_as("byte"), rel=1e-12)
    # the reduction approaches its ceiling as adapters shrink, and never passes it
    assert 0 < s.adapter_reduction <= s.adapter_reduction_ceiling * (1 + 1e-12)
    assert s.adapter_kept_share == pytest.approx(1 / s.adapter_reduction, rel=1e-12)


@given(training_scenarios())
def test_variant_without_changes_is_equal_and_original_untouched(s: Any) -> None:
    """variant() with no change is equal; a change leaves the original as it was."""
    before = s.inputs()
    assert s == s.variant()
    changed = s.variant(bytes_per_value=Q_(s.bytes_per_value.m_as("byte") * 2, "byte"))
    assert before == s.inputs()
    assert changed.bytes_per_value != s.bytes_per_value
    assert changed.optimizer_bytes_per_parameter == s.optimizer_bytes_per_parameter


@given(training_scenarios(), st.integers(1, 4096))
def test_activations_at_is_linear(s: Any, batch: int) -> None:
    """activations_at(b) = activations * b / batch_size."""
    if s.activations is None:
        with pytest.raises(NotApplicableError):
            s.activations_at(batch)
        return
    expected = s.activations.m_as("byte") * batch / s.batch_size
    assert expected == pytest.approx(s.activations_at(batch).m_as("byte"), rel=1e-12)


@given(training_scenarios())
def test_fits_agrees_with_capacity_share(s: Any) -> None:
    """Fits is exactly capacity_share <= 1 when there is hardware, else False (and capacity_share not applicable)."""
    if s.hardware is None:
        assert s.fits is False
        with pytest.raises(NotApplicableError):
            _ = s.capacity_share
    else:
        assert s.fits == (float(s.capacity_share) <= 1)


@given(activation_scenarios(), st.integers(2, 5))
def test_activations_linear_in_micro_batch(s: Any, factor: int) -> None:
    """Every strategy scales linearly with the micro-batch."""
    bigger = s.variant(micro_batch=s.micro_batch * factor)
    for strategy in ("none", "selective", "full"):
        a, b = s.activations(strategy).m_as("byte"), bigger.activations(strategy).m_as("byte")
        assert factor * a == pytest.approx(b, rel=1e-12)


@given(activation_scenarios())
def test_strategies_are_ordered(s: Any) -> None:
    """None >= selective >= full (for any precision and geometry)."""
    assert s.activations("none") >= s.activations("selective") >= s.activations("full")
    assert 0 < s.score_share < 1


@given(activation_scenarios())
def test_score_activations_grow_with_square_of_sequence(s: Any) -> None:
    """Doubling the sequence doubles per-token and quadruples score activations."""
    if s.sequence * 2 > s.workload.context_length:  # a sequence is at most the context window: halve it instead
        assume(s.sequence % 2 == 0)
        s, longer = s.variant(seq_len=s.sequence // 2), s
    else:
        longer = s.variant(seq_len=s.sequence * 2)
    assert 2 * s.per_token_activations.m_as("byte") == pytest.approx(longer.per_token_activations.m_as("byte"))
    assert 4 * s.score_activations.m_as("byte") == pytest.approx(longer.score_activations.m_as("byte"))


@given(activation_scenarios())
def test_line_items_total_is_layers_times_per_layer(s: Any) -> None:
    """line_items_total = L x line_items_per_layer."""
    total = s.line_items_total.m_as("byte")
    assert s.workload.layers * s.line_items_per_layer.m_as("byte") == pytest.approx(total, rel=1e-12)


@given(training_scenarios(), st.integers(min_value=1, max_value=4096))
def test_activations_follow_the_batch(s: Any, batch: int) -> None:
    """variant(batch_size=B') answers what activations_at(B') says, and the training total moves with it."""
    if s.activations is None or s.batch_size is None:
        assert s.variant(batch_size=batch).activations == s.activations
        return
    moved = s.variant(batch_size=batch)
    expected = s.activations.m_as("byte") * batch / s.batch_size
    assert moved.activations.m_as("byte") == pytest.approx(expected, rel=1e-12)
    assert moved.activations.m_as("byte") == pytest.approx(s.activations_at(batch).m_as("byte"), rel=1e-12)
    assert moved.training_total.m_as("byte") == pytest.approx(moved.total.m_as("byte") + expected, rel=1e-12)
    assert moved.variant(batch_size=s.batch_size).activations.m_as("byte") == pytest.approx(
        s.activations.m_as("byte"), rel=1e-9
    )
