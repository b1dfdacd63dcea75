"""Each deliberate difference from mlsysim 0.3.0 listed in the README, asserted against the reference.

Every test checks both sides: what the reference does with the input, and what
mlsysim_nb does instead. Tests named ``test_dN_...`` cover row DN of the README's
section "Differences from mlsysim 0.3.0"; ``test_every_listed_difference_is_tested``
keeps the two in step.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from mlsysim_nb import Q_, FieldError, NotApplicableError, Scenarios, Workload, Workloads
from tests.reference import RQ, ref, ref_scenario, ref_workload

pytestmark = pytest.mark.reference

REF = ref.Scenarios
README = Path(__file__).resolve().parents[2] / "README.md"
TRAIN = "Gpt2Fp32AdamOnH100"  # GPT-2 XL (1.5e9 parameters), FP32 + Adam, H100
FLASH = "Gpt2MixedPrecisionFlashAttentionOnH100"  # batch 32 with activations 85.56 GB
SHAPED = "Rank16AdaptersOnHypothetical8B"  # rank 16, 2 matrices of 4096 x 4096 per layer: 8,388,608 parameters
ACT = "Gpt2XlBatch32Activations"  # GPT-2 XL activations, 48 layers


def test_d1_plain_numbers_are_bytes() -> None:
    """D1: a plain bytes_per_value=2 is 2 bytes; the reference reads it as 2 bits (weights 8x too small)."""
    theirs = type(ref_scenario(Scenarios[TRAIN]))(
        name="plain",
        description="plain",
        workload=ref_workload(Workloads.GPT2_XL),
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
    )
    assert theirs.weights.m_as("byte") == pytest.approx(1.5e9 * 2 / 8)
    ours = Scenarios[TRAIN].variant(bytes_per_value=2, optimizer_bytes_per_parameter=8)
    assert ours.weights.m_as("byte") == 1.5e9 * 2


def test_d2_sizes_must_be_positive() -> None:
    """D2: bytes_per_value = -2 B gives the reference weights of -3 GB; ours refuses, naming the field."""
    assert REF.Gpt2Fp32AdamOnH100.variant(bytes_per_value=RQ(-2, "byte")).weights.m_as("byte") == -3e9
    with pytest.raises(FieldError, match=r"bytes_per_value: must be positive, got -2") as info:
        Scenarios[TRAIN].variant(bytes_per_value=Q_(-2, "byte"))
    assert info.value.field == "bytes_per_value"


def test_d3_counts_start_at_one() -> None:
    """D3: batch_size = 0 is accepted and micro_batch = 0 divides by zero in the reference; ours names the field."""
    assert REF.Gpt2Fp32AdamOnH100.variant(batch_size=0).batch_size == 0
    with pytest.raises(ZeroDivisionError):
        _ = REF.Gpt2XlBatch32Activations.variant(micro_batch=0).per_sequence_activations
    with pytest.raises(FieldError, match=r"batch_size: must be at least 1, got 0"):
        Scenarios[TRAIN].variant(batch_size=0)
    with pytest.raises(FieldError, match=r"micro_batch: must be at least 1, got 0"):
        Scenarios[ACT].variant(micro_batch=0)


def test_d4_parameter_counts_are_whole() -> None:
    """D4: the reference accepts 1.5 parameters; ours refuses a count that is not a whole number."""
    assert ref.models.types.Workload(name="x", architecture="CNN", parameters=RQ(1.5, "param")).parameters.m == 1.5
    with pytest.raises(FieldError, match=r"Workload\.parameters: must be a whole number"):
        Workload(name="x", parameters=1.5)


def test_d4_rounding_is_not_a_fraction() -> None:
    """D4: a count that misses a whole number only by float rounding, like Llama 3.1 8B's 8.03 Gparam, is accepted."""
    theirs = ref.models.types.Workload(name="x", architecture="CNN", parameters=RQ(8.03, "Bparam"))
    assert theirs.parameters.m_as("param") == pytest.approx(8.03e9)
    assert Workload(name="x", parameters=Q_(8.03, "Gparam")).parameters.m_as("param") == 8_030_000_000


