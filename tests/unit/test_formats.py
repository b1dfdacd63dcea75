"""Numeric formats as data (records/formats.py): bits per value, 16-bit layouts, the serving kind's weights, recipes."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import Hardware, Scenarios
from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.inference.model import InferenceMemoryScenario
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.records.formats import (
    kept_parameters,
    kv_format,
    training_recipe,
    weight_bytes,
    weight_format,
    weight_format_keys,
)
from mlsysim_nb.records.workload_catalog import Workloads

# Llama 3.1 70B (its shipped config.json): P = 70,553,706,496; embeddings and output layer 128,256 × 8,192 each;
# 80 layers of two RMSNorm scales of 8,192, and the final norm.
_P70 = 70_553_706_496
_KEPT70 = 2 * 128_256 * 8_192 + 80 * 2 * 8_192 + 8_192
_QUANTISED70 = 80 * (8_192 * (8_192 + 1_024 + 1_024 + 8_192) + 3 * 8_192 * 28_672)


@pytest.mark.parametrize(
    ("key", "bits"),
    [
        ("nvfp4", 4 + 8 / 16),  # 4.5: an FP8 scale per 16 (the FP32 per-tensor scale left out)
        ("mxfp8", 8 + 8 / 32),  # 8.25: an E8M0 scale per 32
        ("mxfp4", 4 + 8 / 32),  # 4.25
        ("int4_awq_g128", 4 + (16 + 4) / 128),  # 4.15625: FP16 scale and 4-bit zero per 128
        ("int4_g128_sym", 4 + 16 / 128),  # 4.125: FP16 scale per 128, no zero point
        ("fp8_e4m3_block128", 8 + 32 / (128 * 128)),  # an FP32 scale per 128 x 128 block
        ("fp8_e4m3_tensor", 8),
        ("int8_tensor", 8),
    ],
)
def test_bits_per_value_are_the_element_plus_its_block_s_scale(key: str, bits: float) -> None:
    """Each format's bits per value, worked by hand from its element, scale and zero-point bits and its block."""
    assert weight_format(key).bits_per_value == bits


def test_every_format_names_its_source_and_its_layout() -> None:
    """Every weight format cites where its numbers and its 16-bit layout come from."""
    for key in weight_format_keys():
        fmt = weight_format(key)
        assert fmt.source
        assert fmt.layout_source
        assert {"embeddings", "output", "norms"} <= fmt.keep, key


def test_every_format_has_a_summary_shorter_than_its_name() -> None:
    """A one-line summary names the weights in a few words: each format's summary, shorter than its full name."""
    for key in weight_format_keys():
        fmt = weight_format(key)
        assert fmt.summary and len(fmt.summary) < len(fmt.name), key
    assert weight_format("fp8_e4m3_block128").summary == "FP8 E4M3 weights in 128×128 blocks"


def test_llama_3_1_70b_at_4_125_bits_everywhere_is_36_38_gb() -> None:
    """Counting every weight at 4.125 bits (INT4 with an FP16 scale per 128 and no zero point): 36.38 GB."""
    workload = Workloads.configuration("llama-3.1-70b")
    assert int(workload.parameters.magnitude) == _P70 == _KEPT70 + _QUANTISED70
    assert round(_P70 * 4.125 / 8 / 1e9, 2) == 36.38
    assert weight_format("int4_g128_sym").bits_per_value == 4.125


def test_llama_3_1_70b_in_vllm_s_awq_layout() -> None:
    """Embeddings, output layer and norms in 16 bits, the rest in AWQ's 4.15625 bits: 39.77 GB, not 36.38 GB.

    The 39.80 GB vLLM reports also holds its rotary cos/sin cache, 131,072 positions × 128 × 2 B = 33.55 MB.
    """
    workload = Workloads.configuration("llama-3.1-70b")
    assert kept_parameters(workload, weight_format("int4_awq_g128").keep) == _KEPT70 == 2_102_665_216
    by_hand = _QUANTISED70 * 4.15625 / 8 + _KEPT70 * 2
    assert weight_bytes(workload, "int4_awq_g128") == by_hand == 39_767_785_472
    assert round((by_hand + 131_072 * 128 * 2) / 1e9, 2) == 39.80
    # the same layout at 4.125 bits (no zero points): 39.50 GB
    assert round(weight_bytes(workload, "int4_g128_sym") / 1e9, 2) == 39.50


