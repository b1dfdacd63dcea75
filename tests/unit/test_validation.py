"""Bad input: an error naming the field and the reason, never a silent wrong number."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import (
    Q_,
    ActivationMemoryScenario,
    FieldError,
    FieldUnitError,
    NotApplicableError,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    Workloads,
)
from mlsysim_nb.model.knob import knobs

T = Scenarios.Gpt2MixedPrecisionAdamOnH100
A = Scenarios.Gpt2XlBatch32SegmentCheckpointed


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"batch_size": 0}, "batch_size", "at least 1"),
        ({"batch_size": -4}, "batch_size", "at least 1"),
        ({"batch_size": 2.5}, "batch_size", "fraction"),
        ({"batch_size": True}, "batch_size", "whole number"),
        ({"bytes_per_value": 0}, "bytes_per_value", "positive"),
        ({"bytes_per_value": -2}, "bytes_per_value", "positive"),
        ({"bytes_per_value": Q_(2, "GB/s")}, "bytes_per_value", "units of"),
        ({"bytes_per_value": Q_(2, "s")}, "bytes_per_value", "[time]"),
        ({"bytes_per_value": "two bytes"}, "bytes_per_value", "cannot read"),
        ({"optimizer_bytes_per_parameter": -8}, "optimizer_bytes_per_parameter", "zero or more"),
        ({"master_bytes_per_parameter": 0}, "master_bytes_per_parameter", "positive"),
        ({"activations": Q_(-1, "GB")}, "activations", "zero or more"),
        ({"activations": Q_(3, "count")}, "activations", "units of"),
        ({"adapter_parameters": -1}, "adapter_parameters", "at least 0"),
        ({"adapter_parameters": 10**12}, "adapter_parameters", "more than the model"),
        ({"adapter_rank": 16}, "adapted_matrices", "required with adapter_rank"),
        ({"adapted_matrices": 2, "adapter_in_dim": 8, "adapter_out_dim": 8}, "adapter_rank", "required when"),
        ({"adapter_in_dim": 8}, "adapter_rank", "required when"),
        (
            {
                "adapter_parameters": 5,
                "adapter_rank": 1,
                "adapted_matrices": 1,
                "adapter_in_dim": 1,
                "adapter_out_dim": 1,
            },
            "adapter_parameters",
            "5 disagrees with the adapter shape, which gives 96",
        ),
        (
            {"adapter_rank": 4096, "adapted_matrices": 8, "adapter_in_dim": 1600, "adapter_out_dim": 1600},
            "adapter_rank",
            "more than the model",
        ),
        ({"workload": "GPT-2"}, "workload", "must be a Workload"),
        ({"hardware": "H100"}, "hardware", "HardwareNode"),
        ({"name": 3}, "name", "string"),
    ],
)
def test_training_bad_input(changes: dict[str, Any], field: str, reason: str) -> None:
    """Each bad training input raises a FieldError naming the field and the reason."""
    with pytest.raises(FieldError, match=reason) as info:
        T.variant(**changes)
    assert field == info.value.field
    assert str(info.value).startswith(f"TrainingStateFitScenario.{field}:")


def test_wrong_dimension_is_also_a_type_error() -> None:
    """A quantity of the wrong dimension is a FieldUnitError, which is a TypeError and a ValueError."""
    with pytest.raises(TypeError):
        T.variant(bytes_per_value=Q_(2, "s"))
    assert issubclass(FieldUnitError, ValueError)


def test_missing_required_field() -> None:
    """A missing field names itself."""
    with pytest.raises(TypeError, match="optimizer_bytes_per_parameter"):
        TrainingStateFitScenario(workload=Workloads.GPT2_XL, bytes_per_value=2)  # type: ignore[call-arg]


def test_adapter_shape_needs_layers() -> None:
    """A rank on a workload without layers is refused."""
    w = Workload(name="flat", parameters=10**9)
    with pytest.raises(FieldError, match="layers"):
        TrainingStateFitScenario(
            workload=w,
            bytes_per_value=2,
            optimizer_bytes_per_parameter=8,
            adapter_rank=4,
            adapted_matrices=1,
            adapter_in_dim=8,
            adapter_out_dim=8,
        )


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"micro_batch": 0}, "micro_batch", "at least 1"),
        ({"micro_batch": -1}, "micro_batch", "at least 1"),
        ({"micro_batch": 1.5}, "micro_batch", "fraction"),
        ({"seq_len": 0}, "seq_len", "at least 1"),
        ({"precision_bytes": 0}, "precision_bytes", "positive"),
        ({"precision_bytes": -2}, "precision_bytes", "positive"),
        ({"precision_bytes": Q_(2, "s")}, "precision_bytes", "units of"),
        ({"ffn_multiple": 0}, "ffn_multiple", "at least 1"),
        ({"ffn_multiple": -4}, "ffn_multiple", "at least 1"),
        ({"normalization_per_layer": Q_(-1, "MB")}, "normalization_per_layer", "zero or more"),
        ({"checkpoint_segments": 0}, "checkpoint_segments", "at least 1"),
        ({"checkpoint_segments": 49}, "checkpoint_segments", r"at most 48 \(the model's layers\)"),
        ({"workload": Workloads.RESNET50}, "workload", "hidden_dim"),
    ],
)
def test_activation_bad_input(changes: dict[str, Any], field: str, reason: str) -> None:
    """Each bad activation input raises a FieldError naming the field and the reason."""
    with pytest.raises(FieldError, match=reason) as info:
        A.variant(**changes)
    assert field == info.value.field


def test_sequence_neither_given_nor_known() -> None:
    """No seq_len and no context_length is an error on seq_len."""
    with pytest.raises(FieldError, match="seq_len: is required"):
        ActivationMemoryScenario(workload=Workloads.HYPOTHETICAL_8B, micro_batch=1)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"parameters": 0}, "parameters"),
        ({"parameters": -5}, "parameters"),
        ({"parameters": 1.5}, "parameters"),
        ({"parameters": Q_(3, "GB")}, "parameters"),
        ({"layers": 0}, "layers"),
        ({"hidden_dim": -1}, "hidden_dim"),
        ({"kv_heads": 64}, "kv_heads"),
        ({"name": ""}, "name"),
    ],
)
def test_workload_bad_input(changes: dict[str, Any], field: str) -> None:
    """Workload fields are validated too."""
    base = {"name": "w", "parameters": 10**9, "layers": 4, "hidden_dim": 64, "heads": 4}
    with pytest.raises(FieldError) as info:
        Workload(**{**base, **changes})
    assert field == info.value.field


def test_method_arguments_validated() -> None:
    """activations_at and checkpoint_write_time check their argument."""
    with pytest.raises(FieldError, match="batch_size: must be at least 1"):
        Scenarios.ResNet50Fp32AdamBatch64.activations_at(0)
    with pytest.raises(FieldUnitError, match="bandwidth"):
        T.checkpoint_write_time(Q_(2, "GB"))
    with pytest.raises(FieldUnitError, match="bandwidth"):
        T.checkpoint_write_time(2e9)
    with pytest.raises(FieldError, match="bandwidth: must be positive"):
        T.checkpoint_write_time(Q_(0, "GB/s"))
    with pytest.raises(NotApplicableError):
        Scenarios.Gpt2Fp32AdamOnH100.activations_at(4)


def test_zero_activations_give_no_batch_limit() -> None:
    """Zero stored activations leave the resident batch unbounded: not applicable, not a crash."""
    s = T.variant(activations=Q_(0, "GB"))
    with pytest.raises(NotApplicableError, match="non-zero"):
        s.resident_batch_limit


# -- a share is a plain number or a percentage, never a size ----------------------------------------------------------
L4 = Scenarios.Llama3_1_8BServeOnL4  # 24 GB of an L4 less a 0.1 reserve: Llama 3.1 8B fits


def _share_fields() -> list[tuple[Any, str]]:
    """Every share field of every kind (found through the registry), with its kind's first case."""
    from mlsysim_nb import kinds

    out = []
    for kind in kinds.all_kinds():
        names = list(kind.cases())
        if not names:
            continue
        base = getattr(Scenarios, names[0])
        out.extend((base, name) for name, declared in knobs(base).items() if declared.kind == "share")
    return out