def test_d5_more_segments_than_layers_refused() -> None:
    """D5: k > L segments: the reference answers k + L/k = 100.48 and 0 layers per segment; ours refuses."""
    theirs = REF.Gpt2XlBatch32Activations
    assert theirs.workload.layers == 48
    assert theirs.checkpoint_memory_units(100) == pytest.approx(100 + 48 / 100)
    assert theirs.variant(checkpoint_segments=100).segment_layers == 0
    with pytest.raises(FieldError, match=r"checkpoints: must be at most 48, got 100"):
        Scenarios[ACT].checkpoint_memory_units(100)
    with pytest.raises(FieldError, match=r"checkpoint_segments: must be at most 48 \(the model's layers\), got 100"):
        Scenarios[ACT].variant(checkpoint_segments=100)


def _no_shape() -> dict[str, None]:
    return {"adapter_rank": None, "adapted_matrices": None, "adapter_in_dim": None, "adapter_out_dim": None}


def test_d6_adapters_larger_than_the_model_refused() -> None:
    """D6: 10^12 adapter parameters on an 8B model give the reference an adapter fraction of 124.5; ours refuses."""
    theirs = REF.Llama3_8BLoraOnH100.variant(adapter_parameters=10**12, **_no_shape())
    assert theirs.adapter_fraction == pytest.approx(1e12 / 8.03e9)
    with pytest.raises(FieldError, match=r"adapter_parameters: gives 1,000,000,000,000 adapter parameters, more than"):
        Scenarios.Llama3_8BLoraOnH100.variant(adapter_parameters=10**12)


def test_d6_too_many_matrices_blames_adapted_matrices() -> None:
    """D6: an adapter shape too large for the model names the field that was given, here adapted_matrices."""
    assert REF.Rank16AdaptersOnHypothetical8B.variant(adapted_matrices=10**9).adapter_count > 8e9
    with pytest.raises(FieldError) as info:
        Scenarios[SHAPED].variant(adapted_matrices=10**9)
    assert info.value.field == "adapted_matrices"


def test_d7_unknown_variant_field_refused() -> None:
    """D7: variant(microbatch=8) returns the reference's scenario unchanged; ours refuses and lists the fields."""
    theirs = REF.Gpt2Fp32AdamOnH100
    assert theirs.variant(microbatch=8).total == theirs.total
    with pytest.raises(TypeError, match=r"unknown field\(s\) 'microbatch'; valid fields are: workload"):
        Scenarios[TRAIN].variant(microbatch=8)


def test_d8_disagreeing_adapter_count_refused() -> None:
    """D8: adapter_parameters=123 beside a shape of 8,388,608: the reference silently uses 123; ours refuses."""
    theirs = REF.Rank16AdaptersOnHypothetical8B
    assert theirs.adapter_count == 8_388_608
    assert theirs.variant(adapter_parameters=123).adapter_count == 123
    with pytest.raises(FieldError, match=r"adapter_parameters"):
        Scenarios[SHAPED].variant(adapter_parameters=123)


def test_d8_disagreement_names_both_counts() -> None:
    """D8: the refusal names both counts, so the user sees which one is wrong."""
    with pytest.raises(FieldError, match=r"123.*8,?388,?608|8,?388,?608.*123"):
        Scenarios[SHAPED].variant(adapter_parameters=123)


def test_d8_agreeing_adapter_count_accepted() -> None:
    """D8: adapter_parameters equal to the shape's count is accepted, like the reference."""
    assert REF.Rank16AdaptersOnHypothetical8B.variant(adapter_parameters=8_388_608).adapter_count == 8_388_608
    assert Scenarios[SHAPED].variant(adapter_parameters=8_388_608).adapter_count == 8_388_608


