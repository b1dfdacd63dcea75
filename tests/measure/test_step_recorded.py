"""The steps notebook 10 draws without PyTorch: a fresh measurement still gives the recorded timeline."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mlsysim_nb.measure.step_recorded import STEPS, recorded_label, recorded_step

pytestmark = pytest.mark.measure


@pytest.mark.parametrize("name", list(STEPS))
def test_recording_is_still_what_is_measured(measured_steps: Any, name: str) -> None:
    """Measured again: the same peak (within 0.5 %), the same phase, each category at the peak within 0.5 % of it."""
    recorded, fresh = recorded_step(name), measured_steps(**STEPS[name])
    assert fresh.config == recorded.config
    assert fresh.peak == pytest.approx(recorded.peak, rel=0.005)
    assert fresh.peak_phase == recorded.peak_phase
    for category, value in recorded.at_peak.items():
        assert abs(fresh.at_peak[category] - value) <= 0.005 * recorded.peak, category


def test_recorded_steps_are_measured_in_test_step() -> None:
    """The recorded steps are two of the six checked against the model (measured once for both tests)."""
    from tests.measure.test_step import CONFIGS

    defaults = {"model_type": "llama", "dtype": "float32", "attention": "sdpa"}
    given = [{**defaults, **c} for c in CONFIGS.values()]
    assert all(step in given for step in STEPS.values())


def test_recording_is_labelled() -> None:
    """The label names the date and the PyTorch version."""
    assert re.fullmatch(r"recorded on \d{4}-\d\d-\d\d with PyTorch \d+\.\d+\S* on a CPU", recorded_label())