SHARES = _share_fields()


def test_the_runtime_reserve_is_a_share() -> None:
    """runtime_reserve is declared a share, so the list below is not empty."""
    assert any(name == "runtime_reserve" for _, name in SHARES)


@pytest.mark.parametrize(("base", "field"), SHARES)
@pytest.mark.parametrize("size", [Q_(0.1, "B"), Q_(2, "bit"), "0.1 GB", Q_(3, "s")])
def test_a_share_refuses_a_size(base: Any, field: str, size: Any) -> None:
    """Q_(0.1, "B") or Q_(2, "bit") is not a share (they read as 0.1 and 0.25 before): a FieldUnitError."""
    with pytest.raises(FieldUnitError, match=rf"{field}: must be a share of the whole, like 0\.1 or '10 %'") as info:
        base.variant(**{field: size})
    assert info.value.field == field


@pytest.mark.parametrize(("base", "field"), SHARES)
@pytest.mark.parametrize("share", ["10 %", Q_(10, "percent"), "0.1", " 0.1 ", 0.1, Q_(0.1, "dimensionless"), "1e-1"])
def test_a_share_reads_percent_and_plain_numbers(base: Any, field: str, share: Any) -> None:
    """10 %, Q_(10, "percent"), "0.1" and 0.1 are all the share 0.1."""
    assert base.variant(**{field: share}).inputs()[field] == 0.1