def test_d9_activations_without_batch_size() -> None:
    """D9: activations without batch_size: training_total as the reference; activations_at names batch_size."""
    theirs = REF.Gpt2Fp32AdamOnH100.variant(batch_size=None, activations=RQ(10, "GB"))
    assert theirs.training_total.m_as("byte") == pytest.approx(34e9)
    with pytest.raises(TypeError):
        theirs.activations_at(8)
    ours = Scenarios[TRAIN].variant(batch_size=None, activations=Q_(10, "GB"))
    assert ours.training_total.m_as("byte") == pytest.approx(34e9)
    with pytest.raises(NotApplicableError, match="batch_size"):
        ours.activations_at(8)


def test_d9_batch_size_without_activations() -> None:
    """D9: batch_size without activations is accepted, as by the reference; the state is unchanged."""
    assert REF.Gpt2Fp32AdamOnH100.variant(batch_size=8, activations=None).total.m_as("byte") == 24e9
    assert Scenarios[TRAIN].variant(batch_size=8, activations=None).total.m_as("byte") == 24e9


def test_d10_no_infinite_results() -> None:
    """D10: bytes_per_value = 1e300 B gives the reference a total of inf B; ours refuses, naming the field."""
    assert REF.Gpt2Fp32AdamOnH100.variant(bytes_per_value=RQ(1e300, "byte")).total.m == float("inf")
    with pytest.raises(FieldError, match="bytes_per_value"):
        Scenarios[TRAIN].variant(bytes_per_value=Q_(1e300, "byte"))


def test_d11_missing_inputs_name_themselves() -> None:
    """D11: update_time without hardware fails in the reference on a None; ours says it needs hardware."""
    with pytest.raises(AttributeError, match="NoneType"):
        _ = REF.Gpt2Fp32AdamOnH100.variant(hardware=None).update_time
    with pytest.raises(NotApplicableError, match="update_time is not applicable: it needs hardware"):
        _ = Scenarios[TRAIN].variant(hardware=None).update_time


def test_d12_whole_run_verdict() -> None:
    """D12: fits stays the reference's state-only verdict; training_fits also counts the activations."""
    theirs = REF.Gpt2MixedPrecisionFlashAttentionOnH100.variant(batch_size=64, activations=RQ(171.1276032, "GB"))
    assert not hasattr(theirs, "training_fits")
    ours = Scenarios[FLASH].variant(batch_size=64, activations=Q_(171.1276032, "GB"))
    assert ours.fits is theirs.fits is True
    assert ours.training_fits is False


def test_d15_no_infinite_result_from_valid_inputs() -> None:
    """D15: tiny or zero activations give the reference an infinite limit or a ZeroDivisionError; ours refuses."""
    tiny = REF.Gpt2MixedPrecisionFlashAttentionOnH100.variant(activations=RQ(1e-320, "byte"))
    assert float(getattr(tiny.resident_batch_limit, "magnitude", tiny.resident_batch_limit)) == float("inf")
    with pytest.raises(ZeroDivisionError):
        _ = REF.Gpt2MixedPrecisionFlashAttentionOnH100.variant(activations=RQ(0, "byte")).resident_batch_limit
    for activations, reason in ((Q_(1e-320, "byte"), "is not finite"), (Q_(0, "byte"), "divides by zero")):
        ours = Scenarios[FLASH].variant(activations=activations)
        with pytest.raises(NotApplicableError, match=rf"resident_batch_limit .*{reason}"):
            _ = ours.resident_batch_limit


