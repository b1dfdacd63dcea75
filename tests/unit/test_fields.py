"""The number checks every field shares (model/fields.py): huge, odd and textual numbers, one spelling of ranges."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import Q_, FieldError, Scenarios, Workload, sweep
from mlsysim_nb.errors import show_number
from mlsysim_nb.model.knob import knobs

T = Scenarios.Gpt2Fp32AdamOnH100


A = Scenarios.Gpt2XlBatch32SegmentCheckpointed


@pytest.mark.parametrize(
    ("build", "field", "rule"),
    [
        (lambda: T.variant(batch_size=10**400), "batch_size", "must be from 1 to 1,048,576, got 1e+400"),
        (lambda: T.variant(batch_size=-(10**5000)), "batch_size", "must be from 1 to 1,048,576, got -1e+5000"),
        (lambda: T.variant(batch_size=Decimal("1e400")), "batch_size", "from 1 to 1,048,576, got 1e+400"),
        (lambda: T.variant(batch_size=Fraction(10**400, 3)), "batch_size", "from 1 to 1,048,576, got 3.33e+399"),
        (lambda: T.variant(bytes_per_value=10**400), "bytes_per_value", "must be at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value=Q_(10**400, "GB")), "bytes_per_value", "at most 8 B, got 1e+400 GB"),
        (lambda: T.variant(bytes_per_value="1e400 B"), "bytes_per_value", "at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value="10**400 B"), "bytes_per_value", "at most 8 B, got 1e+400 B"),
        (lambda: T.variant(bytes_per_value=-(10**400)), "bytes_per_value", "must be positive, got -1e+400"),
        (lambda: A.variant(precision_bytes=10**400), "precision_bytes", "must be at most 8, got 1e+400"),
        (lambda: Workload(name="w", parameters=10**400), "parameters", "from 1 to 1,000,000,000,000,000, got 1e+400"),
        (lambda: Workload(name="w", parameters=Q_(10**400, "Gparam")), "parameters", "got 1e+400 Gparam"),
        (lambda: sweep(T, batch_size=[1, 10**400]), "batch_size", "from 1 to 1,048,576, got 1e+400"),
        (lambda: sweep(T, bytes_per_value=[1, 10**400]), "bytes_per_value", "at most 8 B, got 1e+400"),
        (lambda: sweep(A, precision_bytes=[2, 10**400]), "precision_bytes", "at most 8, got 1e+400"),
    ],
)
def test_huge_numbers_name_the_field_and_range(build: Any, field: str, rule: str) -> None:
    """10**400 and its kin: a FieldError naming the field and its range, never an OverflowError."""
    with pytest.raises(FieldError) as caught:
        build()
    assert caught.value.field == field
    assert rule in str(caught.value)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: T.variant(batch_size=Decimal("sNaN")), "batch_size"),
        (lambda: T.variant(bytes_per_value=Decimal("sNaN")), "bytes_per_value"),
        (lambda: T.variant(bytes_per_value=Decimal("NaN")), "bytes_per_value"),
        (lambda: A.variant(precision_bytes=Decimal("-sNaN")), "precision_bytes"),
        (lambda: sweep(T, batch_size=[1, Decimal("sNaN")]), "batch_size"),
        (lambda: Workload(name="w", parameters=Decimal("sNaN")), "parameters"),
    ],
)
def test_decimal_nan_is_a_field_error(build: Any, field: str) -> None:
    """Decimal("sNaN") (which float() refuses with a bare ValueError) is refused as not finite, naming the field."""
    with pytest.raises(FieldError, match="must be a finite number") as caught:
        build()
    assert caught.value.field == field


def test_decimal_too_small_for_a_float_is_not_zero() -> None:
    """1e-400 B is not silently 0 B: it is refused as too small to represent."""
    with pytest.raises(FieldError, match="too small to represent"):
        T.variant(bytes_per_value="1e-400 B")


@pytest.mark.parametrize(
    "text", ["10**10**10 B", "1 B**10**400", "(10**999)**999 B", "10⁹⁹⁹⁹⁹⁹⁹⁹⁹ B", "1" * 500 + " B"]
)
def test_text_that_would_take_forever_is_refused_unread(text: str) -> None:
    """Quantity text whose arithmetic would exhaust time or memory is refused at once, naming the field."""
    start = time.perf_counter()
    with pytest.raises(FieldError, match="cannot read") as caught:
        T.variant(bytes_per_value=text)
    assert caught.value.field == "bytes_per_value"
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("text", ["4*3 B", "80GiB", "9 B**1", "3² B", "1.5e3 B/B*B"])
def test_ordinary_quantity_text_is_still_read(text: str) -> None:
    """The guard leaves ordinary quantity text alone: each reads as an amount (refused here only for its size)."""
    with pytest.raises(FieldError, match="at most 8 B"):
        T.variant(bytes_per_value=text)


@pytest.mark.parametrize(
    ("value", "text"),
    [(2**20, "1,048,576"), (1e18, "1,000,000,000,000,000,000"), (2.5, "2.5"), (10**400, "1e+400"), (8, "8")],
)
def test_show_number(value: Any, text: str) -> None:
    """Whole numbers with thousands separators, others to six digits, huge ones without a float."""
    assert show_number(value) == text


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda: T.variant(batch_size=2**21), "must be at most 1,048,576, got 2,097,152"),
        (lambda: T.variant(activations=Q_(2e18, "B")), "must be at most 1,000,000,000,000,000,000 B"),
        (lambda: T.variant(bytes_per_value=Q_(80, "GiB")), "must be at most 8 B, got 85,899,345,920 B"),
        (lambda: sweep(T, batch_size=[1, 2**21]), "must be at most 1,048,576, got 2,097,152"),
    ],
)
def test_range_messages_write_whole_numbers_with_separators(build: Any, text: str) -> None:
    """Every range message spells a whole number one way: 1,048,576, never 1.04858e+06 or 1e+18."""
    with pytest.raises(FieldError) as caught:
        build()
    assert text in str(caught.value)


def test_knob_describe_uses_the_same_spelling() -> None:
    """A field's description of its range uses the messages' spelling."""
    declared = knobs(T)
    assert declared["batch_size"].describe() == "a whole number from 1 to 1,048,576, or None"
    assert declared["activations"].describe().endswith("at most 1,000,000,000,000,000,000 B, or None")


def test_choice_field_names_a_huge_integer_safely() -> None:
    """A choice field given an integer of 5,000 digits (whose repr Python refuses) names it as 1e+4999."""
    from mlsysim_nb.model.fields import check_choice

    with pytest.raises(FieldError, match=r"must be one of 'none', 'full', got 1e\+4999"):
        check_choice("S", "recompute", 10**4999, ("none", "full"))


def test_parse_quantity_is_the_guarded_reader() -> None:
    """parse_quantity reads quantity text and refuses nested powers before evaluating them."""
    from mlsysim_nb.model.fields import parse_quantity

    assert parse_quantity("80 GiB") == Q_(80, "GiB")
    with pytest.raises(ValueError, match="no nested powers"):
        parse_quantity("10**10**10 B")


TRAIN = Scenarios.Gpt2MixedPrecisionAdamOnH100  # GPT-2 XL, 16 B per parameter, batch 32


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB


@pytest.mark.parametrize("value", [np.int64(8), np.array(8), np.float64(8.0), Decimal(8)])
def test_numpy_scalars_and_decimals_are_numbers(value: object) -> None:
    """A NumPy scalar, a 0-d array and a Decimal are read as 8."""
    assert FLASH.variant(batch_size=value).batch_size == 8


def test_arrays_that_do_not_broadcast_are_refused() -> None:
    """Two array fields of shapes 2 and 3 cannot form a grid."""
    with pytest.raises(FieldError, match="must broadcast against each other"):
        TRAIN.variant(bytes_per_value=[2, 4], optimizer_bytes_per_parameter=[8, 4, 2])


def test_an_empty_array_is_refused() -> None:
    """An empty sweep is not a result."""
    with pytest.raises(FieldError, match="empty array"):
        TRAIN.variant(bytes_per_value=[])