def test_a_share_in_percent_names_its_range() -> None:
    """150 % is refused in the unit it was given: at most 90 % (0.9)."""
    with pytest.raises(FieldError, match=r"runtime_reserve: must be at most 90 %, got 150 %"):
        L4.variant(runtime_reserve="150 %")


def test_the_l4_fit_keeps_its_reserve() -> None:
    """Llama 3.1 8B on an L4 (24 GiB) fits beside a 10 % reserve, 2.577 GB, whichever way 10 % is written."""
    assert L4.fits
    for share in ("10 %", Q_(10, "percent"), "0.1"):
        made = L4.variant(runtime_reserve=share)
        assert made.reserve.m_as("byte") == pytest.approx(0.1 * 24 * 2**30, rel=1e-12)
        assert made.fits


def test_a_share_knob_is_at_most_the_whole() -> None:
    """A share declared above 1, or with a unit, is a declaration error."""
    from mlsysim_nb.model.knob import Knob

    with pytest.raises(ValueError, match="share"):
        Knob(kind="share", label="x", high=2)
    with pytest.raises(ValueError, match="share"):
        Knob(kind="share", label="x", high=0.5, unit="byte")


# -- number text reads as a number: the one text reader --------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "count"), [("1e3", 1000), ("1.5e3", 1500), ("2E2", 200), (" 64 ", 64), ("6.4e1", 64), ("1e3 count", 1000)]
)
def test_count_fields_read_number_text(text: str, count: int) -> None:
    """'1e3' is a thousand (pint read it as 1 times a unit 'e3')."""
    assert T.variant(batch_size=text).batch_size == count


@pytest.mark.parametrize(("text", "got"), [("1e9", "1,000,000,000"), ("1.5e9", "1,500,000,000"), ("8e10", "80,000,")])
def test_number_text_out_of_range_names_the_range(text: str, got: str) -> None:
    """'8e10' is 80 billion, refused with the field's range rather than as an unknown unit 'e10'."""
    with pytest.raises(FieldError, match=rf"batch_size: must be at most 1,048,576, got {got}"):
        T.variant(batch_size=text)


def test_plain_number_text_in_a_byte_field_is_bytes() -> None:
    """bytes_per_value='2' is 2 bytes, as bytes_per_value=2 is."""
    assert T.variant(bytes_per_value="2").weights == T.variant(bytes_per_value=2).weights


@pytest.mark.parametrize("text", ["9**9**9**9 GB", "9**9**9**9", "2**2**2**2**2 B"])
def test_towers_of_powers_stay_refused(text: str) -> None:
    """Text whose arithmetic would never end is refused unread, number or not."""
    with pytest.raises(FieldError, match="a power must raise"):
        T.variant(bytes_per_value=text)


