"""The step's peak figure (render/figures/peak.py): predicted and measured curves, both peaks, the sum."""

from __future__ import annotations

import pytest

from mlsysim_nb.measure.step_recorded import recorded_step
from mlsysim_nb.measure.step_scenario import measured_step_scenario
from mlsysim_nb.render.figures import step_peak_figure
from mlsysim_nb.render.figures.peak import segment_of


@pytest.mark.parametrize(
    ("phase", "segment"),
    [
        ("forward, layer 2", "forward"),
        ("output layer and loss", "forward"),
        ("backward, output layer", "backward"),
        ("backward, layer 1 (micro-batch 2)", "backward 2"),
        ("backward 2", "backward 2"),
        ("optimizer step", "optimizer step"),
    ],
)
def test_segments(phase: str, segment: str) -> None:
    """A predicted or measured phase falls in its segment of the step, micro-batches numbered."""
    assert segment_of(phase) == segment


def test_predicted_and_measured_on_one_chart() -> None:
    """Both curves, both peaks at their values (MB), and the sum as a horizontal line at 21.7 MB."""
    measured = recorded_step("small model")
    timeline = measured_step_scenario(measured.config).step_timeline()
    ax = step_peak_figure(timeline, measured).axes[0]
    gids = {a.get_gid() for a in ax.get_lines()}
    assert {"predicted", "measured", "predicted peak", "measured peak", "sum"} <= gids
    peak = next(a for a in ax.get_lines() if a.get_gid() == "predicted peak")
    assert peak.get_ydata()[0] == pytest.approx(timeline.peak / 1e6)
    measured_peak = next(a for a in ax.get_lines() if a.get_gid() == "measured peak")
    assert measured_peak.get_ydata()[0] == pytest.approx(measured.peak / 1e6)
    line = next(a for a in ax.get_lines() if a.get_gid() == "sum")
    assert line.get_ydata()[0] == pytest.approx(timeline.sum_of_parts / 1e6)
    assert round(timeline.sum_of_parts / 1e6, 1) == 21.7


def test_prediction_alone() -> None:
    """Without a measurement, the predicted curve and the sum are drawn over the predicted phases."""
    timeline = measured_step_scenario(recorded_step("long context").config).step_timeline()
    ax = step_peak_figure(timeline).axes[0]
    assert "measured" not in {a.get_gid() for a in ax.get_lines()}
    assert ax.get_xlim() == (0.0, 3.0)  # forward, backward, optimizer step
