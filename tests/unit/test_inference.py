"""The serving kind: hand-worked numbers, the published figures it reproduces, and one test per refusal."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlsysim_nb import Q_, Hardware, InferenceMemoryScenario, Scenarios, Workloads, compare, explore, sweep
from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.kinds.inference.cases import opt_13b
from mlsysim_nb.records.workloads import Workload

LLAMA8 = Workloads.configuration("llama-3.1-8b")
LLAMA70 = Workloads.configuration("llama-3.1-70b")
MIXTRAL = Workloads.configuration("mixtral-8x7b")
MISTRAL = Workloads.configuration("mistral-7b")


def _serve(workload=LLAMA8, hardware="H100", **fields):  # type: ignore[no-untyped-def]
    return InferenceMemoryScenario(workload=workload, hardware=Hardware[hardware], **fields)


# -- published figures ------------------------------------------------------------------------------------------


def test_opt_13b_keeps_800_kib_per_token_and_1600_mib_per_2048_token_sequence() -> None:
    """Kwon et al. (2023), vLLM/PagedAttention, SOSP '23, Sec. 3, quoted.

    "for the 13B parameter OPT model, the KV cache of a single token demands 800 KB of space, calculated as
    2 (key and value vectors) × 5120 (hidden state size) × 40 (number of layers) × 2 (bytes per FP16). Since OPT
    can generate sequences up to 2048 tokens, the memory required to store the KV cache of one request can be
    as much as 1.6 GB."  2 × 5120 × 40 × 2 = 819,200 B, which is 800 KiB exactly (819.2 kB in SI units): the
    paper's "KB" is the binary kibibyte. 2048 tokens × 800 KiB = 1600 MiB = 1.68 GB (1.56 GiB); the paper's
    "1.6 GB" is 1600 MiB, read in binary megabytes.
    """
    s = Scenarios.Opt13BPagedAttentionOnA100.variant(batch_size=1)
    assert s.kv_cache_per_token.m_as("B") == 2 * 5120 * 40 * 2 == 819_200
    assert s.kv_cache_per_token.m_as("KiB") == 800
    assert s.context_length == 2048
    assert s.kv_cache.m_as("MiB") == 1600
    assert s.kv_cache.m_as("B") == 1_677_721_600  # 1.68 GB
    assert s.block_waste.m_as("B") == 0  # 2048 is 128 whole blocks of 16


def test_opt_13b_is_the_published_shape() -> None:
    """Zhang et al. (2022), OPT, Table 1: 13B has 40 layers, 40 heads, d_model 5120; a 2048-token context."""
    w = opt_13b()
    assert (w.layers, w.heads, w.hidden_dim, w.context_length) == (40, 40, 5120, 2048)
    assert 12.8e9 < w.parameters.magnitude < 12.9e9  # "13B"; the layer table counts 12.85 billion


def test_grouped_query_attention_shrinks_the_cache_by_heads_over_kv_heads() -> None:
    """Ainslie et al. (2023), GQA: Llama 2 70B's 8 key/value heads of 64 make a cache 8 times smaller than MHA's.

    GQA is "an interpolation between multi-head and multi-query attention with single key and value heads per
    subgroup of query heads" (Ainslie et al. 2023, Sec. 1); Llama 2 70B's 64 query heads share 8 key/value heads
    (Touvron et al. 2023, Sec. 2.2 and Table 1), so its cache is 64/8 = 8 times smaller than multi-head's.
    """
    shape = {"name": "Llama 2 70B", "parameters": 68_976_648_192, "layers": 80, "hidden_dim": 8192, "heads": 64,
             "context_length": 4096}  # fmt: skip
    gqa = _serve(Workload(**shape, kv_heads=8), batch_size=4, context_length=4096)
    mha = _serve(Workload(**shape), batch_size=4, context_length=4096)
    assert mha.kv_cache.m_as("B") / gqa.kv_cache.m_as("B") == 64 / 8 == 8
    assert gqa.kv_cache_per_token.m_as("B") == 2 * 80 * 8 * 128 * 2 == 327_680


def test_llama_2_7b_in_16_bit_reads_its_weights_but_the_embedding_table_per_token() -> None:
    """Ours, hand-worked: Llama 2 7B in 16-bit reads 13.2 GB per decode step at batch 1, not its 13.5 GB.

    The Databricks post "LLM Inference Performance Engineering: Best Practices" (2023) works a 7B model's
    "14 GB" per token for its memory-bandwidth utilisation; its text was not in the corpora we could read, so
    the figure is checked here as our own arithmetic on the shipped configuration: 6,738,415,616 parameters ×
    2 B = 13.48 GB resident, of which the token embeddings (32,000 × 4,096, untied from the output layer) are
    only indexed, 262,144,000 B; the step reads the other 13.21 GB, 6.48 ms at an A100 80GB's 2039 GB/s.
    """
    s = _serve(Workloads.configuration("llama-2-7b"), "A100_80GB", batch_size=1, context_length=1)
    assert s.weights.m_as("B") == 6_738_415_616 * 2
    assert s.lookup_weights.m_as("B") == 32_000 * 4096 * 2
    assert s.weights_read_per_step.m_as("B") == (6_738_415_616 - 32_000 * 4096) * 2
    assert s.memory_bound
    read = (6_738_415_616 - 32_000 * 4096) * 2 + s.kv_cache.m_as("B")
    assert s.decode_time_per_token.m_as("ms") == pytest.approx(read / 2039e9 * 1e3, rel=1e-12)


def test_a_tied_table_is_read_whole_as_the_output_layer() -> None:
    """With tied embeddings the table is the output layer, read whole every step; only learned positions are not."""
    s = Scenarios.Opt13BPagedAttentionOnA100  # OPT ties its embeddings and learns 2,048 positions
    assert s.workload.tied_embeddings
    assert s.lookup_weights.m_as("B") == 2048 * 5120 * 2
    assert s.weights_read_per_step == s.weights - s.lookup_weights


# -- hand-worked cases --------------------------------------------------------------------------------------------


def test_llama_3_1_8b_keeps_128_kib_per_token() -> None:
    """2 · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B = 128 KiB; 4096 tokens × 32 sequences = 16 GiB."""
    s = Scenarios.Llama3_1_8BServeOnH100
    assert s.kv_cache_per_token.m_as("B") == 2 * 32 * 8 * 128 * 2 == 131_072
    assert s.kv_cache_per_token.m_as("KiB") == 128
    assert s.kv_cache.m_as("GiB") == 32 * 4096 * 128 / 2**20 == 16


def test_llama_3_1_70b_keeps_320_kib_per_token() -> None:
    """2 · 80 · 8 · 128 · 2 B = 327,680 B on one device; over t = 2 each device keeps 4 KV heads, half of it."""
    one = _serve(LLAMA70, "H100", weight_bytes_per_parameter=0.515625, batch_size=1, context_length=1024)
    assert one.kv_cache_per_token.m_as("B") == 2 * 80 * 8 * 128 * 2 == 327_680
    assert one.variant(tensor_parallel=2).kv_cache_per_token.m_as("B") == 327_680 / 2


def test_max_batch_size_by_hand() -> None:
    """Llama 3.1 8B on one H100 at 4096 tokens: (80 GiB · 0.9 − 16,060,522,496 B) / (4096 · 131,072 B) = 114.09."""
    s = Scenarios.Llama3_1_8BServeOnH100
    capacity = 80 * 2**30
    weights = 2 * 8_030_261_248  # every parameter 2 B on one device
    assert s.weights.m_as("B") == weights
    per_sequence = 4096 * 131_072
    assert s.max_batch_size == math.floor((capacity * 0.9 - weights) / per_sequence) == 114
    assert s.variant(batch_size=114).fits
    assert not s.variant(batch_size=115).fits


def test_block_waste_is_the_last_block_s_empty_slots() -> None:
    """1000 tokens in blocks of 16 take 63 blocks (1008 slots): 8 empty slots per sequence, × 128 KiB × b."""
    s = Scenarios.Llama3_1_8BServeOnH100.variant(context_length=1000, batch_size=3)
    assert s.blocks_per_sequence == 63
    assert s.block_waste.m_as("B") == 3 * 8 * 131_072
    assert s.variant(block_size=1).block_waste.m_as("B") == 0


def test_the_reserve_is_vllm_s_ten_percent() -> None:
    """The reserve: vLLM's gpu_memory_utilization defaults to 0.9, leaving 10 % of each device.

    Source: vLLM's ``EngineArgs`` (``vllm/engine/arg_utils.py``, the 0.6 releases), ``gpu_memory_utilization:
    float = 0.90`` and ``block_size: int = 16``, the defaults this kind takes for ``runtime_reserve`` and
    ``block_size``.
    """
    s = Scenarios.Llama3_1_8BServeOnH100
    assert s.runtime_reserve == 0.1
    assert s.block_size == 16
    assert s.reserve.m_as("B") == pytest.approx(0.1 * 80 * 2**30)
    assert s.total == s.weights + s.kv_cache + s.block_waste + s.reserve


def test_tensor_parallel_splits_the_layer_table_s_weights() -> None:
    """Over t = 8, Llama 3.1 70B's devices hold 1/8 of every split weight, one KV head each, and the norms whole."""
    one = _serve(LLAMA70, "H100", weight_bytes_per_parameter=0.515625, batch_size=1, context_length=1024)
    eight = one.variant(tensor_parallel=8)
    norms = 80 * 2 * 8192 + 8192  # two RMSNorm scales per layer and the final one: replicated
    assert one.magnitude("replicated_parameters") == norms
    expected = 0.515625 * ((LLAMA70.parameters.magnitude - norms) / 8 + norms)
    assert eight.weights.m_as("B") == pytest.approx(expected)
    assert eight.kv_heads_per_device == 1
    assert eight.kv_head_replicas == 1