def test_the_text_reader() -> None:
    """read_text gives a number alone as a number and anything else as a quantity; parse_quantity reads '1e9'."""
    from mlsysim_nb.model.text import parse_quantity, read_text

    assert read_text("1e9") == 10**9
    assert type(read_text("1e9")) is int
    assert read_text("2.5") == 2.5
    assert read_text("1e-400") == Decimal("1e-400")  # kept exact, for the checker to refuse
    assert parse_quantity("1e9") == Q_(10**9, "dimensionless")
    assert read_text("80 GiB") == Q_(80, "GiB")


def test_a_numpy_year_is_a_year() -> None:
    """release_year=np.int64(2024) reads as 2024 (NumPy scalars read as the number they hold, README D14)."""
    from mlsysim_nb import HardwareNode, Memory

    node = HardwareNode(name="x", memory=Memory("80 GiB", "3 TB/s"), release_year=np.int64(2024))
    assert node.release_year == 2024
    assert type(node.release_year) is int
    with pytest.raises(FieldError, match=r"release_year: must be a whole number, got the fraction 2024\.5"):
        HardwareNode(name="x", memory=Memory("80 GiB", "3 TB/s"), release_year=np.float64(2024.5))


# -- widths: at least one bit, at most the field's maximum -------------------------------------------------------------
def _width_fields() -> list[tuple[Any, str]]:
    """Every field of every kind whose smallest nonzero amount is one bit."""
    from mlsysim_nb import kinds
    from mlsysim_nb.model.fields import ONE_BIT

    out = []
    for kind in kinds.all_kinds():
        names = list(kind.cases())
        if names:
            base = getattr(Scenarios, names[0])
            out.extend((base, name) for name, declared in knobs(base).items() if declared.least == ONE_BIT)
    return out


WIDTHS = _width_fields()


def test_every_value_width_is_bounded_below() -> None:
    """The value widths of the training, activation, many-device and serving kinds all take the one-bit floor."""
    names = {name for _, name in WIDTHS}
    expected = {"bytes_per_value", "master_bytes_per_parameter", "precision_bytes", "gradient_bytes_per_value"}
    assert expected | {"weight_bytes_per_parameter", "kv_bytes_per_value"} <= names


@pytest.mark.parametrize(("base", "field"), WIDTHS)
@pytest.mark.parametrize("width", [Q_(1e-320, "B"), 1e-320, Q_(1, "bit") / 2, "0.1 B"])
def test_a_width_below_one_bit_is_refused(base: Any, field: str, width: Any) -> None:
    """1e-320 B (shown as '9.99989e-321 B values' before) and half a bit are refused naming the one-bit floor."""
    with pytest.raises(FieldError, match=rf"{field}: must be at least 0\.125 B \(one bit|{field}: must be at least"):
        base.variant(**{field: width})


def test_fp4_and_nvfp4_widths_are_accepted() -> None:
    """FP4 (0.5 B) and NVFP4 (4 bits plus an 8-bit scale per 16 values: 4.5 bits, 0.5625 B) are widths."""
    assert T.variant(bytes_per_value=0.5).weights.m_as("byte") == 1.5e9 * 0.5
    assert L4.variant(weight_bytes_per_parameter=Q_(4.5, "bit")).inputs()["weight_bytes_per_parameter"] == Q_(
        4.5, "bit"
    )


def test_optimizer_state_per_parameter_may_be_a_small_average() -> None:
    """A factored state (4e-4 B per parameter, Adafactor-like) is accepted; 1e-320 B and 1e-7 B are not."""
    assert T.variant(optimizer_bytes_per_parameter=4e-4).optimizer_state.m_as("byte") == pytest.approx(1.5e9 * 4e-4)
    for tiny in (Q_(1e-320, "B"), 1e-7):
        with pytest.raises(FieldError, match=r"optimizer_bytes_per_parameter: must be 0 or at least 1e-06 B"):
            T.variant(optimizer_bytes_per_parameter=tiny)


