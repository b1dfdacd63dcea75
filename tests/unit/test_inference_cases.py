"""The serving kind's 2025 cases (kinds/inference/cases.py) and the published cache-per-token figures, by hand."""

from __future__ import annotations

import pytest

from mlsysim_nb import Hardware, InferenceMemoryScenario, Scenarios
from mlsysim_nb.records.formats import weight_bytes
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.records.workloads import Workload


def test_the_three_published_cache_per_token_figures() -> None:
    """DeepSeek's ISCA '25 paper, Table 1, in BF16: DeepSeek-V3 70,272 B; Qwen2.5-72B 327,680 B; Llama 3.1 405B 516,096 B."""
    deepseek = InferenceMemoryScenario(workload=Workloads.configuration("deepseek-v3"), hardware=Hardware.H200)
    assert deepseek.kv_cache_per_token.m_as("B") == 61 * (512 + 64) * 2 == 70_272
    qwen = Workload(name="Qwen2.5-72B", parameters=72_700_000_000, layers=80, hidden_dim=8192, heads=64, kv_heads=8,
                    context_length=131072)  # Qwen2.5 Technical Report, Table 1  # fmt: skip
    qwen_serve = InferenceMemoryScenario(workload=qwen, hardware=Hardware.H200)
    assert qwen_serve.kv_cache_per_token.m_as("B") == 80 * 2 * 8 * 128 * 2 == 327_680
    llama = InferenceMemoryScenario(workload=Workloads.configuration("llama-3.1-405b"), hardware=Hardware.H200)
    assert llama.kv_cache_per_token.m_as("B") == 126 * 2 * 8 * 128 * 2 == 516_096


def test_deepseek_v3_on_eight_h200_in_fp8() -> None:
    """The latent cache is whole on each device: 16 × 32,768 × 70,272 B; the FP8 weights at t = 1 are weight_bytes'."""
    s = Scenarios.DeepSeekV3ServeOn8H200FP8
    assert s.kv_cache.m_as("B") == 16 * 32_768 * 70_272 == 36_842_766_336
    assert s.variant(tensor_parallel=1).weights.m_as("B") == weight_bytes(s.workload, "fp8_e4m3_block128")
    assert s.fits
    assert s.max_batch_size == 22


def test_gpt_oss_120b_on_one_h100() -> None:
    """MXFP4 experts, BF16 rest: 65.25 GB; half the layers keep a 128-token window of 2 KiB a token."""
    s = Scenarios.GptOss120BServeOnH100
    experts = 36 * 128 * (2880 * 2 * 2880 + 2880 * 2880)  # gate_up and down projections of every expert
    rest = 116_829_156_672 - experts  # attention, router, embeddings, output layer, norms and biases in BF16
    assert s.weights.m_as("B") == experts * 4.25 / 8 + rest * 2 == 65_248_815_744
    per_layer = 2 * 8 * 64 * 2  # K and V of 8 key/value heads of 64, 2 B
    assert s.kv_cache.m_as("B") == 8 * (18 * per_layer * 8192 + 18 * per_layer * 128) == 2_453_667_840
    assert s.fits


def test_a_hybrid_at_128k_against_a_transformer_of_its_size() -> None:
    """Bamba 9B keeps K and V in 3 of 32 layers and a constant Mamba-2 state; Llama 3.1 8B in all 32."""
    bamba, llama = Scenarios.Bamba9BAt128KOnH100, Scenarios.Llama3_1_8BAt128KOnH100
    attention = 3 * 3 * 2 * 8 * 128 * 131_072 * 2  # 3 sequences, 3 layers, K and V, 8 heads of 128, 2 B
    states = 3 * 29 * ((8192 + 2 * 128) * 4 + 128 * 64 * 128) * 2  # conv (c_ssm × K) and SSM (H × P × N) states
    assert bamba.kv_cache.m_as("B") == attention + states == 5_020_170_240
    assert bamba.variant(context_length=4096).kv_cache.m_as("B") == attention // 32 + states
    assert llama.kv_cache.m_as("B") == 3 * 131_072 * 131_072
    assert (bamba.max_batch_size, llama.max_batch_size) == (34, 3)


def test_attention_flops_follow_the_layers_that_attend() -> None:
    """Decode attends in Bamba's 3 attention layers only (4·a·d per token each); gpt-oss's windowed layers to 128 tokens.

    The difference between two contexts isolates the attention term: b × 4 × (3 × 32 × 128) × 65,536 for Bamba.
    """
    bamba = Scenarios.Bamba9BAt128KOnH100
    half = bamba.variant(context_length=65_536)
    extra = bamba.decode_flops_per_step.m_as("FLOP") - half.decode_flops_per_step.m_as("FLOP")
    assert extra == pytest.approx(3 * 4 * (3 * 32 * 128) * 65_536, rel=1e-12)
    oss = Scenarios.GptOss120BServeOnH100
    longer = oss.variant(context_length=16_384)
    extra = longer.decode_flops_per_step.m_as("FLOP") - oss.decode_flops_per_step.m_as("FLOP")
    assert extra == pytest.approx(
        8 * 4 * (18 * 64 * 64) * 8_192, rel=1e-12
    )  # only the 18 full-context layers attend to the new tokens
    deepseek = Scenarios.DeepSeekV3ServeOn8H200FP8
    longer = deepseek.variant(context_length=65_536)
    extra = longer.decode_flops_per_step.m_as("FLOP") - deepseek.decode_flops_per_step.m_as("FLOP")
    assert extra == pytest.approx(
        16 * 4 * 61 * 128 * (192 + 128) / 2 * 32_768 / 8, rel=1e-12
    )  # decompressed keys and values, split over 8