def test_d16_a_changed_case_drops_its_title() -> None:
    """D16: the reference keeps a case's name through variant(); ours drops it and builds the title from the fields."""
    theirs = REF.Gpt2Fp32AdamOnH100.variant(bytes_per_value=RQ(2, "byte"))
    assert theirs.name == REF.Gpt2Fp32AdamOnH100.name
    ours = Scenarios[TRAIN].variant(bytes_per_value=2)
    assert ours.name == ""
    assert ours.title() == "GPT-2 XL (1.5B), 16-bit + Adam on NVIDIA H100"
    assert Scenarios[TRAIN].variant(bytes_per_value=2, name="mine").name == "mine"


@pytest.mark.parametrize(
    ("unit", "count"),
    [
        pytest.param("Kparam", 7e3),
        ("Mparam", 7e6),
        pytest.param("Bparam", 7e9),
        ("Tparam", 7e12),
    ],
)
def test_d13_reference_count_units(unit: str, count: float) -> None:
    """D13: the reference's Kparam, Mparam, Bparam and Tparam mean what they mean there (7 Bparam = 7e9)."""
    assert RQ(7, unit).m_as("param") == count
    assert Q_(7, unit).m_as("param") == count


def test_d14_numpy_integer_accepted() -> None:
    """D14: a NumPy integer batch size is read as the number it holds, as by the reference."""
    assert REF.Gpt2MixedPrecisionFlashAttentionOnH100.variant(batch_size=np.int64(8)).batch_size == 8
    assert Scenarios[FLASH].variant(batch_size=np.int64(8)).batch_size == 8


def test_d14_zero_d_array_and_decimal_accepted() -> None:
    """D14: a 0-d array and a Decimal are numbers; the reference cannot multiply a Decimal, ours reads it."""
    with pytest.raises(TypeError):
        _ = type(ref_scenario(Scenarios[TRAIN]))(
            name="d",
            description="d",
            workload=ref_workload(Workloads.GPT2_XL),
            bytes_per_value=RQ(Decimal(2), "byte"),
            optimizer_bytes_per_parameter=RQ(8, "byte"),
        ).weights
    assert Scenarios[TRAIN].variant(bytes_per_value=Decimal(2)).weights.m_as("byte") == 3e9
    assert Scenarios[FLASH].variant(batch_size=np.array(8)).batch_size == 8


# What stays the same: the figures the differences above sit beside.


def test_adapter_run_keeps_full_model_checkpoint_and_update() -> None:
    """Adapter mode: checkpoint and update_time stay the reference's full-model figures (112.4 GB, 62.3 ms)."""
    theirs, ours = REF.Llama3_8BLoraOnH100, Scenarios.Llama3_8BLoraOnH100
    assert ours.checkpoint.m_as("byte") == theirs.checkpoint.m_as("byte") == 1.1242e11
    assert ours.update_time.m_as("ms") == pytest.approx(theirs.update_time.m_as("ms"), rel=1e-12)


def test_d17_activations_follow_the_batch() -> None:
    """D17: variant(batch_size=64) keeps the reference's 85.56 GB stated at batch 32; ours moves them to 171.1 GB."""
    theirs, ours = REF.Gpt2MixedPrecisionFlashAttentionOnH100, Scenarios[FLASH]
    assert theirs.variant(batch_size=64).activations.m_as("GB") == pytest.approx(85.5638016)
    moved = ours.variant(batch_size=64)
    assert moved.activations.m_as("GB") == pytest.approx(171.1276032)
    assert moved.training_total.m_as("GB") == pytest.approx(24 + 171.1276032)
    # stating them too gives the reference's answer, and the reference's own activations_at agrees with ours
    kept = ours.variant(batch_size=64, activations=ours.activations)
    assert kept.activations.m_as("GB") == pytest.approx(85.5638016)
    assert theirs.activations_at(64).m_as("GB") == pytest.approx(moved.activations.m_as("GB"))