def test_a_total_has_no_floor() -> None:
    """Saved activations are a total that follows the batch: a fraction of a byte is not refused."""
    assert T.variant(activations=Q_(0.0625, "B")).activations == Q_(0.0625, "B")


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: T.variant(bytes_per_value=[[2, 4], [1, 2]]), "bytes_per_value"),
        (lambda: T.variant(batch_size=__import__("numpy").ones((2, 2))), "batch_size"),
        (lambda: A.variant(attention=[["eager", "fused"], ["fused", "eager"]]), "attention"),
        (lambda: L4.variant(runtime_reserve=Q_(__import__("numpy").full((2, 3), 10.0), "percent")), "runtime_reserve"),
    ],
)
def test_an_array_field_is_one_dimensional(build: Any, field: str) -> None:
    """variant() refuses a 2-D array in any kind, naming the field, as sweep() does."""
    with pytest.raises(FieldError, match=rf"{field}: must be a single value or a 1-D array") as info:
        build()
    assert info.value.field == field


def test_a_list_of_mixed_units_names_the_field() -> None:
    """[1 B, 1 s] is refused naming the field (a raw DimensionalityError before)."""
    with pytest.raises(FieldError, match=r"bytes_per_value: its values must be quantities of one dimension"):
        T.variant(bytes_per_value=[Q_(1, "B"), Q_(1, "s")])
    assert T.variant(bytes_per_value=["2 B", Q_(4, "B")]).weights.m_as("byte").tolist() == [3e9, 6e9]


@pytest.mark.parametrize("share", ["10 %", Q_(10, "percent"), "0.1", 0.1, __import__("numpy").float32(0.1)])
def test_a_dropout_probability_reads_as_a_share(share: Any) -> None:
    """A workload's dropout probability is read as every share is: 10 %, "0.1", a NumPy float."""
    w = Workload(name="w", parameters=10**9, layers=4, hidden_dim=64, heads=4, attention_dropout=share)
    assert w.attention_dropout == pytest.approx(0.1, rel=1e-7)  # float32(0.1) is 0.1 to 7 digits


def test_a_dropout_probability_refuses_a_size() -> None:
    """Q_(0.1, "B") is not a probability."""
    with pytest.raises(FieldUnitError, match=r"hidden_dropout: must be a probability, like 0\.1 or '10 %'"):
        Workload(name="w", parameters=10**9, layers=4, hidden_dim=64, heads=4, hidden_dropout=Q_(0.1, "B"))


def test_a_long_double_beyond_a_float_is_refused_with_its_range() -> None:
    """np.longdouble(10)**4000 in an array is refused naming 1e+4000 (it overflowed a cast with a warning before)."""
    with np.errstate(over="ignore"):
        huge = np.longdouble(10) ** 4000  # infinity where a long double is a double (macOS on ARM)
    rule = r"got 1e\+4000 B" if np.isfinite(huge) else r"finite"
    with pytest.raises(FieldError, match=rf"bytes_per_value: must be .*{rule}"):
        T.variant(bytes_per_value=np.array([huge]))
    assert T.variant(bytes_per_value=np.array([2, 4], dtype=np.longdouble)).bytes_per_value.magnitude.dtype == float


TRAIN = Scenarios.Gpt2MixedPrecisionAdamOnH100  # GPT-2 XL, 16 B per parameter, batch 32


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB


@pytest.mark.parametrize("value", [1e300, 10**400, Q_(10**400, "GB"), float("inf")])
def test_a_value_beyond_the_physical_range_is_refused(value: object) -> None:
    """No infinity in, none out: the message names the field and its range."""
    with pytest.raises(FieldError, match="bytes_per_value: must be"):
        TRAIN.variant(bytes_per_value=value)


def test_a_non_finite_result_names_its_equation() -> None:
    """Activations of 1e-320 B make the resident batch limit infinite: not applicable, naming the equation."""
    s = FLASH.variant(activations=Q_(1e-320, "B"))
    with pytest.raises(NotApplicableError, match=r"resident_batch_limit = .* is not finite"):
        _ = s.resident_batch_limit
