"""The model base's equations as values: built, combined and refused without any global table."""

from __future__ import annotations

import pytest

from mlsysim_nb import ActivationMemoryScenario, ParallelTrainingScenario, Scenarios, TrainingStateFitScenario
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import merge, quantity

_AREA = defined("area", "width * height", "A rectangle's area.", symbol="A", label="area")


def test_equations_evaluate_with_their_constants() -> None:
    """Area = 3 x height with height a constant 4: 12; a missing input is named."""
    toy = Equations("toy", [_AREA], {"height": quantity("y", "", "height")}, constants={"height": 4})
    assert toy.evaluate("area", {"width": 3}) == 12
    assert toy.notation["area"] == quantity("A", "", "area")
    with pytest.raises(KeyError, match="area needs 'width'"):
        toy.evaluate("area", {})


def test_a_constant_without_notation_is_refused() -> None:
    """Every constant needs its row: symbol, base unit, label."""
    with pytest.raises(ValueError, match="no notation row for the constant height"):
        Equations("toy", [_AREA], constants={"height": 4})


def test_a_formula_s_row_is_written_with_it_only() -> None:
    """A formula's notation sits beside it; a second row for it elsewhere is refused."""
    with pytest.raises(ValueError, match="area is written with its formula"):
        Equations("toy", [_AREA], {"area": quantity("S", "", "area")})


def test_two_kinds_defining_one_name_are_refused_when_combined() -> None:
    """Including two equations that define the same name differently is refused, naming it."""
    other = Equations("other", [defined("area", "width * width", symbol="A", label="area")])
    with pytest.raises(ValueError, match="'area'"):
        Equations("both", [], includes=(Equations("toy", [_AREA]), other))


def test_notation_written_two_ways_is_refused() -> None:
    """One name, two symbols: merge() names both sources."""
    with pytest.raises(ValueError, match="in one and"):
        merge([("one", {"area": quantity("A", "", "area")}), ("two", {"area": quantity("S", "", "area")})])


def test_the_many_device_equations_include_the_single_device_ones() -> None:
    """The parallel kind reads the state's weights and the activations' coefficient from the same value."""
    equations = ParallelTrainingScenario.EQUATIONS
    assert equations.formula("weights") is TrainingStateFitScenario.EQUATIONS.formula("weights")
    assert "per_token_bytes_coefficient" in equations
    assert "weights" not in ActivationMemoryScenario.EQUATIONS


def test_a_field_s_symbol_comes_from_its_knob() -> None:
    """b_val is declared by bytes_per_value's knob; the weights' docstring and derivation write it so."""
    assert TrainingStateFitScenario.symbols()["bytes_per_value"].text() == "b_val"
    assert "M_w = P · b_val" in TrainingStateFitScenario.weights.__doc__
    assert "M_w = P · b_val" in Scenarios.Gpt2Fp32AdamOnH100.to_text()
    assert "bytes_per_value : b_val" in TrainingStateFitScenario.__doc__


def test_the_activations_follow_the_batch_from_one_declaration() -> None:
    """A case stated at batch 32 moved to 64 doubles its activations; stating them too keeps them."""
    s = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    assert s.batch_size == 32
    assert s.variant(batch_size=64).activations.m_as("GB") == pytest.approx(2 * s.activations.m_as("GB"), rel=1e-12)
    assert s.variant(batch_size=64, activations=s.activations).activations == s.activations
    assert s.variant(batch_size=64).activations.units == s.activations.units
