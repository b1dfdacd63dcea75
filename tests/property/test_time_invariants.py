"""Invariants of the training-time scenario for any valid layout and batch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings

from tests.strategies import time_scenarios

#: each example builds a layout and its time: a few dozen examples cover the branches
_FEW = settings(max_examples=25, deadline=None)
_MOST_SEQUENCES = 2**24  # global_batch_size's bound


def _s(q: Any) -> float:
    return float(q.m_as("s"))


@_FEW
@given(time_scenarios())
def test_more_replicas_never_add_arithmetic_per_device(s: Any) -> None:
    """Doubling N_d (and B with it) leaves each device's matrix work unchanged; doubling it at a fixed B halves it."""
    layout = s.layout
    assume(2 * s.global_batch_size <= _MOST_SEQUENCES)
    more = s.variant(
        layout=layout.variant(data_parallel=layout.data_parallel * 2), global_batch_size=2 * s.global_batch_size
    )
    assert _s(more.compute_time) == pytest.approx(_s(s.compute_time), rel=1e-9)
    assert _s(more.recompute_time) == pytest.approx(_s(s.recompute_time), rel=1e-9)


@_FEW
@given(time_scenarios())
def test_every_cause_is_a_time_and_nothing_exposed_is_negative(s: Any) -> None:
    """Each part of the iteration is at least zero and they add up to the iteration time."""
    parts = s.time_parts()
    assert all(value >= 0 for value in parts.values())
    assert _s(s.exposed_data_parallel_time) >= 0
    assert _s(s.exposed_data_parallel_time) <= _s(s.data_parallel_time) * (1 + 1e-12)
    assert float(s.magnitude("iteration_time")) == pytest.approx(sum(parts.values()), rel=1e-9)


@_FEW
@given(time_scenarios())
def test_the_bubble_vanishes_as_the_micro_batches_grow(s: Any) -> None:
    """(p − 1)/(m·n_mb): ten times the batch is a tenth of the bubble fraction, and never below zero."""
    assume(10 * s.global_batch_size <= _MOST_SEQUENCES)
    more = s.variant(global_batch_size=10 * s.global_batch_size)
    assert more.bubble_fraction == pytest.approx(s.bubble_fraction / 10, rel=1e-9, abs=1e-15)
    assert s.bubble_fraction >= 0


@_FEW
@given(time_scenarios())
def test_utilization_is_at_most_the_matmul_share(s: Any) -> None:
    """MFU ≤ HFU ≤ η_mm: only matrix work runs at the achieved share of peak, the rest only adds time."""
    assert s.model_flops_utilization <= s.hardware_flops_utilization * (1 + 1e-12)
    assert s.hardware_flops_utilization <= s.matmul_share * (1 + 1e-9)
