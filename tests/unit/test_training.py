"""TrainingStateFitScenario: hand-worked cases, adapter mode, variant(), units of results."""

from __future__ import annotations

import dataclasses

import pytest

from mlsysim_nb import (
    Q_,
    FieldError,
    Hardware,
    NotApplicableError,
    Scenarios,
    TrainingStateFitScenario,
    Workloads,
    explore,
    ureg,
)


def test_gpt2_fp32_adam_by_hand() -> None:
    """GPT-2 XL, FP32 + Adam: 4 + 4 + 8 = 16 B/parameter, 24 GB, 0.279 of an 80 GiB H100."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    assert Q_(16, "byte") == s.bytes_per_trained_parameter
    assert s.total.m_as("byte") == 24e9
    assert 6e9 == s.weights.m_as("byte") == s.gradients.m_as("byte")
    assert s.optimizer_state.m_as("byte") == 12e9
    assert pytest.approx(s.capacity_share, rel=1e-12) == 24e9 / (80 * 2**30)
    assert round(s.capacity_share, 3) == 0.279
    assert s.fits is True
    assert s.copies == 4.0
    assert s.optimizer_values_per_parameter == 2.0


def test_update_traffic_by_hand() -> None:
    """FP32 Adam: read grad 4, read+write weights 8, read+write two moments 16 = 28 B; at 3.35 TB/s."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    assert Q_(28, "byte") == s.update_bytes_per_parameter
    assert s.update_traffic.units == ureg.GB
    assert pytest.approx(s.update_traffic.magnitude) == 42.0
    assert ureg.ms == s.update_time.units
    assert pytest.approx(s.update_time.magnitude, rel=1e-12) == 42e9 / 3.35e12 * 1e3


def test_mixed_precision_updates_master_copy() -> None:
    """With a master copy the update reads and writes the FP32 master: 2 + 2*4 + 16 = 26 B."""
    s = Scenarios.Gpt2MixedPrecisionAdamOnH100
    assert Q_(26, "byte") == s.update_bytes_per_parameter
    assert s.checkpoint.m_as("byte") == 21e9  # 3 GB weights + 6 GB master + 12 GB Adam


def test_resident_batch_limit_by_hand() -> None:
    """(C - state) / (activations / batch): FlashAttention GPT-2 case."""
    s = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    per_sequence = s.activations.m_as("byte") / 32
    assert (80 * 2**30 - 24e9) / per_sequence == pytest.approx(s.resident_batch_limit, rel=1e-12)
    assert s.max_resident_batch == 23
    assert isinstance(s.max_resident_batch, int)


def test_negative_resident_batch_limit_follows_the_seed() -> None:
    """When the state alone overflows, the limit is negative and not clamped (the seed's equation)."""
    s = Scenarios.Llama3_8BFullFineTuneOnH100
    assert s.resident_batch_limit < 0
    assert s.max_resident_batch == -5


def test_lora_rank16_on_hypothetical_8b_by_hand() -> None:
    """32 layers x 2 matrices x 16 x (4096 + 4096) = 8,388,608 adapters; 16 GB frozen + 134 MB adapter state."""
    s = Scenarios.Rank16AdaptersOnHypothetical8B
    assert s.adapter_count == 32 * 2 * 16 * 8192
    assert s.adapter_state.m_as("byte") == 8_388_608 * 16
    assert s.total.m_as("byte") == 16e9 + 8_388_608 * 16
    assert s.full_state.m_as("byte") == 128e9
    assert s.adapter_reduction_ceiling == 8.0
    assert s.adapter_reduction < s.adapter_reduction_ceiling
    assert s.adapter_kept_share == pytest.approx(1 / s.adapter_reduction)


def test_rank32_doubles_adapter_state() -> None:
    """Adapter state is linear in the rank; the frozen base is unchanged."""
    r16, r32 = Scenarios.Rank16AdaptersOnHypothetical8B, Scenarios.Rank32AdaptersOnHypothetical8B
    assert 2 * r16.adapter_state == r32.adapter_state
    assert r16.weights == r32.weights


def test_adapter_mode_keeps_full_model_gradients_as_seed_says() -> None:
    """In adapter mode `gradients` and `optimizer_state` are still full-model (the seed's definition)."""
    s = Scenarios.Llama3_8BLoraOnH100
    assert s.adapter_mode
    assert s.gradients.m_as("byte") == 8.03e9 * 2
    assert s.total < s.weights + s.gradients


