"""Invariants of the many-device scenario on real architectures and under expert parallelism."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsysim_nb import layers, sweep
from mlsysim_nb.render.numbers import format_bytes
from tests.strategies import ARCHITECTURE_KEYS, architecture_parallel_scenarios


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


def _one_device(s: Any) -> Any:
    return s.variant(data_parallel=1, zero_stage=0, tensor_parallel=1, sequence_parallel=False, expert_parallel=1,
                     pipeline_parallel=1, interleave=1)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(architecture_parallel_scenarios(interleave=False))
def test_per_device_never_exceeds_one_device(s: Any) -> None:
    """State and activations per device are at most one device's (without interleaving, which adds micro-batches)."""
    one = _one_device(s)
    assert _b(s.state_per_device) <= _b(one.state_per_device) * (1 + 1e-12)
    assert _b(s.state_per_device) <= _b(s.state.total) * (1 + 1e-12)
    assert _b(s.layer_activations) <= _b(one.layer_activations) * (1 + 1e-12)
    assert _b(s.activations_per_device) <= _b(one.activations_per_device) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(architecture_parallel_scenarios())
def test_the_layer_is_the_tables(s: Any) -> None:
    """The chain's layer on one device is layers.layer_saved_bytes(arch, ..., tensor_parallel=t, sequence_parallel=sp)."""
    acts = s.activations
    table = layers.layer_saved_bytes(
        s.workload.architecture(), seq_len=int(acts.sequence), micro_batch=acts.micro_batch,
        dtype_bytes=int(acts.precision_bytes), strategy=s.recompute, tensor_parallel=s.tensor_parallel,
        sequence_parallel=s.sequence_parallel,
    )  # fmt: skip
    assert _b(s.layer_activations) == pytest.approx(table, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(architecture_parallel_scenarios())
def test_one_expert_device_is_the_dense_split(s: Any) -> None:
    """With e = 1 every part of the state is its replica's / (t·p · its ZeRO shards), as without expert parallelism."""
    dense = s.variant(expert_parallel=1)
    split = dense.model_parallel
    parts = [
        ("weights_per_device", "replica_weights", "weight_shards"),
        ("gradients_per_device", "replica_gradients", "gradient_shards"),
        ("optimizer_state_per_device", "replica_optimizer_state", "optimizer_shards"),
        ("master_weights_per_device", "replica_master_weights", "optimizer_shards"),
    ]
    for part, replica, shards in parts:
        expected = _b(getattr(dense, replica)) / (split * getattr(dense, shards))
        assert _b(getattr(dense, part)) == pytest.approx(expected, rel=1e-12)
    assert dense.activations_per_device == s.activations_per_device  # routing leaves the activations alone


@settings(max_examples=25, deadline=None)
@given(architecture_parallel_scenarios())
def test_variant_sweep_and_repr_agree_on_the_new_fields(s: Any) -> None:
    """sweep() over expert_parallel gives each variant()'s numbers; the repr shows the same memory per device."""
    values = sorted({1, s.expert_parallel})
    grid = sweep(s, expert_parallel=values)
    for i, e in enumerate(values):
        one = s.variant(expert_parallel=e)
        for name in ("state_per_device", "total_per_device", "gradient_allreduce_traffic", "layer_activations"):
            assert grid.magnitude(name)[i] == pytest.approx(one.magnitude(name), rel=1e-12)
        assert f"{format_bytes(one.magnitude('total_per_device'))} per device" in repr(one)
    assert np.array_equal(grid.fits(), [s.variant(expert_parallel=e).fits for e in values])


@settings(max_examples=40, deadline=None)
@given(architecture_parallel_scenarios(), st.sampled_from(ARCHITECTURE_KEYS))
def test_variant_workload_is_the_run_built_afresh(s: Any, key: str) -> None:
    """variant(workload=w) gives what building the run afresh from state and activations of w gives, or both refuse."""
    from mlsysim_nb import ParallelTrainingScenario, Workloads
    from mlsysim_nb.errors import FieldError

    w = Workloads.configuration(key)
    layout = {name: getattr(s, name) for name in ("recompute", "data_parallel", "zero_stage", "tensor_parallel",
              "sequence_parallel", "expert_parallel", "pipeline_parallel", "interleave")}  # fmt: skip
    try:
        fresh = ParallelTrainingScenario(state=s.state.variant(workload=w), activations=s.activations.variant(workload=w),
                                         **layout)  # fmt: skip
    except FieldError:
        with pytest.raises(FieldError) as info:
            s.variant(workload=w)
        assert info.value.field == "workload" or info.value.field in layout
        return
    changed = s.variant(workload=w)
    for name in ("state_per_device", "activations_per_device", "total_per_device", "data_parallel_traffic"):
        assert getattr(changed, name) == getattr(fresh, name), name
    assert changed.training_fits == fresh.training_fits


@settings(max_examples=40, deadline=None)
@given(architecture_parallel_scenarios())
def test_the_binding_device_holds_the_larger_stage(s: Any) -> None:
    """The per-device activations are the larger of the first and last stages (their sum on one stage), never less."""
    first, last, device = _b(s.first_stage_activations), _b(s.last_stage_activations), _b(s.activations_per_device)
    if s.pipeline_parallel == 1:
        assert device == pytest.approx(first + _b(s.last_stage_activations) - _b(s.first_stage_layer_activations),
                                       rel=1e-12)  # fmt: skip
    else:
        assert device == max(first, last)
    assert device >= _b(s.first_stage_layer_activations)