def test_fewer_kv_heads_than_devices_are_replicated() -> None:
    """Llama 3.1 8B's 8 KV heads over t = 16: each device keeps 1 head, each head on 2 devices."""
    s = Scenarios.Llama3_1_8BServeOnH100.variant(tensor_parallel=16)
    assert s.kv_heads_per_device == 1
    assert s.kv_head_replicas == 2
    assert s.kv_cache_per_token.m_as("B") == 2 * 32 * 1 * 128 * 2
    kv_projection = s.magnitude("kv_projection_parameters")
    assert kv_projection == 32 * 2 * 4096 * 8 * 128  # wk and wv of every layer
    split = LLAMA8.parameters.magnitude - kv_projection - s.magnitude("replicated_parameters")
    assert s.weights.m_as("B") == pytest.approx(
        2 * (split / 16 + kv_projection / 8 + s.magnitude("replicated_parameters"))
    )


def test_a_sliding_window_caps_the_cached_tokens() -> None:
    """Mistral 7B's 4096-token window: at 16,384 tokens each layer keeps 4096; every context then fits."""
    s = _serve(MISTRAL, batch_size=2, context_length=16384)
    assert s.kv_tokens == 4096
    assert s.kv_cache.m_as("B") == 2 * 4096 * 2 * 32 * 8 * 128 * 2
    assert s.max_context_length == 32768  # the model's context window: past the window nothing grows
    short = s.variant(context_length=1000)
    assert short.kv_tokens == 1000