def test_gpt_oss_style_layout_keeps_the_attention_in_16_bits() -> None:
    """MXFP4 on the experts only: Mixtral 8x7B's attention stays in 16 bits beside its embeddings and norms."""
    workload = Workloads.configuration("mixtral-8x7b")
    experts_only = kept_parameters(workload, weight_format("mxfp4_experts").keep)
    every_linear = kept_parameters(workload, weight_format("mxfp4").keep)
    attention = 32 * 4_096 * (4_096 + 1_024 + 1_024 + 4_096)  # Q, K, V, output per layer
    assert experts_only - every_linear == attention  # both keep the router, the norms and the embeddings


def test_the_serving_kind_s_weights_follow_the_format() -> None:
    """Llama 3.1 70B on one H100 in AWQ: weights = the format's bytes; on two, the split halves all but the norms."""
    workload = Workloads.configuration("llama-3.1-70b")
    width = weight_format("int4_awq_g128").bytes_per_value
    one = InferenceMemoryScenario(workload=workload, hardware=Hardware.H100, weight_format="int4_awq_g128",
                                  weight_bytes_per_parameter=width)  # fmt: skip
    assert one.weights.m_as("byte") == pytest.approx(39_767_785_472, rel=1e-12)
    two = one.variant(tensor_parallel=2)
    norms = 80 * 2 * 8_192 + 8_192  # replicated, at 2 B
    kv = 80 * 2 * 8_192 * 1_024  # K and V projections: 8 KV heads, split 4 a device
    by_hand = (_QUANTISED70 - kv) * width / 2 + kv * width / 2 + 2 * 128_256 * 8_192 * 2 / 2 + norms * 2
    assert two.weights.m_as("byte") == pytest.approx(by_hand, rel=1e-12)


def test_without_a_format_every_weight_is_at_b_w_as_before() -> None:
    """weight_format None keeps the field's meaning: every one of Llama 3.1 8B's weights at b_w (2 B, then 0.515625 B)."""
    s = Scenarios.Llama3_1_8BServeOnH100
    assert s.weight_format is None
    assert s.weights.m_as("byte") == 8_030_261_248 * 2
    assert s.kept_weights.m_as("byte") == 0
    assert s.variant(weight_bytes_per_parameter=0.515625).weights.m_as("byte") == 8_030_261_248 * 0.515625


def test_the_one_line_summary_names_the_format_with_its_bytes() -> None:
    """DeepSeek-V3 in FP8: the summary and title say the format, not only "1.00024 B"; without one, the width."""
    s = Scenarios.DeepSeekV3ServeOn8H200FP8
    bytes_per_value = (8 + 32 / (128 * 128)) / 8  # an FP32 scale per 128 × 128 block: 1.000244140625 B
    assert weight_format("fp8_e4m3_block128").bytes_per_value == bytes_per_value
    head = "DeepSeek-V3, FP8 E4M3 weights in 128×128 blocks (1.00024 B per quantised weight), on 8 × NVIDIA H200 SXM:"
    assert repr(s).startswith(f"<InferenceMemoryScenario: {head}")
    assert head in s.to_markdown()
    assert s.default_title() == "DeepSeek-V3 served with FP8 E4M3 weights in 128×128 blocks on 8 × NVIDIA H200 SXM"
    gpt = Scenarios.GptOss120BServeOnH100
    assert "gpt-oss 120B, MXFP4 experts (0.53125 B per quantised weight), on 1 × NVIDIA H100:" in repr(gpt)
    plain = Scenarios.Llama3_1_70BInt4ServeOnH100  # 0.515625 B with no format: the width in words, as before
    assert "Llama 3.1 70B, 4-bit weights, on 1 × NVIDIA H100:" in repr(plain)
    awq = plain.variant(weight_format="int4_awq_g128", weight_bytes_per_parameter=(4 * 128 + 16 + 4) / 128 / 8)
    assert "INT4 AWQ weights in groups of 128 (0.519531 B per quantised weight)" in repr(awq)  # 4.15625 bits


