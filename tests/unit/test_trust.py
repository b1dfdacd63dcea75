"""Trust: no silent wrong number, no natural input refused, no verdict that misleads.

One test per way a number could be silently wrong, an input wrongly refused,
an error escape raw, or a headline mislead (the hardware catalog, command line,
escaping and reference differences have their own files).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsysim_nb import (
    Q_,
    FieldError,
    Hardware,
    NotApplicableError,
    Scenarios,
    Workload,
    compare,
    explore,
    sweep,
)
from mlsysim_nb.model.knob import knobs
from tests.strategies import every_kind_scenarios

TRAIN = Scenarios.Gpt2MixedPrecisionAdamOnH100  # GPT-2 XL, 16 B per parameter, batch 32
FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB
LORA = Scenarios.Llama3_8BLoraOnH100  # 6,815,744 adapter parameters, 2 + 4 + 8 B each
SHAPED = Scenarios.Rank16AdaptersOnHypothetical8B


# -- sweeps keep units ------------------------------------------------------------------------
def test_sweep_reads_quantity_arrays_in_their_unit() -> None:
    """Activations of 10 and 20 GB are 10 and 20 GB, not bytes: training totals 34 and 44 GB."""
    result = sweep(FLASH, activations=Q_(np.array([10, 20]), "GB"))
    np.testing.assert_allclose([34.0, 44.0], result["training_total"].m_as("GB"))


def test_sweep_converts_bits_to_bytes() -> None:
    """16 and 32 bits per value are 2 and 4 bytes: 24 and 30 GB of state with an FP32 master and Adam."""
    result = sweep(TRAIN, bytes_per_value=Q_([16, 32], "bit"))
    np.testing.assert_allclose([24.0, 30.0], result["total"].m_as("GB"))


def test_sweep_converts_megabytes() -> None:
    """normalization_per_layer in MB reaches the line items as megabytes (10 MB x 48 layers = 0.48 GB more)."""
    case = Scenarios.Gpt2XlBatch32Activations
    result = sweep(case.variant(normalization_per_layer=None), normalization_per_layer=Q_([0, 10], "MB"))
    extra = np.diff(result["line_items_total"].m_as("GB"))[0]
    assert extra == pytest.approx(0.48)


def test_sweep_refuses_a_wrong_dimension() -> None:
    """Seconds are not bytes, in a sweep as in variant()."""
    with pytest.raises(FieldError, match=r"bytes_per_value: must be in units of \[information\]"):
        sweep(TRAIN, bytes_per_value=Q_([2, 4], "s"))


@pytest.mark.parametrize("name", ["capacity_share", "update_time", "copies"])
def test_fits_refuses_quantities_that_are_not_memory(name: str) -> None:
    """A ratio or a time cannot be held against a capacity in bytes."""
    result = sweep(TRAIN, batch_size=[8, 16])
    with pytest.raises(ValueError, match=f"{name} is not an amount of memory"):
        result.fits(name)


def test_fits_reads_text_and_catalog_keys() -> None:
    """plus="2 GB" is two gigabytes and hardware="H100" is the catalog's H100."""
    result = sweep(FLASH, batch_size=[16, 22, 23])
    by_node = result.training_fits(hardware=Hardware.H100, plus=Q_(2, "GB"))
    assert by_node.tolist() == result.training_fits(hardware="H100", plus="2 GB").tolist()
    assert by_node.tolist() == [True, True, False]  # 24 + 2.674 x 23 + 2 = 87.5 GB > 85.9 GB
    with pytest.raises(TypeError, match="HardwareNode or a catalog key"):
        result.fits(hardware=3)
    with pytest.raises(FieldError, match="plus: cannot read"):
        result.fits(plus="two gigabytes")


def test_grid_names_the_axes() -> None:
    """An unknown axis lists the ones there are."""
    with pytest.raises(KeyError, match="the axes are: 'batch_size'"):
        sweep(TRAIN, batch_size=[1, 2]).grid("nope")