def test_vllm_logs_58_40_for_mistral_7b_at_8192_tokens_where_the_steady_state_holds_117() -> None:
    """The start-up "Maximum concurrency for 8,192 tokens per request: 58.40x" vLLM logs for Mistral 7B, by hand.

    vllm-project/vllm at 001cabc1be16a59a70d720ed61a13b678c060a18: ``get_num_blocks`` (vllm/v1/core/
    kv_cache_utils.py) makes available // page // layers blocks, a page being one layer's block of 16 tokens,
    2 · 16 · 8 · 128 · 2 B = 65,536 B; ``SlidingWindowSpec.max_memory_usage_bytes`` (vllm/v1/kv_cache_interface.py)
    reserves cdiv(min(W − 1 + C, s), 16) + 1 blocks per request; ``get_max_concurrency_for_kv_cache_config``
    divides the two. On one H100 (80 GiB, as the catalog states it) at gpu_memory_utilization 0.90, the
    weights 7,241,732,096 × 2 B = 14,483,464,192 B and no profiled activations:
    0.9 · 85,899,345,920 − 14,483,464,192 = 62,825,947,136 B for blocks, ⌊/(32 · 65,536)⌋ = 29,957 blocks;
    C = 8,192 (vllm serve's default on a device of ≥ 70 GiB): cdiv(min(4,095 + 8,192, 8,192), 16) + 1 = 513;
    29,957 / 513 = 58.396 → "58.40". The steady state: a decoding sequence at s = 8,192 keeps the window's
    256 blocks (vLLM frees each block wholly before it), 29,957 / 256 = 117.02 → 117 sequences. The issue's
    116.56 is 29,957 / 257: the window straddling a block boundary, as vLLM's reservation for a one-token step
    counts it, cdiv(4,095 + 1, 16) + 1 = 257.
    """
    s = _serve(MISTRAL, batch_size=8, context_length=8192)
    assert s.weights.m_as("B") == 7_241_732_096 * 2 == 14_483_464_192
    assert s.kv_budget.m_as("B") == 0.9 * 80 * 2**30 - 14_483_464_192 == 62_825_947_136
    assert s.chunk_tokens == 8192
    assert s.vllm_cache_blocks == 62_825_947_136 // (32 * 65_536) == 29_957
    assert s.vllm_blocks_per_request == math.ceil(8192 / 16) + 1 == 513
    assert s.vllm_max_concurrency == 29_957 / 513
    assert f"{s.vllm_max_concurrency:.2f}" == "58.40"
    assert s.blocks_per_sequence == 256
    assert s.max_batch_size == 117 == math.floor(29_957 / 256)  # the steady state, what the kind answers
    assert f"{s.variant(chunk_length=1).vllm_max_concurrency:.2f}" == "116.56"  # 29,957 / 257
    assert "maximum concurrency of 58.40" in " ".join(s.caveats())