SHARED_DEVICES = [
    ("H100", "H100"),
    ("H100_PCIE", "H100_PCIe"),
    ("A100_80GB", "A100"),
    ("A100_40GB", "A100_40GB"),
    ("H200", "H200"),
    ("B200", "B200"),
    ("T4", "T4"),
    ("MI300X", "MI300X"),
    ("MI325X", "MI325X"),
    ("GAUDI3", "Gaudi3"),
    ("TPU_V4", "TPUv4"),
    ("TPU_V5P", "TPUv5p"),
]


@pytest.mark.parametrize(("ours", "theirs"), SHARED_DEVICES)
def test_shared_devices_have_the_reference_capacity(ours: str, theirs: str) -> None:
    """Binary capacities: every device in both catalogs holds the same memory in both."""
    from mlsysim_nb import Hardware

    assert Hardware[ours].memory.capacity.m_as("byte") == getattr(ref.Hardware.Cloud, theirs).memory.capacity.m_as(
        "byte"
    )


def test_every_listed_difference_is_tested() -> None:
    """Each row D1, D2, ... of the README's differences section has a test here, and no test covers an unlisted row."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Differences from mlsysim 0.3.0", 1)[1].split("\n## ", 1)[0]
    listed = {int(n) for n in re.findall(r"^\| D(\d+) \|", section, flags=re.MULTILINE)}
    tested = {int(m.group(1)) for name in globals() if (m := re.match(r"test_d(\d+)_", name))}
    assert listed == set(range(1, len(listed) + 1))
    assert tested == listed


def test_d18_ffn_multiple_sizes_the_per_token_coefficient() -> None:
    """D18: ffn_multiple = 8: the reference keeps 34 bytes per token (85.56 GB selective); ours is 18 + 4 · 8 = 50."""
    act = "Gpt2XlBatch32Activations"  # GPT-2 XL: L = 48, s = 1024, b = 32, h = 1600
    theirs = getattr(REF, act).variant(ffn_multiple=8)
    ours = Scenarios[act].variant(ffn_multiple=8)
    sbh_l = 48 * 1024 * 32 * 1600
    assert theirs.per_token_bytes_coefficient == 34
    assert theirs.activations("selective").m_as("byte") == pytest.approx(sbh_l * 34, rel=1e-12)
    assert ours.per_token_bytes_coefficient == 50
    assert ours.activations("selective").m_as("byte") == sbh_l * 50
    # at Korthikanti's 4h MLP both give 34
    assert Scenarios[act].per_token_bytes_coefficient == getattr(REF, act).per_token_bytes_coefficient == 34


def test_d19_fused_attention_keeps_its_log_sum_exp() -> None:
    """D19: fused attention is the reference's per-token figure plus the FP32 log-sum-exp, L·4·a·s·b.

    The reference's FlashAttention figure is the per-token activations (85.56 GB for GPT-2 XL at batch 32);
    ours with attention="fused" adds one FP32 log-sum-exp per row and head: 0.157 GB more.
    """
    name = "Gpt2XlBatch32Activations"  # GPT-2 XL: L = 48, s = 1024, b = 32, h = 1600, a = 25
    theirs, ours = getattr(REF, name), Scenarios[name]
    lse = 48 * 4 * 25 * 1024 * 32
    assert theirs.per_token_activations.m_as("byte") == pytest.approx(85_563_801_600, rel=1e-12)
    assert REF.Gpt2MixedPrecisionFlashAttentionOnH100.activations.m_as("byte") == pytest.approx(85_563_801_600)
    fused = ours.variant(attention="fused")
    assert fused.activations("none").m_as("byte") == 85_563_801_600 + lse == 85_721_088_000
    assert fused.activations("none") == fused.activations("selective")  # no scores: nothing left to recompute
    # the default attention is the reference's: every tensor, scores included, and the same per-token figure
    assert ours.attention == "eager"
    assert ours.per_token_activations.m_as("byte") == pytest.approx(theirs.per_token_activations.m_as("byte"))


def test_d20_recompute_overhead_with_segments() -> None:
    """D20: with k = 8 segments of GPT-2 XL's 48 layers the last segment is not rerun: 7/8 of a third, not a third."""
    name = "Gpt2XlBatch32SegmentCheckpointed"  # L = 48, k = 8: segments of 6 layers, the last not checkpointed
    theirs, ours = getattr(REF, name), Scenarios[name]
    assert theirs.checkpoint_segments == ours.checkpoint_segments == 8
    assert theirs.recompute_overhead == pytest.approx(1 / 3, rel=1e-12)
    assert ours.rerun_fraction == 7 * 6 / 48 == 0.875
    assert ours.recompute_overhead == pytest.approx(0.875 / 3, rel=1e-12)  # 29.2 %
    assert ours.recompute_forward_equivalents == pytest.approx(3 + 0.875, rel=1e-12)
    # without segments every layer is its own checkpoint and reruns: the reference's third
    whole = ours.variant(checkpoint_segments=None)
    assert whole.recompute_overhead == pytest.approx(theirs.recompute_overhead, rel=1e-12)
    assert whole.recompute_forward_equivalents == pytest.approx(theirs.recompute_forward_equivalents, rel=1e-12)
    # k that does not divide L: 5 segments of 9 layers, 4 of them rerun (36 of 48 layers)
    assert ours.variant(checkpoint_segments=5).recompute_overhead == pytest.approx(36 / 48 / 3, rel=1e-12)


