"""The attention mixer: one tensor-parallel rule per engine, Megatron-LM's for training and vLLM's for serving.

Megatron-LM (``megatron/core/transformer/attention.py``, ``Attention.__init__``) divides the attention heads and
the query groups by t with ``divide()``, which asserts an even split; vLLM (``vllm/model_executor/layers/
linear.py``, ``QKVParallelLinear.__init__``) divides the query heads by t and, when t ≥ kv, gives each device one
key/value head replicated t/kv times. Llama 3.1 8B has 32 heads and 8 key/value heads.
"""

from __future__ import annotations

import pytest

from mlsysim_nb import (
    Hardware,
    InferenceMemoryScenario,
    ParallelTrainingScenario,
    TrainingStateFitScenario,
    Workloads,
)
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture, cache_values, tensor_parallel_refusal
from mlsysim_nb.layers.mixers.attention import MIXER, kv_head_replicas, kv_heads_per_device

LLAMA = Architecture(hidden_dim=4096, heads=32, kv_heads=8, layers=32)


@pytest.mark.parametrize(
    ("t", "megatron", "vllm"),
    [(1, 8, 8), (2, 4, 4), (8, 1, 1), (16, 0.5, 1), (32, 0.25, 1)],
)
def test_key_value_heads_per_device_by_engine(t: int, megatron: float, vllm: float) -> None:
    """kv/t under Megatron-LM (a fraction where it refuses t); max(kv/t, 1) under vLLM."""
    assert kv_heads_per_device(8, t, "megatron") == megatron
    assert kv_heads_per_device(8, t, "vllm") == vllm


def test_vllm_replicates_each_head_t_over_kv_times() -> None:
    """At t = 16 and 32, vLLM keeps 2 and 4 copies of each of the 8 heads; Megatron-LM never copies."""
    assert [kv_head_replicas(8, t, "vllm") for t in (4, 8, 16, 32)] == [1, 1, 2, 4]
    assert kv_head_replicas(8, 16, "megatron") == 1


def test_llama_at_16_devices_serves_but_does_not_train() -> None:
    """T = 16 > 8 key/value heads: vLLM replicates them, Megatron-LM refuses, each rule naming its engine."""
    assert tensor_parallel_refusal(LLAMA, 16, "vllm") is None
    rule, reason = tensor_parallel_refusal(LLAMA, 16, "megatron")  # type: ignore[misc]
    assert rule == "must divide the 8 key/value heads"
    assert "Megatron-LM" in reason


def test_both_engines_refuse_a_split_head() -> None:
    """T = 3 does not divide 32 heads: each engine refuses it, saying it splits whole heads."""
    for engine, name in (("megatron", "Megatron-LM"), ("vllm", "vLLM")):
        rule, reason = MIXER.refusal(LLAMA, 3, engine)  # type: ignore[misc]
        assert rule == "must divide the 32 attention heads"
        assert name in reason


def test_vllm_refuses_a_t_that_neither_divides_nor_is_a_multiple_of_the_kv_heads() -> None:
    """24 heads and 8 key/value heads at t = 12: 12 divides the heads, but 8 ∤ 12 and 12 ∤ 8."""
    arch = Architecture(hidden_dim=24 * 64, heads=24, kv_heads=8)
    rule, reason = tensor_parallel_refusal(arch, 12, "vllm")  # type: ignore[misc]
    assert rule == "must divide the 8 key/value heads, or be a multiple of them"
    assert "vLLM" in reason


def test_the_cache_per_device_follows_vllm() -> None:
    """Llama 3.1 8B's cache per token: 2 · 32 · 8 · 128 = 65,536 values; 8,192 per device at t = 8 and at t = 16."""
    assert cache_values(LLAMA).per_token == ((None, 65_536),)
    assert cache_values(LLAMA, tensor_parallel=8).per_token == ((None, 8_192),)
    assert cache_values(LLAMA, tensor_parallel=16).per_token == ((None, 8_192),)


def test_the_serving_kind_replicates_at_16_devices() -> None:
    """Served on 16 H100s, each device keeps one head (its cache 2 · 32 · 128 · 2 B = 16 KiB per token)."""
    s = InferenceMemoryScenario(workload=Workloads.LLAMA3_8B, hardware=Hardware.H100, tensor_parallel=16)
    assert s.kv_cache_per_token.m_as("B") == 2 * 32 * 128 * 2
    assert s.magnitude("kv_head_replicas") == 2
    assert "vLLM" in s.to_text()


def test_the_training_kind_refuses_16_devices_naming_megatron() -> None:
    """The parallel training kind follows Megatron-LM: t = 16 does not divide Llama 3.1 8B's 8 key/value heads."""
    state = TrainingStateFitScenario(workload=Workloads.LLAMA3_8B, hardware=Hardware.H100, bytes_per_value=2,
                                     optimizer_bytes_per_parameter=8)  # fmt: skip
    base = ParallelTrainingScenario(state=state)
    with pytest.raises(FieldError, match=r"tensor_parallel: must divide the 8 key/value heads of Llama 3\.1 8B, got "
                       r"16 \(Megatron-LM splits the query groups"):  # fmt: skip
        base.variant(tensor_parallel=16)