def test_a_window_off_a_block_boundary_spans_one_block_more() -> None:
    """Mistral 7B at 8,200 tokens: the window, tokens 4,104 to 8,199, spans blocks 256 to 512: 257, not 256.

    vLLM's sliding-window manager frees the blocks wholly before the window, ⌊(8,200 − 4,096)/16⌋ = 256 of them,
    and the sequence has ⌈8,200/16⌉ = 513: it keeps 257, 16 slots more than the window's 4,096 tokens (block
    waste). 29,957 blocks / 257 = 116.56 sequences, the issue's steady state, so 116 fit where 117 do at 8,192.
    """
    s = _serve(MISTRAL, batch_size=8, context_length=8200)
    assert s.kv_tokens == 4096
    assert s.blocks_per_sequence == math.ceil(8200 / 16) - (8200 - 4096) // 16 == 513 - 256 == 257
    assert s.block_waste.m_as("B") == 8 * (257 * 16 - 4096) * 131_072
    assert s.max_batch_size == 116 == math.floor(29_957 / 257)
    assert s.variant(context_length=8192).blocks_per_sequence == 256
    assert s.variant(context_length=4000).blocks_per_sequence == math.ceil(4000 / 16) == 250  # inside the window
    gpt = Scenarios.GptOss120BServeOnH100  # 18 full-context layers beside 18 of a 128-token window, 8,192 tokens
    assert gpt.magnitude("full_cache_values") == gpt.magnitude("window_cache_values") == 18 * 2 * 8 * 64 == 18_432
    # at 8,200 tokens: 513 full-context blocks (512 at 8,192) and 513 − 504 = 9 windowed ones (8 at 8,192)
    grown = gpt.variant(context_length=8200).sequence_memory - gpt.sequence_memory
    assert grown.m_as("B") == pytest.approx((1 + 1) * 16 * 18_432 * 2, rel=1e-12)


@pytest.mark.parametrize(
    ("changes", "shown"),
    [
        ({}, "58.40"),
        ({"chunk_length": 4097}, "58.40"),  # any chunk of at least W + 1 tokens reserves the whole context
        ({"chunk_length": 16384}, "58.40"),  # the LLM class's default on an H100
        ({"chunk_length": 2048}, "77.81"),  # 29,957 / (cdiv(6,143, 16) + 1 = 385)
        ({"runtime_reserve": 0.08}, "59.99"),  # gpu_memory_utilization 0.92: 30,776 blocks / 513
        ({"block_size": 32}, "58.28"),  # 14,978 blocks of 32 / (256 + 1)
    ],
)
def test_only_utilisation_0_9_blocks_of_16_and_a_chunk_past_the_window_give_58_40(
    changes: dict[str, object], shown: str
) -> None:
    """58.40 assumes gpu_memory_utilization 0.90, blocks of 16 and a prefill chunk C ≥ W + 1 = 4,097 tokens."""
    s = _serve(MISTRAL, batch_size=8, context_length=8192, **changes)
    assert f"{s.vllm_max_concurrency:.2f}" == shown


def test_vllm_s_default_chunk_follows_the_device() -> None:
    """The default prefill chunk of vllm serve: 8192 on ≥ 70 GiB but an A100, else 2048 (EngineArgs.get_batch_defaults)."""
    assert _serve(MISTRAL, "H200", context_length=8192).chunk_tokens == 8192
    assert _serve(MISTRAL, "A100_80GB", context_length=8192).chunk_tokens == 2048
    l4 = _serve(MISTRAL, "L4", context_length=8192)
    assert l4.chunk_tokens == 2048
    assert l4.vllm_blocks_per_request == math.ceil((4095 + 2048) / 16) + 1 == 385
    assert _serve(MISTRAL, "MI300X", context_length=8192).chunk_tokens == 8192  # 192 GiB, an AMD GPU
    tpu = _serve(MISTRAL, "TPU_V5P", context_length=8192)  # vLLM's TPUs have defaults of their own
    with pytest.raises(NotApplicableError, match="a stated chunk_length"):
        _ = tpu.vllm_max_concurrency
    assert tpu.variant(chunk_length=256).chunk_tokens == 256