def test_d21_a_sequence_is_at_most_the_context_window() -> None:
    """D21: GPT-2 XL (1,024 positions) at s = 4,096: the reference answers 34·s·b·h·L = 342.26 GB; ours refuses."""
    theirs = REF.Gpt2XlBatch32Activations.variant(seq_len=4096)
    assert theirs.per_token_activations.m_as("byte") == 34 * 4096 * 32 * 1600 * 48
    rule = r"seq_len: must be at most GPT-2 XL \(1\.5B\)'s context window of 1,024 tokens, got 4,096"
    with pytest.raises(FieldError, match=rule) as info:
        Scenarios[ACT].variant(seq_len=4096)
    assert info.value.field == "seq_len"


def test_d22_a_width_is_at_least_one_bit() -> None:
    """D22: bytes_per_value = 1e-320 B gives the reference weights of 1.5e-311 B; ours refuses below one bit."""
    theirs = REF.Gpt2Fp32AdamOnH100.variant(bytes_per_value=RQ(1e-320, "byte"))
    assert theirs.weights.m_as("byte") == pytest.approx(1.5e9 * 1e-320, rel=1e-3)
    with pytest.raises(FieldError, match=r"bytes_per_value: must be at least 0\.125 B \(one bit") as info:
        Scenarios[TRAIN].variant(bytes_per_value=Q_(1e-320, "B"))
    assert info.value.field == "bytes_per_value"


def test_d23_heads_must_divide_the_width() -> None:
    """D23: 3 heads over a width of 100: the reference answers (34·s·b·h·2 B = 0.2228 GB); ours refuses, naming heads."""
    from tests.reference import _ref_models

    theirs = _ref_models.TransformerWorkload(
        name="w", architecture="Transformer", parameters=RQ(1e9, "param"), layers=2, hidden_dim=100, heads=3,
        context_length=128,
    )  # fmt: skip
    scenario = REF.Gpt2XlBatch32Activations.variant(workload=theirs)
    # the per-token term 34·s·b·h at s = 1024, b = 32, h = 100 and 2 bytes a value
    assert scenario.per_token_activations.m_as("byte") == pytest.approx(34 * 1024 * 32 * 100 * 2)
    with pytest.raises(FieldError, match=r"Workload\.heads: must divide hidden_dim \(100\) evenly"):
        Workload(name="w", parameters=10**9, layers=2, hidden_dim=100, heads=3, context_length=128)
    assert Workload(name="w", parameters=10**9, layers=2, hidden_dim=100, heads=3, head_dim=32).heads == 3
