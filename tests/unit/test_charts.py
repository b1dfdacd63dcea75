"""Charts: the pure breakdown, the figure's bars, the embedded image."""

from __future__ import annotations

import pytest

from mlsysim_nb import Scenarios
from mlsysim_nb.charts import alt_text, memory_breakdown, png_img


def test_training_breakdown_sums_to_training_total() -> None:
    """The run's bar is weights + gradients + optimizer + master + activations."""
    s = Scenarios.Gpt2MixedPrecisionAdamOnH100
    b = memory_breakdown(s)
    ((label, parts),) = b.bars
    assert label == "this run"
    assert s.training_total.m_as("byte") == pytest.approx(sum(parts.values()))
    assert s.hardware.memory.capacity.m_as("byte") == b.capacity


def test_adapter_breakdown_has_full_tuning_bar() -> None:
    """Adapter mode shows the run and the full-tuning state side by side."""
    s = Scenarios.Llama3_8BLoraOnH100
    bars = dict(memory_breakdown(s).bars)
    run, full = bars["this run (adapters)"], bars["full tuning"]
    assert s.training_total.m_as("byte") == pytest.approx(sum(run.values()))
    assert s.full_state.m_as("byte") + s.activations.m_as("byte") == pytest.approx(sum(full.values()))


def test_activation_breakdown_per_strategy() -> None:
    """One bar per strategy plus the segment bar, split into linear and scores."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    bars = dict(memory_breakdown(s).bars)
    assert list(bars) == ["none", "selective", "full", "8 segments"]
    assert s.activations("none").m_as("byte") == pytest.approx(sum(bars["none"].values()))
    assert s.score_activations.m_as("byte") == pytest.approx(bars["none"]["attention scores"])


def test_figure_bar_widths_in_gb() -> None:
    """The drawn bars have the breakdown's widths in GB."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    fig = s.plot()
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert pytest.approx(widths) == [6.0, 6.0, 12.0, 0.0]


def test_plot_into_existing_axes() -> None:
    """plot(ax=...) draws into a student's own axes."""
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert fig is Scenarios.Gpt2XlBatch32Activations.plot(ax=ax)
    assert len(ax.patches) == 4


def test_png_img_has_alt_numbers() -> None:
    """The <img> carries a PNG and an alt text listing the numbers."""
    s = Scenarios.Gpt2Fp32AdamOnH100
    img = png_img(s)
    assert img.startswith('<img class="msn-chart" src="data:image/png;base64,iVBOR')
    alt = alt_text(memory_breakdown(s))
    assert "24.00 GB" in alt
    assert "85.90 GB" in alt