def test_under_full_attention_vllm_s_figure_is_the_steady_state_s_ratio() -> None:
    """Llama 3.1 8B at 4096 tokens: vLLM reserves the context's 256 blocks, 29,205 blocks / 256 = 114.08 (B_max 114)."""
    s = Scenarios.Llama3_1_8BServeOnH100
    blocks = math.floor((0.9 * 80 * 2**30 - 2 * 8_030_261_248) / (16 * 131_072))
    assert s.vllm_cache_blocks == blocks == 29_205
    assert s.vllm_blocks_per_request == 256
    assert s.vllm_max_concurrency == pytest.approx(114.08, abs=0.005)
    assert s.max_batch_size == math.floor(s.vllm_max_concurrency) == 114


def test_vllm_s_figure_is_refused_for_layers_of_several_kinds() -> None:
    """A hybrid's caches go to vLLM's groups of layers, which this figure does not follow: refused, saying so."""
    with pytest.raises(NotApplicableError, match="layers of one kind of cache"):
        _ = Scenarios.Bamba9BAt128KOnH100.vllm_max_concurrency


def test_the_mixture_of_experts_reads_the_experts_its_tokens_touch() -> None:
    """E·(1 − (1 − k/E)^b) distinct experts per layer: k = 2 at b = 1; 8·(1 − 0.75^16) = 7.92 at b = 16."""
    s = Scenarios.Mixtral8x7BServeOn2H100
    assert s.variant(batch_size=1).experts_touched == pytest.approx(2)
    assert s.experts_touched == pytest.approx(8 * (1 - 0.75**16))
    one = s.variant(batch_size=1)
    unread = one.expert_weights * (1 - 2 / 8)
    assert one.lookup_weights.m_as("B") == pytest.approx(32_000 * 4096 * 2 / 2, rel=1e-12)  # untied, split over t = 2
    assert one.weights_read_per_step.m_as("B") == pytest.approx((one.weights - one.lookup_weights - unread).m_as("B"))
    assert s.weights.m_as("B") == pytest.approx(2 * MIXTRAL.parameters.magnitude / 2, rel=1e-4)


def test_a_dense_model_reads_every_weight_and_the_cache() -> None:
    """Dense: bytes read per step = the weights but the indexed embedding table, + the KV cache; the larger bound."""
    s = Scenarios.Llama3_1_8BServeOnH100
    assert s.lookup_weights.m_as("B") == pytest.approx(128_256 * 4096 * 2, rel=1e-12)  # untied token embeddings
    read = s.weights - s.lookup_weights + s.kv_cache
    assert s.bytes_read_per_step.m_as("B") == pytest.approx(read.m_as("B"), rel=1e-12)
    assert s.decode_memory_time.m_as("s") == pytest.approx(s.bytes_read_per_step.m_as("B") / 3.35e12)
    assert s.decode_time_per_token == max(s.decode_memory_time, s.decode_compute_time)
    assert s.aggregate_tokens_per_second.m_as("1/s") == pytest.approx(32 * s.tokens_per_second.m_as("1/s"))
    big = s.variant(batch_size=2048, context_length=16)
    assert not big.memory_bound  # 2048 sequences of 16 tokens: the arithmetic sets the time


def test_prefill_is_compute_bound_and_defaults_to_half_the_context() -> None:
    """Prefill FLOPs: b·(2·P_mul·s_p + 2·L·a·d·s_p²)/t over the peak; s_p = ⌈s/2⌉ unless stated.

    P_mul is the parameters a token multiplies: Llama 3.1 8B's 8,030,261,248 less its 128,256 × 4,096 token
    embeddings, which a token only indexes (its output layer is untied and multiplied).
    """
    s = Scenarios.Llama3_1_8BServeOnH100
    assert s.prompt_tokens == 2048
    p = 8_030_261_248 - 128_256 * 4096
    flops = 32 * (2 * p * 2048 + 2 * 32 * 32 * 128 * 2048**2)
    assert s.prefill_flops.m_as("FLOP") == pytest.approx(flops)
    assert s.prefill_time.m_as("s") == pytest.approx(flops / 989e12)
    assert s.variant(prompt_length=100).prompt_tokens == 100