def test_a_format_with_another_width_is_refused_by_name() -> None:
    """A format whose width is not b_w is refused, naming weight_bytes_per_parameter and the width it needs."""
    s = Scenarios.Llama3_1_8BServeOnH100
    with pytest.raises(FieldError, match=r"weight_bytes_per_parameter: must be 0.5625 B \(4.5 bits\)"):
        s.variant(weight_format="nvfp4")
    with pytest.raises(FieldError, match=r"weight_format: must be one of"):
        s.variant(weight_format="fp6")


def test_an_fp8_kv_cache_keeps_two_fp32_scales_per_layer() -> None:
    """The FP8 E4M3 cache of vLLM: 1 B a value, and k_scale and v_scale per layer: 80 layers hold 640 B of scales."""
    fp8 = kv_format("fp8_e4m3")
    assert fp8.bytes_per_value == 1
    assert fp8.scale_bytes(80) == 80 * 2 * 4 == 640
    assert kv_format("fp8_e5m2").scale_bytes(80) == 0
    s = Scenarios.Llama3_1_8BServeOnH100.variant(kv_bytes_per_value=fp8.bytes_per_value)
    assert s.kv_cache_per_token.m_as("byte") == 2 * 32 * 8 * 128 * 1


def test_deepseek_v3_s_fp8_recipe_keeps_12_bytes_per_parameter() -> None:
    """FP32 master weights and gradients, BF16 moments: 4 + 4 + 2 + 2 = 12 B, as the training kind's fields."""
    recipe = training_recipe("deepseek_v3_fp8")
    assert recipe.bytes_per_parameter == 12
    fields = recipe.training_fields()
    assert fields == {"bytes_per_value": 4, "optimizer_bytes_per_parameter": 4}
    s = TrainingStateFitScenario(workload=Workloads.LLAMA3_8B, hardware=Hardware.H100, **fields)
    assert s.bytes_per_trained_parameter.m_as("byte") == 12


def test_transformer_engine_mxfp8_keeps_two_mxfp8_copies() -> None:
    """BF16 weights, row- and column-wise MXFP8 copies (2 × 8.25 bits), FP32 gradient, master and moments: 20.0625 B."""
    recipe = training_recipe("te_mxfp8")
    assert recipe.weight_copies == 2 * weight_format("mxfp8").bytes_per_value
    assert recipe.bytes_per_parameter == 2 + 2.0625 + 4 + 4 + 4 + 4
    with pytest.raises(FieldError, match="bytes_per_value holds both at one width"):
        recipe.training_fields()


@pytest.mark.parametrize("lookup", [weight_format, kv_format, training_recipe])
@pytest.mark.parametrize("key", [["nvfp4"], {"a": 1}, None, 5, "\x1b[31mnvfp4"])
def test_a_lookup_refuses_a_key_that_is_no_name_by_name(lookup: Any, key: Any) -> None:
    """A list (unhashable: a raw TypeError from the cache before), None, a number or escapes: formats.<lookup>.key."""
    with pytest.raises(FieldError, match=rf"formats\.{lookup.__name__}\.key: must name a") as info:
        lookup(key)
    assert "\x1b" not in str(info.value)  # the key is shown as Python writes it, escapes and all


def test_a_format_in_capitals_is_refused_with_its_name() -> None:
    """'NVFP4' is not a key; the refusal gives the key it stands for."""
    with pytest.raises(FieldError, match=r"got 'NVFP4' \(names are lower case, without spaces: 'nvfp4'\)"):
        weight_format("NVFP4")
    with pytest.raises(FieldError, match=r"formats\.weight_bytes\.workload: must be a Workload, got NoneType"):
        weight_bytes(None, "nvfp4")


@pytest.mark.parametrize(("layers", "rule"), [(-5, "at least 0"), (2.5, "whole number"), (float("nan"), "finite"),
                                              (None, "is required"), (10**400, "from 0 to 100,000")])  # fmt: skip
def test_fp8_scales_need_a_whole_number_of_layers(layers: Any, rule: str) -> None:
    """-5 layers gave -40 B of scales, 2.5 gave 20 B, NaN gave NaN, 10**400 an OverflowError: refused by name now."""
    with pytest.raises(FieldError, match=rf"KVFormat\.scale_bytes\.attention_layers: .*{rule}"):
        kv_format("fp8_e4m3").scale_bytes(layers)
    assert kv_format("fp8_e4m3").scale_bytes(0) == 0
