"""Invariants of the serving kind for any valid configuration on a shipped architecture."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import InferenceMemoryScenario, sweep
from tests.strategies import inference_scenarios


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


@given(inference_scenarios(), st.integers(2, 8))
def test_kv_cache_is_linear_in_batch_and_context(s: Any, k: int) -> None:
    """The cache is linear: k times the batch is k times the cache; without a window, k times the context (within it) too."""
    assert _b(s.variant(batch_size=s.batch_size * k).kv_cache) == pytest.approx(k * _b(s.kv_cache), rel=1e-12)
    longer = s.context_length * k
    window = s.workload.sliding_window
    if longer <= s.workload.context_length and (window is None or longer <= window):
        assert _b(s.variant(context_length=longer).kv_cache) == pytest.approx(k * _b(s.kv_cache), rel=1e-12)


@given(inference_scenarios())
def test_max_batch_size_is_the_largest_batch_that_fits(s: Any) -> None:
    """B_max fits (when at least 1) and B_max + 1 does not."""
    most = s.max_batch_size
    if 1 <= most <= 2**16:
        assert s.variant(batch_size=most).fits
    if most + 1 <= 2**16:
        assert not s.variant(batch_size=most + 1).fits


@given(inference_scenarios())
def test_max_context_length_fits_and_one_more_block_does_not(s: Any) -> None:
    """The longest context fits at this batch; a block more does not, unless the model's window stops it."""
    longest = s.max_context_length
    if longest >= 1:
        assert s.variant(context_length=longest, prompt_length=None).fits
    nxt = longest + s.block_size
    if longest < s.workload.context_length and nxt <= s.workload.context_length:
        assert not s.variant(context_length=nxt, prompt_length=None).fits


@given(inference_scenarios())
def test_decode_time_never_falls_with_the_batch(s: Any) -> None:
    """More sequences read more cache and do more arithmetic: the step never gets shorter."""
    more = s.variant(batch_size=s.batch_size + 1)
    assert _b_time(more) >= _b_time(s) * (1 - 1e-12)


def _b_time(s: Any) -> float:
    return float(s.decode_time_per_token.m_as("s"))


@given(inference_scenarios())
def test_tensor_parallelism_never_adds_weights_per_device(s: Any) -> None:
    """Each t that divides the heads and fits the KV heads holds at most the weights of t = 1."""
    one = s.variant(tensor_parallel=1)
    assert _b(s.weights) <= _b(one.weights) * (1 + 1e-12)
    assert _b(s.kv_cache_per_token) <= _b(one.kv_cache_per_token)


@given(inference_scenarios(), st.lists(st.integers(1, 1024), min_size=1, max_size=3, unique=True))
def test_variant_sweep_and_construction_agree(s: Any, batches: list[int]) -> None:
    """Every quantity is the same through variant(), a sweep over batch × context, and building it directly."""
    s = s.variant(prompt_length=None)  # a stated prompt would be refused at the shorter contexts swept
    contexts = sorted({1, s.context_length})
    grid = sweep(s, batch_size=batches, context_length=contexts)
    fits = grid.fits()
    for i, b in enumerate(batches):
        for j, c in enumerate(contexts):
            one = s.variant(batch_size=b, context_length=c)
            direct = InferenceMemoryScenario(**{k: getattr(one, k) for k in one.field_names()})
            assert bool(fits[i, j]) == one.fits == direct.fits
            for name in grid.names():
                value = np.asarray(grid.magnitude(name))[i, j]
                assert value == pytest.approx(one.magnitude(name), rel=1e-12), name
                assert direct.magnitude(name) == one.magnitude(name), name