def test_no_hardware_fits_is_false_and_share_not_applicable() -> None:
    """Without hardware, fits is False and capacity_share says what it needs."""
    s = Scenarios.ResNet50Fp32SgdMomentum
    assert s.fits is False
    with pytest.raises(NotApplicableError, match="needs hardware"):
        s.capacity_share
    with pytest.raises(NotApplicableError, match="needs hardware"):
        s.update_time


def test_no_activations_not_applicable() -> None:
    """training_total needs activations and a batch size."""
    with pytest.raises(NotApplicableError, match="needs activations"):
        Scenarios.Gpt2Fp32AdamOnH100.training_total


def test_no_adapters() -> None:
    """Without adapters adapter_count is None, reductions are 1, adapter storage not applicable."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    assert s.adapter_count is None
    assert 1.0 == s.adapter_reduction == s.adapter_kept_share
    assert Q_(0, "byte") == s.adapter_saved
    with pytest.raises(NotApplicableError, match="adapters"):
        s.adapter_weights


def test_activations_at_scales_linearly() -> None:
    """Batch 64 -> 512 is 8x."""
    s = Scenarios.ResNet50Fp32AdamBatch64
    assert Q_(64e9, "byte") == s.activations_at(512)
    assert Scenarios.ResNet50Fp32AdamBatch512.activations == s.activations_at(512)


def test_checkpoint_write_time() -> None:
    """21 GB at 2 GB/s is 10.5 s."""
    t = Scenarios.Gpt2MixedPrecisionAdamOnH100.checkpoint_write_time(Q_(2, "GB/s"))
    assert Q_(10.5, "second") == t


def test_variant_returns_new_validated_object() -> None:
    """variant() leaves the original untouched and revalidates."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    v = s.variant(bytes_per_value=2, master_bytes_per_parameter=4)
    assert Q_(4, "byte") == s.bytes_per_value
    assert Q_(2, "byte") == v.bytes_per_value
    assert v is not s
    assert s == s.variant()
    assert s.variant() is not s


def test_variant_unknown_field_lists_valid_ones() -> None:
    """variant(microbatch=8) is a TypeError listing the valid fields (the reference ignores it)."""
    with pytest.raises(TypeError, match=r"unknown field.*'microbatch'.*valid fields are: workload, hardware"):
        Scenarios.Gpt2Fp32AdamOnH100.variant(microbatch=8)