# -- refusals -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"context_length": 131073}, "context_length", "context window of 131,072"),
        ({"batch_size": 0}, "batch_size", "at least 1"),
        ({"batch_size": 2**17}, "batch_size", "at most 65,536"),
        ({"weight_bytes_per_parameter": 0.1}, "weight_bytes_per_parameter", "at least 0.125 B"),
        ({"weight_bytes_per_parameter": 5}, "weight_bytes_per_parameter", "at most 4"),
        ({"kv_bytes_per_value": 0.2}, "kv_bytes_per_value", "at least 0.25 B"),
        ({"tensor_parallel": 3}, "tensor_parallel", "must divide the 32 attention heads"),
        ({"prompt_length": 4097}, "prompt_length", "at most context_length"),
        ({"runtime_reserve": 0.95}, "runtime_reserve", "at most 0.9"),
        ({"block_size": 0}, "block_size", "at least 1"),
    ],
)
def test_a_bad_field_is_refused_by_name(changes: dict[str, object], field: str, rule: str) -> None:
    """Each refusal names the field and the rule."""
    with pytest.raises(FieldError, match=rule) as err:
        Scenarios.Llama3_1_8BServeOnH100.variant(**changes)
    assert err.value.field == field


def test_kv_heads_that_t_neither_divides_nor_is_a_multiple_of_are_refused() -> None:
    """12 heads, 4 KV heads: t = 6 divides the heads but neither divides 4 nor is a multiple of it."""
    w = Workload(name="toy", parameters=10**8, layers=4, hidden_dim=768, heads=12, kv_heads=4, context_length=2048)
    with pytest.raises(FieldError, match="4 key/value heads") as err:
        _serve(w, tensor_parallel=6, context_length=1024)
    assert err.value.field == "tensor_parallel"
    assert _serve(w, tensor_parallel=12, context_length=1024).kv_head_replicas == 3


def test_a_workload_without_attention_shape_is_refused_with_what_it_needs() -> None:
    """A workload with no heads cannot size a KV cache: the refusal says what it needs."""
    with pytest.raises(FieldError, match="needs the attention shape") as err:
        _serve(Workloads.HYPOTHETICAL_8B)
    assert err.value.field == "workload"


def test_a_shorter_context_window_is_blamed_on_the_new_workload() -> None:
    """Swapping in OPT-13B (2048 tokens) under a 4096-token context blames the workload."""
    with pytest.raises(FieldError, match="context window") as err:
        Scenarios.Llama3_1_8BServeOnH100.variant(workload=opt_13b())
    assert err.value.field == "workload"


def test_latent_attention_caches_its_latent() -> None:
    """DeepSeek-V3 served: 61 layers × (512 + 64) values × 2 B = 70,272 B per token, whole on each of 8 devices."""
    from mlsysim_nb import Hardware, Workloads

    s = InferenceMemoryScenario(workload=Workloads.configuration("deepseek-v3"), hardware=Hardware.H200)
    assert s.kv_cache_per_token.m_as("B") == 61 * (512 + 64) * 2 == 70_272
    assert s.variant(tensor_parallel=8).kv_cache_per_token.m_as("B") == 70_272


def test_a_device_without_peak_flops_gives_no_speed() -> None:
    """The memory figures stand; the decode time says it needs the device's peak FLOPS."""
    from mlsysim_nb.records.hardware import HardwareNode, Memory

    bare = HardwareNode(name="bare", memory=Memory(Hardware.H100.memory.capacity, Hardware.H100.memory.bandwidth))
    s = Scenarios.Llama3_1_8BServeOnH100.variant(hardware=bare)
    assert s.fits
    with pytest.raises(NotApplicableError, match="peak_flops"):
        _ = s.decode_time_per_token
    assert "speed not known" in str(s.headline())


# -- views ----------------------------------------------------------------------------------------------------------


def test_every_case_renders_with_its_chart_and_verdict() -> None:
    """HTML with the chart, text and Markdown for each serving case; the verdict answers fit, how many, how fast."""
    for name in Scenarios.names(InferenceMemoryScenario):
        s = Scenarios[name]
        html = s._repr_html_()
        assert "msn-chart" in html
        assert "kv_cache_per_token" in s.to_text()
        assert "max_batch_size" in s.to_markdown().replace("\\_", "_")
        verdict = str(s.headline())
        assert "fits" in verdict
        assert "at most" in verdict
        assert "ms per token" in verdict
        chart = s.memory_chart()
        assert set(chart.bars[0][1]) == {"weights", "KV cache", "block waste", "reserve", "free"}


