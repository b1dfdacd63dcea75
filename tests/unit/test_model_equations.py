"""The model base's equations as values: built, combined and refused without any global table."""

from __future__ import annotations

import pytest

from mlsysim_nb import ActivationMemoryScenario, ParallelTrainingScenario, Scenarios, TrainingStateFitScenario
from mlsysim_nb.formula import Formula
from mlsysim_nb.model.equations import Equations
from mlsysim_nb.model.notation import merge, quantity

_AREA = Formula("area", "width * height", "A rectangle's area.")
_ROWS = {"area": quantity("A", "", "area")}


def test_equations_evaluate_with_their_constants() -> None:
    """Area = 3 x height with height a constant 4: 12; a missing input is named."""
    toy = Equations("toy", [_AREA], {**_ROWS, "height": quantity("y", "", "height")}, constants={"height": 4})
    assert toy.evaluate("area", {"width": 3}) == 12
    with pytest.raises(KeyError, match="area needs 'width'"):
        toy.evaluate("area", {})


def test_a_formula_without_notation_is_refused() -> None:
    """Every formula needs its row: symbol, base unit, label."""
    with pytest.raises(ValueError, match="no notation row for area"):
        Equations("toy", [_AREA], {})


def test_two_kinds_defining_one_name_are_refused_when_combined() -> None:
    """Including two equations that define the same name differently is refused, naming it."""
    other = Equations("other", [Formula("area", "width * width")], _ROWS)
    with pytest.raises(ValueError, match="'area'"):
        Equations("both", [], {}, includes=(Equations("toy", [_AREA], _ROWS), other))


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