# -- ranges and non-finite results --------------------------------------------------------------
@pytest.mark.parametrize("value", [1e300, 10**400, Q_(10**400, "GB"), float("inf")])
def test_a_value_beyond_the_physical_range_is_refused(value: object) -> None:
    """No infinity in, none out: the message names the field and its range."""
    with pytest.raises(FieldError, match="bytes_per_value: must be"):
        TRAIN.variant(bytes_per_value=value)


def test_the_control_offers_the_range_the_checker_accepts() -> None:
    """One declaration: the batch control's bounds are the checker's."""
    declared = knobs(FLASH)["batch_size"]
    spec = explore(FLASH).specs["batch_size"]
    assert (declared.low, declared.high) == (spec.low, spec.high)
    FLASH.variant(batch_size=int(declared.high), activations=Q_(1, "GB"))
    with pytest.raises(FieldError, match=f"must be at most {int(declared.high):,}"):
        FLASH.variant(batch_size=int(declared.high) + 1)


def test_a_non_finite_result_names_its_equation() -> None:
    """Activations of 1e-320 B make the resident batch limit infinite: not applicable, naming the equation."""
    s = FLASH.variant(activations=Q_(1e-320, "B"))
    with pytest.raises(NotApplicableError, match=r"resident_batch_limit = .* is not finite"):
        _ = s.resident_batch_limit


# -- natural inputs -----------------------------------------------------------------------------
@given(st.integers(1, 10**6), st.sampled_from([("Mparam", 3), ("Gparam", 6)]))
def test_decimal_counts_are_whole_numbers(thousandths: int, unit: tuple[str, int]) -> None:
    """Any count typed with three decimals in Mparam or Gparam is the whole number it means."""
    name, shift = unit
    w = Workload(name="typed", parameters=Q_(thousandths / 1000, name))
    assert thousandths * 10 ** (shift + 3) // 1000 == w.parameters.magnitude


@pytest.mark.parametrize("value", [np.int64(8), np.array(8), np.float64(8.0), Decimal(8)])
def test_numpy_scalars_and_decimals_are_numbers(value: object) -> None:
    """A NumPy scalar, a 0-d array and a Decimal are read as 8."""
    assert FLASH.variant(batch_size=value).batch_size == 8


def test_too_large_adapter_blames_the_field_given() -> None:
    """A width or matrix count that makes the adapters larger than the model names itself."""
    wide_rank = SHAPED.variant(adapter_rank=256)  # 32 x 2 x 256 x 8192 = 134 M parameters
    with pytest.raises(FieldError) as too_wide:
        wide_rank.variant(adapter_in_dim=2**20)  # 17 G parameters, more than the 8 G model
    assert too_wide.value.field == "adapter_in_dim"
    with pytest.raises(FieldError) as too_many:
        SHAPED.variant(adapted_matrices=64, adapter_rank=4096)
    assert too_many.value.field == "adapter_rank"


# -- raw errors no longer escape -----------------------------------------------------------------
def test_arrays_that_do_not_broadcast_are_refused() -> None:
    """Two array fields of shapes 2 and 3 cannot form a grid."""
    with pytest.raises(FieldError, match="must broadcast against each other"):
        TRAIN.variant(bytes_per_value=[2, 4], optimizer_bytes_per_parameter=[8, 4, 2])


def test_an_empty_array_is_refused() -> None:
    """An empty sweep is not a result."""
    with pytest.raises(FieldError, match="empty array"):
        TRAIN.variant(bytes_per_value=[])


def test_a_workload_holds_one_model() -> None:
    """Workload(parameters=[...]) is refused: sweep the scenario instead."""
    with pytest.raises(FieldError, match=r"Workload\.parameters: must be a single number"):
        Workload(name="two", parameters=[1e6, 2e6])


def test_compare_refuses_a_sweep_with_a_reason() -> None:
    """compare() of a scenario holding arrays says why, instead of a truth-value error."""
    with pytest.raises(TypeError, match="holds arrays"):
        compare(TRAIN, TRAIN.variant(batch_size=np.array([8, 16]), activations=Q_([1, 2], "GB")))