def test_compare_sweep_and_explore() -> None:
    """compare() lines up the cache; sweep() over batch × context fits as variant() does; explore() drives t."""
    s = Scenarios.Llama3_1_8BServeOnH100
    table = dict(compare(s, s.variant(kv_bytes_per_value=1)).table())
    assert "kv_cache" in table
    batches, contexts = [1, 16, 64, 128, 256], [512, 4096, 16384]
    result = sweep(s, batch_size=batches, context_length=contexts)
    fits = result.fits()
    expected = np.array([[bool(s.variant(batch_size=b, context_length=c).fits) for c in contexts] for b in batches])
    np.testing.assert_array_equal(expected, fits)
    assert fits.any() and not fits.all()
    panel = explore(s)
    panel.set("tensor_parallel", 2)
    assert panel.scenario.tensor_parallel == 2
    assert Q_(64, "KiB") == panel.scenario.kv_cache_per_token


# -- the equations --------------------------------------------------------------------------------------------------

#: FLOP counts: "2 FLOPs per parameter" is a count the formula writes as a number, so these are given in FLOPs
_FLOPS = {"decode_flops_per_step", "prefill_flops"}
_BOOLEAN = {"fits", "memory_bound"}


@pytest.mark.parametrize("name", InferenceMemoryScenario.EQUATIONS.names)
def test_formula_dimensions_are_consistent(name: str) -> None:
    """Each formula on pint quantities of the declared base units gives its declared unit (a FLOP count: a number)."""
    from mlsysim_nb.units import ureg

    formulas, notation = InferenceMemoryScenario.EQUATIONS.formulas, InferenceMemoryScenario.notation()
    flags = {"has_sliding_window": True, "has_experts": True, "prompt_given": False}

    def get(key: str):  # type: ignore[no-untyped-def]
        if key in flags:
            return flags[key]
        if key in formulas and key != name and key not in _FLOPS:
            return formulas[key].evaluate(get)
        base = notation[key].base
        return Q_(3.0, base) if base else 3.0

    declared = notation[name].base
    if name in _FLOPS:  # a count of FLOPs: the formula is a plain number, the notation says it counts FLOP
        assert declared == "FLOP", name
        for case in formulas[name].cases:  # every branch (layers of several kinds, every layer alike)
            value = case.compiled(get)
            assert not hasattr(value, "dimensionality") or value.dimensionless, f"{name}: {value.dimensionality}"
        return
    want = ureg.Unit(declared).dimensionality if declared else ureg.dimensionless.dimensionality
    for case in formulas[name].cases:
        value = case.compiled(get)
        if name in _BOOLEAN:
            assert isinstance(value, bool), name
            continue
        got = value.dimensionality if hasattr(value, "dimensionality") else ureg.dimensionless.dimensionality
        assert want == got, f"{name} ({case.label}): {got} != {want}"


def test_each_formula_lives_in_one_module_by_concern() -> None:
    """The serving equations are the concern modules' lists, each formula in one of them, none twice, in order."""
    from mlsysim_nb.kinds.inference import cache, decode, fit, timing, weights

    modules = {
        "weights": [d.formula.name for d in weights.WEIGHTS],
        "cache": [d.formula.name for d in cache.CACHE],
        "fit": [d.formula.name for d in (*fit.FIT, *fit.STARTUP)],
        "decode": [d.formula.name for d in (*decode.DECODE, *decode.PREFILL)],
        "timing": [d.formula.name for d in timing.TIMING],
    }
    every = [name for names in modules.values() for name in names]
    assert every == list(InferenceMemoryScenario.EQUATIONS.names)
    assert len(every) == len(set(every))
    assert modules["weights"] == ["split_parameters", "kv_heads_per_device", "kv_head_replicas", "kept_weights",
                                  "weights"]  # fmt: skip
    assert {"expert_weights", "lookup_weights"} <= {
        d.formula.name for d in weights.PARTS
    }  # weights, read apart by a step
    assert modules["cache"][0] == "kv_cache_per_token" and "max_batch_size" in modules["fit"]


