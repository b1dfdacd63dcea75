"""Charts: the pure breakdown, the figure's bars, the embedded image."""

from __future__ import annotations

import pytest

from mlsysim_nb import Scenarios
from mlsysim_nb.render.charts import alt_text, memory_breakdown, png_img


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
    assert pytest.approx(widths) == [6.0, 6.0, 12.0]  # no master copy: no 0 GB segment


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
    assert "this run: 24 GB (weights 6 GB, gradients 6 GB, optimizer state 12 GB)" in alt
    assert "capacity line at 85.9 GB" in alt


def test_zero_parts_are_left_out() -> None:
    """No master copy (FP32 + Adam): no 0 B segment, no "master copy" in the legend or the live chart."""
    from mlsysim_nb.live.explorer import chart_data

    s = Scenarios.Gpt2Fp32AdamOnH100
    assert s.master_weights.m_as("byte") == 0
    ((_, parts),) = memory_breakdown(s).bars
    assert "master copy" not in parts
    fig = s.plot()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["weights", "gradients", "optimizer state"]
    assert "master copy" not in alt_text(memory_breakdown(s))
    assert [p["name"] for p in chart_data(s)["bars"][0]["parts"]] == labels


def test_chart_labels_round_as_the_text_does() -> None:
    """The figure's, the live chart's and the alt text's totals are the derivation's spelling (286.9 GB, not 287)."""
    from mlsysim_nb.live.explorer import chart_data
    from mlsysim_nb.render.numbers import format_bytes

    s = Scenarios.Gpt2XlBatch32Activations
    none = format_bytes(s.activations("none").m_as("byte"))
    assert none == "286.9 GB"
    assert none in s.headline().text
    fig = s.plot()
    totals = [t.get_text().strip() for t in fig.axes[0].texts]
    assert none in totals
    assert format_bytes(s.activations("full").m_as("byte")) in totals
    data = chart_data(s)
    assert data["bars"][0]["total_text"] == none
    assert data["bars"][0]["parts"][1]["text"] == format_bytes(s.score_activations.m_as("byte"))
    assert f"none: {none}" in alt_text(memory_breakdown(s))


def test_dollar_signs_in_names_are_text() -> None:
    """A device named "$x^$" is drawn as those characters, never parsed as mathtext."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from mlsysim_nb import Q_
    from mlsysim_nb.records.hardware import HardwareNode, Memory
    from mlsysim_nb.render.html import scenario_html

    node = HardwareNode(name="$x^$", memory=Memory(Q_(80, "GB"), Q_(1, "TB/s")))
    s = Scenarios.Gpt2Fp32AdamOnH100.variant(hardware=node)
    html = scenario_html(s)
    assert "Exception" not in html
    assert '<img class="msn-chart"' in html
    fig = s.plot()
    FigureCanvasAgg(fig).draw()
    shown = [t for t in fig.axes[0].texts if "x^" in t.get_text()]
    # what the label draws: the characters, not mathtext
    assert [t._preprocess_math(t.get_text()) for t in shown] == [("$x^$: 74.51 GiB = 80 GB", False)]


def test_total_label_clears_the_capacity_line() -> None:
    """Llama 3.1 8B on an H100 fills 85.9 GB of 85.9 GB: the total's label starts at the line, not across it."""
    from mlsysim_nb.render.charts import memory_bar

    s = Scenarios.Llama3_1_8BServeOnH100
    breakdown = memory_breakdown(s)
    fig = memory_bar(breakdown)
    capacity_gb = breakdown.capacity / 1e9
    assert capacity_gb == pytest.approx(85.899, abs=1e-3)  # 80 GiB
    (total,) = [t for t in fig.axes[0].texts if t.get_text().endswith(" GB") and t.get_text().startswith(" ")]
    assert total.get_position()[0] >= capacity_gb
    train = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    near = memory_breakdown(train.variant(batch_size=22, activations=train.activations_at(22)))
    assert sum(near.bars[0][1].values()) / 1e9 == pytest.approx(82.83, abs=0.01)  # 24 GB + 22 x 2.674 GB
    (total,) = [t for t in memory_bar(near).axes[0].texts if t.get_text().startswith(" ")]
    assert total.get_position()[0] == pytest.approx(capacity_gb)  # 3 GB short of the line: past it
    small = memory_breakdown(train.variant(batch_size=8, activations=train.activations_at(8)))
    (total,) = [t for t in memory_bar(small).axes[0].texts if t.get_text().startswith(" ")]
    assert total.get_position()[0] == pytest.approx(45.39, abs=0.01)  # 24 GB + 8 x 2.674 GB: by its bar
