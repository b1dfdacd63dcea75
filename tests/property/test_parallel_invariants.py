"""Invariants of the many-device scenario for any valid layout."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given

from tests.strategies import parallel_scenarios


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


@given(parallel_scenarios())
def test_zero_stages_never_add_memory(s: Any) -> None:
    """Each ZeRO stage holds at most what the one before it holds; activations do not change."""
    per_stage = [_b(s.variant(zero_stage=z).state_per_device) for z in range(4)]
    for before, after in itertools.pairwise(per_stage):
        assert after <= before * (1 + 1e-12)


@given(parallel_scenarios())
def test_more_replicas_never_add_memory(s: Any) -> None:
    """Doubling N_d never increases the state per device, and never changes the activations."""
    more = s.variant(data_parallel=s.data_parallel * 2)
    assert _b(more.state_per_device) <= _b(s.state_per_device) * (1 + 1e-12)
    if s.activations is not None:
        assert more.activations_per_device == s.activations_per_device


@given(parallel_scenarios())
def test_model_parallelism_splits_the_state_by_t_times_p(s: Any) -> None:
    """Without ZeRO, the state per device times t·p is the single-device state total."""
    plain = s.variant(zero_stage=0)
    split = _b(plain.state_per_device) * s.tensor_parallel * s.pipeline_parallel
    assert split == pytest.approx(_b(s.state.total), rel=1e-12)


@given(parallel_scenarios())
def test_one_device_reproduces_the_single_device_scenarios(s: Any) -> None:
    """N_d = t = p = 1: the state total, and the activation scenario's figure for the strategy."""
    one = s.variant(data_parallel=1, tensor_parallel=1, sequence_parallel=False, pipeline_parallel=1, interleave=1)
    assert _b(one.state_per_device) == pytest.approx(_b(s.state.total), rel=1e-12)
    if s.activations is not None:
        expected = _b(s.activations.activations(s.recompute))
        assert _b(one.activations_per_device) == pytest.approx(expected, rel=1e-12)


@given(parallel_scenarios(activations=True))
def test_recomputation_and_sequence_parallelism_never_add_activations(s: Any) -> None:
    """Full recomputation <= selective <= none, and turning sequence parallelism on never adds activations."""
    none, selective, full = (_b(s.variant(recompute=r).layer_activations) for r in ("none", "selective", "full"))
    assert full <= selective * (1 + 1e-12) and selective <= none * (1 + 1e-12)
    if s.tensor_parallel > 1:  # sequence parallelism needs t > 1
        on, off = (_b(s.variant(sequence_parallel=v).layer_activations) for v in (True, False))
        assert on <= off * (1 + 1e-12)


@given(parallel_scenarios(activations=True))
def test_tensor_parallelism_never_adds_activations_per_layer(s: Any) -> None:
    """A layer on t devices holds at most what it holds on one."""
    one = s.variant(tensor_parallel=1, sequence_parallel=False)
    assert _b(s.layer_activations) <= _b(one.layer_activations) * (1 + 1e-12)


@given(parallel_scenarios())
def test_variant_without_changes_is_equal(s: Any) -> None:
    """variant() with no change gives an equal scenario."""
    assert s == s.variant()