def test_the_branching_formulas_are_few_and_listed() -> None:
    """Only these serving formulas choose between expressions, each on a flag the scenario sets."""
    formulas = InferenceMemoryScenario.EQUATIONS.formulas
    branching = sorted(n for n, f in formulas.items() if f.is_branching)
    assert branching == [
        "block_waste", "blocks_per_sequence", "chunk_tokens", "decode_allreduce_time", "decode_flops_per_step", "expert_weights",
        "fit_blocks", "kv_cache", "kv_tokens", "lookup_weights", "max_context_length", "prefill_allreduce_time",
        "prefill_flops", "prompt_tokens", "sequence_memory", "serving_link_bandwidth", "vllm_blocks_per_request",
        "weights", "weights_read_per_step",
    ]  # fmt: skip


def test_a_bare_workload_is_assumed_to_have_no_lookup_table() -> None:
    """Llama 3.1 8B given without vocabulary or positions: the step reads all 16.06 GB, and the caveat says why.

    It used to be counted with learned positions, 131,072 × 4,096 = 537 M parameters, so a step read 15.0 GB.
    """
    from mlsysim_nb import Workload

    bare = Workload(name="Llama 3.1 8B", parameters=8_030_261_248, layers=32, hidden_dim=4096, heads=32, kv_heads=8,
                    context_length=131072)  # fmt: skip
    s = Scenarios.Llama3_1_8BServeOnH100.variant(workload=bare)
    assert s.lookup_weights.m_as("B") == 0
    assert s.weights_read_per_step.m_as("B") == s.weights.m_as("B") == 8_030_261_248 * 2
    assert s.multiplied_parameters == 8_030_261_248
    caveat = " ".join(s.caveats())
    assert "does not state its vocabulary (vocab_size) or its position encoding (positions)" in caveat
    assert "does not state its vocabulary" in s._repr_html_()  # the derivation says it too
    # stated learned positions are a lookup table: 131,072 × 4,096 parameters at 2 B left out of the step's read
    learned = s.variant(workload=bare.variant(positions="learned"))
    assert learned.lookup_weights.m_as("B") == 131072 * 4096 * 2
    assert "does not state its position" not in " ".join(learned.caveats())


def test_the_documented_formulas_are_the_code() -> None:
    """The notes write the equations from the kind's table; the docstring says lookup tables are left out of a step."""
    symbols = InferenceMemoryScenario.symbols()
    notes = dict(InferenceMemoryScenario.NOTES)
    for name in ("kv_cache_per_token", "decode_flops_per_step", "experts_touched"):
        formula = InferenceMemoryScenario.EQUATIONS.formula(name)
        written = formula.render(symbols, "text", case=formula.cases[-1])  # a branching one: its common case
        assert f"{symbols[name].text()} = {written}" in notes["Equation"] + notes["Assumptions"]
    assert "M_w,read = M_w − M_lookup" in notes["Equation"]  # the dense step reads all but the lookup tables
    assert "F_step = B · (2 · P_mul + 4 · L · a · d · s_kv) / t" in notes["Equation"]  # P_mul, not P_active
    doc = InferenceMemoryScenario.__doc__ or ""
    assert "read whole each step" not in doc
    assert "read only in the batch's rows" in doc
    # the field table is generated from the knobs: every field, its symbol and its default
    for name, symbol, default in (("weight_bytes_per_parameter", "b_w", "2"), ("block_size", "s_blk", "16"),
                                  ("runtime_reserve", "u_rt", "0.1"), ("prompt_length", "s_p,given", "None")):  # fmt: skip
        entry = doc.split(f"\n{name} : {symbol}\n", 1)[1].split("\n", 1)[0]
        assert f"Default: ``{default}``." in entry
    assert "at least 0.125" in doc  # the narrowest width the scenario accepts, as it refuses below it
    with pytest.raises(FieldError, match=r"at least 0\.125 B"):
        _serve(weight_bytes_per_parameter=0.1)


def test_the_h100_case_says_what_a_step_reads() -> None:
    """The case's description gives the step's read: 16.06 GB less the 128,256 × 4,096 embeddings, and 32 × 4,096 × 128 KiB."""
    s = Scenarios.Llama3_1_8BServeOnH100
    assert round(s.weights_read_per_step.m_as("GB"), 1) == round((8_030_261_248 - 128_256 * 4096) * 2 / 1e9, 1) == 15.0
    assert round(s.weights.m_as("GB"), 1) == 16.1
    assert round(s.kv_cache.m_as("GB"), 1) == round(32 * 4096 * 131_072 / 1e9, 1) == 17.2
    assert "reads 15.0 of the 16.1 GB of weights" in s.description and "17.2 GB of cache" in s.description
