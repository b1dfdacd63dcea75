"""Count fields (model/counts.py): whole numbers typed as text or quantities, under the count rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import (
    Q_,
    FieldError,
    Scenarios,
    Workload,
)

T = Scenarios.Gpt2Fp32AdamOnH100


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("8.03 Gparam", 8_030_000_000),
        ("1.5 Bparam", 1_500_000_000),
        ("1500000000", 1_500_000_000),
        ("2e9 count", 2 * 10**9),
    ],
)
def test_count_fields_read_quantity_text(text: str, count: int) -> None:
    """Count text reads like a Quantity, with the same whole-number tolerance ("8.03 Gparam" is 8,030,000,000)."""
    workload = Workload(name="w", parameters=text)
    assert workload.parameters.magnitude == count


def test_count_text_in_a_scenario_field() -> None:
    """A scenario's count field takes text too: batch_size="16" is 16."""
    assert T.variant(batch_size="16").batch_size == 16


@pytest.mark.parametrize(
    ("text", "reason"),
    [("8.03 GB", "must be a plain count, got a quantity in GB"), ("2.5", "fraction"), ("lots", "cannot read")],
)
def test_count_text_follows_the_count_rules(text: str, reason: str) -> None:
    """Count text of the wrong dimension, a fraction or unreadable text is refused as a Quantity would be."""
    with pytest.raises(FieldError, match=reason) as caught:
        T.variant(batch_size=text)
    assert caught.value.field == "batch_size"


@given(st.integers(1, 10**6), st.sampled_from([("Mparam", 3), ("Gparam", 6)]))
def test_decimal_counts_are_whole_numbers(thousandths: int, unit: tuple[str, int]) -> None:
    """Any count typed with three decimals in Mparam or Gparam is the whole number it means."""
    name, shift = unit
    w = Workload(name="typed", parameters=Q_(thousandths / 1000, name))
    assert thousandths * 10 ** (shift + 3) // 1000 == w.parameters.magnitude