@pytest.mark.parametrize(
    ("control", "value"),
    [("batch_size", float("nan")), ("batch_size", "lots"), ("batch_size", None), ("hardware", "H900")],
)
def test_panel_shows_every_rejected_value(control: str, value: object) -> None:
    """NaN, text, None or an unlisted choice: a message in the panel, the last good scenario kept."""
    panel = explore(FLASH)
    before = panel.scenario
    panel.set(control, value)
    assert "was not applied" in panel.error
    assert "was not applied" in panel.status.value
    assert before is panel.scenario


# -- verdicts ---------------------------------------------------------------------------------
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


def test_compare_shows_no_percentage_across_a_sign_change() -> None:
    """-5 -> 7 is ▲ 12, not ▲ 240 %; a boolean reads True / False."""
    state_overflows = Scenarios.Llama3_8BFullFineTuneOnH100
    c = compare(state_overflows, state_overflows.variant(bytes_per_value=1, master_bytes_per_parameter=None,
                                                         optimizer_bytes_per_parameter=2))  # fmt: skip
    rows = dict(c.table())
    first, second = rows["max_resident_batch"]
    assert first[0].startswith("-")
    assert "%" not in second[1]
    assert "True" in {t for t, _ in rows["training_fits"]} or "False" in {t for t, _ in rows["training_fits"]}


def test_adapter_run_shows_what_it_writes_and_moves() -> None:
    """LoRA on Llama 3.1 8B: 6,815,744 x 14 B checkpoint, x 26 B update traffic, at 3.35 TB/s."""
    assert Q_(6_815_744 * 14, "B") == LORA.adapter_checkpoint.to("B")
    assert Q_(6_815_744 * 26, "B") == LORA.adapter_update_traffic.to("B")
    assert LORA.adapter_update_time.m_as("s") == pytest.approx(6_815_744 * 26 / 3.35e12)
    html = LORA.to_html(chart=False)
    assert "What an adapter run saves and moves" in html
    assert LORA.checkpoint > 1000 * LORA.adapter_checkpoint  # the full-model figure stays, labelled


def test_derivation_says_at_which_batch_the_activations_were_stated() -> None:
    """variant(batch_size=...) moves the activations with the batch; the inputs table says at which batch."""
    moved = FLASH.variant(batch_size=64)
    assert moved.activations.m_as("GB") == pytest.approx(2 * 85.5638016)
    assert "saved activations, stated at batch_size = 64" in moved.to_html(chart=False)
    restated = FLASH.variant(batch_size=64, activations=FLASH.activations)
    assert restated.activations == FLASH.activations
    assert moved.name == ""  # the case's title named batch 32; it is dropped, not kept stale


_NON_FINITE = re.compile(r"(?<![\w.])-?(inf|nan|infinity)(?![\w])", re.IGNORECASE)


@settings(max_examples=40, deadline=None)
@given(every_kind_scenarios())
def test_every_number_shown_is_finite(s: Any) -> None:
    """For random valid inputs of every kind, no repr format shows infinity or NaN."""
    for out in (repr(s), s.to_text(), s.to_markdown(), s.to_html(chart=False)):
        assert _NON_FINITE.search(out) is None, _NON_FINITE.search(out)


@pytest.mark.parametrize(
    ("typed", "reason"),
    [("0", "at least 1"), ("-5", "at least 1"), ("9999999", "at most 1,048,576"), ("2.5", "fraction"), ("x", "whole")],
)
def test_a_typed_value_is_checked_not_clamped(typed: str, reason: str) -> None:
    """A value typed in the batch box reaches the model's check: refused with its reason, the box reset."""
    panel = explore(FLASH)
    panel.controls["batch_size"].value = typed  # what the browser sends when the student presses Enter
    assert reason in panel.error
    assert panel.scenario.batch_size == 32
    assert panel.controls["batch_size"].value == "32"


def test_a_typed_whole_number_is_applied() -> None:
    """Typing 21 gives batch 21 (every whole batch is reachable); the panel's title is not left stale."""
    panel = explore(FLASH)
    panel.controls["batch_size"].value = "21"
    assert panel.scenario.batch_size == 21
    assert panel.scenario.name == ""  # the case's title named batch 32: dropped, the title is built from the fields
    assert "at batch 21" in str(panel.scenario.headline())
