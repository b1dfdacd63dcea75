"""Serving time (kinds/inference/timing.py): time to first token, time per output token, the all-reduces."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import Hardware, InferenceMemoryScenario, Workloads
from mlsysim_nb.errors import NotApplicableError


def _ms(q: Any) -> float:
    return float(q.m_as("ms"))


def _llama70b(hardware: str, t: int, **fields: Any) -> InferenceMemoryScenario:
    w = Workloads.configuration("llama-3.1-70b")
    return InferenceMemoryScenario(workload=w, hardware=Hardware[hardware], tensor_parallel=t, batch_size=32,
                                   context_length=8192, **fields)  # fmt: skip


def test_jax_scaling_book_decode_step_on_eight_tpu_v5e() -> None:
    """Llama 3 70B in int8 on 8 TPU v5e, batch 32 at 8k context: about 17 ms a step (the JAX scaling book).

    Per chip: 70.6e9/8 weights of 1 B (8.69 GB read) and 32 × 8192 × 2·80·8·128 B / 8 of cache (5.37 GB), over
    819 GB/s: 17.2 ms. The TPU's links are not in the catalog, so the all-reduces cannot be timed and say so.
    """
    s = _llama70b("TPU_V5E", 8, weight_bytes_per_parameter=1, kv_bytes_per_value=1)
    assert float(s.kv_cache.m_as("B")) == 32 * 8192 * 2 * 80 * 8 * 128 / 8
    assert _ms(s.decode_time_per_token) == pytest.approx(17.16, abs=0.01)
    with pytest.raises(NotApplicableError, match=r"hardware\.network_bandwidth \(Google TPU v5e gives none\)"):
        _ = s.time_per_output_token


def test_the_all_reduces_of_a_decode_step_and_a_prefill() -> None:
    """H100, t = 8: two ring all-reduces of b·h per layer, 4·80·7/8·32·8192·2 B = 146.8 MB at 450 GB/s, 0.326 ms."""
    s = _llama70b("H100", 8)
    traffic = 4 * 80 * 7 / 8 * 32 * 8192 * 2
    assert float(s.decode_allreduce_traffic.m_as("B")) == pytest.approx(traffic, rel=1e-12)
    assert _ms(s.decode_allreduce_time) == pytest.approx(traffic / 450e9 * 1e3, rel=1e-12)
    assert _ms(s.time_per_output_token) == pytest.approx(_ms(s.decode_time_per_token) + traffic / 450e9 * 1e3)
    prefill = 4 * 80 * 7 / 8 * 32 * 4096 * 8192 * 2 / 450e9  # half the context is the prompt
    assert _ms(s.prefill_allreduce_time) == pytest.approx(prefill * 1e3, rel=1e-12)
    assert _ms(s.time_to_first_token) == pytest.approx(_ms(s.prefill_time) + prefill * 1e3, rel=1e-12)


def test_one_device_sends_nothing_and_the_shares_scale_the_bounds() -> None:
    """One device: no all-reduce, TPOT is the decode bound; at half the bandwidth a memory-bound step takes twice as long."""
    s = InferenceMemoryScenario(workload=Workloads.configuration("llama-3.1-8b"), hardware=Hardware["H100"])
    assert _ms(s.decode_allreduce_time) == 0
    assert _ms(s.time_per_output_token) == pytest.approx(_ms(s.decode_time_per_token), rel=1e-12)
    assert s.memory_bound
    half = s.variant(memory_share=0.5)
    assert _ms(half.time_per_output_token) == pytest.approx(2 * _ms(s.decode_time_per_token), rel=1e-12)
    weights_once = float(s.weights_read_per_step.m_as("B")) / 3.35e12 * 1e3
    assert _ms(s.time_to_first_token) == pytest.approx(max(_ms(s.prefill_time), weights_once), rel=1e-12)
