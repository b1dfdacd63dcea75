"""One AdamW step on a small real model: its state, measured from the tensors, equals the model's figures."""

from __future__ import annotations

import pytest

from mlsysim_nb import Q_
from mlsysim_nb.measure import RECIPES, measure_training_state

pytestmark = pytest.mark.measure

# two layers of h=64: 2 x (12·64² + 13·64) = 99,968 parameters in 2 x 12 tensors, by hand
P = 99_968
TENSORS = 24


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_measured_state_equals_the_model_exactly(torch, recipe):
    """Weights, gradients, master copy and AdamW moments: measured bytes == TrainingStateFitScenario's."""
    m = measure_training_state(recipe)
    assert (m.parameters, m.parameter_tensors) == (P, TENSORS)
    modelled = [r for r in m.rows if r.predicted is not None]
    assert [(r.name, r.measured) for r in modelled] == [(r.name, r.predicted.to("byte")) for r in modelled]
    assert m.measured_total == m.scenario.total.to("byte")


@pytest.mark.parametrize(
    ("recipe", "per_parameter"),
    [("fp32", 4 + 4 + 8), ("bf16", 2 + 2 + 4), ("bf16 + fp32 master", 2 + 2 + 4 + 8)],
)
def test_bytes_per_parameter_by_hand(torch, recipe, per_parameter):
    """FP32: 16 B per parameter; BF16 with BF16 moments: 8 B; BF16 + FP32 master and moments: 16 B."""
    m = measure_training_state(recipe)
    assert m.measured_total == Q_(per_parameter * P, "byte")


def test_bf16_moments_follow_the_parameters(torch):
    """PyTorch keeps AdamW's moments in the parameters' dtype: 4 B per BF16 parameter, not Adam's usual 8."""
    m = measure_training_state("bf16")
    assert m.row("optimizer_state").measured == Q_(4 * P, "byte")
    assert m.scenario.optimizer_bytes_per_parameter.to("byte") == Q_(4, "byte")


def test_what_the_model_leaves_out(torch):
    """One 4-byte FP32 step counter per parameter tensor; with a master copy, 4 B per parameter of FP32 gradients, freed."""
    m = measure_training_state("bf16 + fp32 master")
    assert m.row("step_counters").measured == Q_(4 * TENSORS, "byte")
    assert m.row("master_gradients").measured == Q_(4 * P, "byte")
    assert m.row("step_counters").predicted is None