def test_frozen() -> None:
    """Fields cannot be assigned."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Scenarios.Gpt2Fp32AdamOnH100.batch_size = 3  # type: ignore[misc]


def test_plain_number_is_bytes() -> None:
    """bytes_per_value=2 is 2 bytes (the reference reads it as 2 bits)."""
    s = TrainingStateFitScenario(workload=Workloads.GPT2_XL, bytes_per_value=2, optimizer_bytes_per_parameter=8)
    assert Q_(2, "byte") == s.bytes_per_value
    assert s.weights.m_as("byte") == 3e9


def test_string_quantities_accepted() -> None:
    """A unit string such as '16 bit' is read as a quantity."""
    s = TrainingStateFitScenario(
        workload=Workloads.GPT2_XL, bytes_per_value="16 bit", optimizer_bytes_per_parameter="8 B"
    )
    assert s.bytes_per_value.m_as("byte") == 2


def test_swapping_hardware() -> None:
    """The same state on a B200 fits with more room."""
    s = Scenarios.Llama3_8BFullFineTuneOnH100
    assert not s.fits
    assert s.variant(hardware=Hardware.B200).fits


def test_help_shows_equation() -> None:
    """help() of a property carries its equation from the single source."""
    doc = TrainingStateFitScenario.update_bytes_per_parameter.__doc__
    assert doc is not None
    assert "b_step = b_val + 2 · b_upd + 2 · b_opt" in doc


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB


LORA = Scenarios.Llama3_8BLoraOnH100  # 6,815,744 adapter parameters, 2 + 4 + 8 B each


SHAPED = Scenarios.Rank16AdaptersOnHypothetical8B


def test_too_large_adapter_blames_the_field_given() -> None:
    """A width or matrix count that makes the adapters larger than the model names itself."""
    wide_rank = SHAPED.variant(adapter_rank=256)  # 32 x 2 x 256 x 8192 = 134 M parameters
    with pytest.raises(FieldError) as too_wide:
        wide_rank.variant(adapter_in_dim=2**20)  # 17 G parameters, more than the 8 G model
    assert too_wide.value.field == "adapter_in_dim"
    with pytest.raises(FieldError) as too_many:
        SHAPED.variant(adapted_matrices=64, adapter_rank=4096)
    assert too_many.value.field == "adapter_rank"


def test_a_run_that_overflows_is_not_called_a_fit() -> None:
    """At batch 64 the state fits (24 GB) but the run (195.1 GB) does not; every headline says so."""
    s = FLASH.variant(batch_size=64)
    assert s.fits is True
    assert s.training_fits is False
    assert "the state fits; the run does not" in repr(s)
    assert '<span class="msn-nofit">the state fits; the run does not</span>' in s.to_html(chart=False)
    assert s.memory_chart().caption == "the state fits; the run does not"
    panel = explore(FLASH)
    panel.set("batch_size", 64)
    assert "the run does not" in panel.chart.caption
    assert panel.chart.ok is False


def test_adapter_run_shows_what_it_writes_and_moves() -> None:
    """LoRA on Llama 3.1 8B: 6,815,744 x 14 B checkpoint, x 26 B update traffic, at 3.35 TB/s."""
    assert Q_(6_815_744 * 14, "B") == LORA.adapter_checkpoint.to("B")
    assert Q_(6_815_744 * 26, "B") == LORA.adapter_update_traffic.to("B")
    assert LORA.adapter_update_time.m_as("s") == pytest.approx(6_815_744 * 26 / 3.35e12)
    html = LORA.to_html(chart=False)
    assert "What an adapter run saves and moves" in html
    assert LORA.checkpoint > 1000 * LORA.adapter_checkpoint  # the full-model figure stays, labelled


def test_fine_tuning_the_2025_models_on_one_h100() -> None:
    """Qwen3 8B in full (16 B a parameter: 131 GB) overflows an H100; rank-16 LoRA fits in 24 GB; so does gpt-oss 20B.

    Activations, one 8,192-token sequence, full recomputation, 16 bits: 36 layer inputs s·h·2 (2,415,919,104 B), the
    final norm's and output layer's inputs 2·s·h·2 (134,217,728 B) and the FP32 logits 4·s·v (4,978,638,848 B). LoRA:
    36 layers × 16 × ((4096 + 4096) + (4096 + 1024)) = 7,667,712 adapter parameters at 16 bytes beside the frozen
    16-bit base. gpt-oss 20B: 24 × 16 × ((2880 + 4096) + (2880 + 512)) = 3,981,312 adapters; activations
    24·8192·2880·2 + 2·2·8192·2880 + 4·8192·201,088 B.
    """
    from mlsysim_nb import Scenarios

    full, lora, oss = Scenarios.Qwen3_8BFullFineTuneOnH100, Scenarios.Qwen3_8BLoraOnH100, Scenarios.GptOss20BLoraOnH100
    p, s, h, v = 8_190_735_360, 8192, 4096, 151_936
    acts = 36 * s * h * 2 + 2 * s * h * 2 + 4 * s * v
    assert acts == 7_528_775_680
    assert full.training_total.to("byte").magnitude == pytest.approx(16 * p + acts, rel=1e-12)
    assert not full.fits
    adapters = 36 * 16 * ((4096 + 4096) + (4096 + 1024))
    assert adapters == 7_667_712
    assert lora.training_total.to("byte").magnitude == pytest.approx(2 * p + 16 * adapters + acts, rel=1e-12)
    assert lora.fits
    oss_acts = 24 * s * 2880 * 2 + 2 * s * 2880 * 2 + 4 * s * 201_088
    oss_total = 2 * 20_914_757_184 + 16 * 24 * 16 * ((2880 + 4096) + (2880 + 512)) + oss_acts
    assert oss.training_total.to("byte").magnitude == pytest.approx(oss_total, rel=1e-12) == 49_709_300_864
    assert oss.fits


def test_gemma3_27b_lora_fits_one_h100() -> None:
    """Gemma 3 27B, rank-16 LoRA, one 8,192-token sequence: 54.02 GB frozen + 0.27 GB adapters + 14.23 GB = 68.52 GB.

    Adapters: 62 × 16 × ((5376 + 4096) + (5376 + 2048)) = 16,760,832 at 16 B. Activations: 62 layer inputs
    62·8192·5376·2, the final norm's and output layer's inputs 2·8192·5376·2, the FP32 logits 4·8192·262,208.
    """
    from mlsysim_nb import Scenarios

    s = Scenarios.Gemma3_27BLoraOnH100
    adapters = 62 * 16 * ((5376 + 4096) + (5376 + 2048))
    acts = 62 * 8192 * 5376 * 2 + 2 * 8192 * 5376 * 2 + 4 * 8192 * 262_208
    total = 2 * 27_009_346_304 + 16 * adapters + acts
    assert (adapters, acts, total) == (16_760_832, 14_229_176_320, 68_516_042_240)
    assert s.training_total.to("byte").magnitude == pytest.approx(total, rel=1e-12)
    assert s.fits
