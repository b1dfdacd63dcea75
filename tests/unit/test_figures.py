"""Figures drawn from the model: their data equals the package's numbers, their artists draw that data."""

from __future__ import annotations

import io
import itertools

import matplotlib as mpl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from mlsysim_nb import Scenarios
from mlsysim_nb.render.figures import (
    bubble_fraction_formula,
    pipeline_schedule,
    pipeline_schedule_for,
    pipeline_timeline,
    step_memory,
    step_memory_figure,
    zero_partition,
    zero_partition_figure,
)


def _png(fig: object) -> bytes:
    """Render on the Agg canvas, as a notebook's inline backend does, with no Software stamp."""
    FigureCanvasAgg(fig)  # type: ignore[arg-type]
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})  # type: ignore[attr-defined]
    return out.getvalue()


def test_agg_backend_and_no_pyplot_state() -> None:
    """Drawing a figure leaves pyplot's figure manager empty: the figures never enter pyplot's state."""
    import matplotlib.pyplot as plt

    assert mpl.get_backend().lower() == "agg"
    before = plt.get_fignums()
    figs = [
        zero_partition_figure(zero_partition(Scenarios.Llama3_8BZero3On8H100)),
        pipeline_timeline(pipeline_schedule(4, 8)),
        step_memory_figure(step_memory(Scenarios.Gpt2MixedPrecisionTwoMicroBatchesOnH100)),
    ]
    assert plt.get_fignums() == before
    for fig in figs:
        assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)  # a white card, readable in dark themes
        assert fig.dpi == 72
        assert _png(fig).startswith(b"\x89PNG")


# -- ZeRO ------------------------------------------------------------------------------------------------


def test_zero_partition_data_is_the_scenarios_per_device_bytes() -> None:
    """Every stage's part equals the scenario's own ``*_per_device`` property at that stage."""
    s = Scenarios.Llama3_8BZero3On8H100
    z = zero_partition(s)
    assert z.data_parallel == 8
    for stage in range(4):
        v = s.variant(zero_stage=stage)
        assert z.per_device[stage] == {
            "weights": pytest.approx(v.weights_per_device.m_as("byte")),
            "gradients": pytest.approx(v.gradients_per_device.m_as("byte")),
            "optimizer state": pytest.approx(v.optimizer_state_per_device.m_as("byte")),
            "master copy": pytest.approx(v.master_weights_per_device.m_as("byte")),
        }
        assert z.state_per_device(stage) == pytest.approx(v.state_per_device.m_as("byte"))
    assert z.capacity == pytest.approx(s.hardware.memory.capacity.m_as("byte"))


def test_zero_stages_shard_what_the_paper_says() -> None:
    """Stage 1 the optimizer state (and master copy), stage 2 also gradients, stage 3 also weights (ZeRO Sec. 5)."""
    z = zero_partition(Scenarios.Llama3_8BZero3On8H100)
    sharded = {stage: {p for p, on in parts.items() if on} for stage, parts in z.sharded.items()}
    assert sharded == {
        0: set(),
        1: {"optimizer state", "master copy"},
        2: {"optimizer state", "master copy", "gradients"},
        3: {"optimizer state", "master copy", "gradients", "weights"},
    }
    # a sharded part is 1/N_d of its replicated size: the 16 bytes per parameter of ZeRO's Figure 1
    for part in z.parts:
        assert z.per_device[3][part] == pytest.approx(z.per_device[0][part] / 8)
    assert z.state_per_device(0) == pytest.approx(16 * 8_030_261_248)  # Llama 3.1 8B from its config.json


def test_zero_figure_bar_heights_are_gb_per_device() -> None:
    """Each stage's panel has one stacked bar per device whose segments are the parts in GB; sharded ones hatched."""
    z = zero_partition(Scenarios.Llama3_8BZero3On8H100)
    fig = zero_partition_figure(z)
    axes = fig.axes
    assert len(axes) == 4
    for stage, ax in enumerate(axes):
        for part in z.parts:
            bars = [p for p in ax.patches if p.get_gid() == f"zero{stage}:{part}"]
            assert len(bars) == 8
            assert {round(b.get_height(), 9) for b in bars} == {round(z.per_device[stage][part] / 1e9, 9)}
            assert all(bool(b.get_hatch()) == z.sharded[stage][part] for b in bars)
        tops = {round(b.get_y() + b.get_height(), 6) for b in ax.patches if b.get_gid().endswith("master copy")}
        assert tops == {round(z.state_per_device(stage) / 1e9, 6)}
        (cap,) = [line for line in ax.lines if line.get_gid() == "capacity"]
        assert z.capacity is not None
        assert cap.get_ydata()[0] == pytest.approx(z.capacity / 1e9)


def test_zero_figure_with_many_devices_draws_a_sample() -> None:
    """With 64 devices the figure draws 7 and the last, labelled 1..7 and 64."""
    s = Scenarios.Gpt3_175BKorthikantiTable3OnA100.variant(data_parallel=64, tensor_parallel=1,
                                                          sequence_parallel=False, pipeline_parallel=1,
                                                          interleave=1)  # fmt: skip
    fig = zero_partition_figure(zero_partition(s))
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["1", "2", "3", "4", "5", "6", "7", "64"]


def test_zero_partition_needs_data_parallel_devices() -> None:
    """One replica has nothing to shard: refused with the reason."""
    with pytest.raises(ValueError, match="at least 2"):
        zero_partition(Scenarios.Gpt3_175BKorthikantiTable3OnA100)


# -- pipeline --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "n", "m"),
    [(2, 2, 1), (4, 4, 1), (4, 8, 1), (8, 64, 1), (4, 8, 2), (4, 12, 3), (8, 16, 3), (8, 64, 3), (8, 24, 2)],
)
def test_bubble_measured_on_the_timeline_is_the_papers_formula(p: int, n: int, m: int) -> None:
    """Narayanan et al. Sec. 2.2: the idle time is (p − 1)/n of the ideal time, divided by m when interleaved."""
    s = pipeline_schedule(p, n, m)
    assert s.bubble_fraction == pytest.approx((p - 1) / (m * n), rel=1e-9)
    assert bubble_fraction_formula(p, n, m) == (p - 1) / (m * n)
    # the same with backward as long as forward: the fraction does not depend on the ratio
    assert pipeline_schedule(p, n, m, backward_time=1.0).bubble_fraction == pytest.approx((p - 1) / (m * n), rel=1e-9)


@pytest.mark.parametrize(("p", "n", "m"), [(4, 8, 1), (8, 64, 1), (4, 8, 2), (8, 64, 3), (8, 16, 2)])
def test_every_pass_runs_once_and_in_order(p: int, n: int, m: int) -> None:
    """Each device runs n·m forwards and n·m backwards, never two at once; each pass follows its input."""
    s = pipeline_schedule(p, n, m)
    ends = {(op.kind, op.micro_batch, op.chunk * p + op.device): op for op in s.ops}
    assert len(ends) == len(s.ops) == 2 * p * n * m
    for d in range(p):
        mine = sorted((op for op in s.ops if op.device == d), key=lambda op: op.start)
        assert all(a.end <= b.start + 1e-12 for a, b in itertools.pairwise(mine))
    last = p * m - 1
    for (kind, mb, vs), op in ends.items():
        if kind == "F" and vs > 0:
            assert op.start >= ends[("F", mb, vs - 1)].end - 1e-12
        if kind == "B":
            dep = ends[("B", mb, vs + 1)] if vs < last else ends[("F", mb, vs)]
            assert op.start >= dep.end - 1e-12


@pytest.mark.parametrize("m", [1, 2, 3])
def test_first_stage_in_flight_is_the_models_micro_batches_in_flight(m: int) -> None:
    """1F1B holds p micro-batches on the first stage; interleaving p·(1 + (p − 1)/(p·m)): the scenario's number."""
    table3 = Scenarios.Gpt3_175BKorthikantiTable3OnA100.variant(interleave=m)
    s = pipeline_schedule_for(table3, micro_batches=64)
    assert (s.stages, s.chunks) == (8, m)
    assert s.peak_in_flight(0) == pytest.approx(float(table3.micro_batches_in_flight))
    assert s.peak_in_flight(0) == pytest.approx(8 if m == 1 else 8 + 7 / m)
    # later stages hold fewer; the first is the device the memory model sizes
    assert all(s.peak_in_flight(d) < s.peak_in_flight(0) for d in range(1, 8))


def test_table3_bubble_is_the_notebooks_figure() -> None:
    """With p = 8, n = 64: 10.9 % with 1F1B, a third of it (3.6 %) with Table 3's m = 3."""
    table3 = Scenarios.Gpt3_175BKorthikantiTable3OnA100
    one_f_one_b = pipeline_schedule_for(table3.variant(interleave=1), 64)
    interleaved = pipeline_schedule_for(table3, 64)
    assert one_f_one_b.bubble_fraction == pytest.approx(7 / 64)
    assert interleaved.bubble_fraction == pytest.approx(7 / 192)


def test_pipeline_refuses_what_the_model_does_not_assume() -> None:
    """Fewer micro-batches than stages, or an interleaved n that p does not divide, are refused."""
    with pytest.raises(ValueError, match="at least the 4 stages"):
        pipeline_schedule(4, 3)
    with pytest.raises(ValueError, match="multiple of the 4 stages"):
        pipeline_schedule(4, 6, 2)


def test_pipeline_timeline_draws_every_pass_where_it_ran() -> None:
    """One box per pass at its start, its width its duration, its row its device; the in-flight peak drawn."""
    s = pipeline_schedule(4, 8, 2)
    fig = pipeline_timeline(s)
    boxes = {p.get_gid(): p for p in fig.axes[0].patches if p.get_gid() and p.get_gid()[0] in "FB"}
    assert len(boxes) == len(s.ops)
    for op in s.ops:
        box = boxes[f"{op.kind}:{op.device}:{op.micro_batch}:{op.chunk}"]
        assert box.get_x() == pytest.approx(op.start)
        assert box.get_width() == pytest.approx(op.end - op.start)
        assert box.get_y() + box.get_height() / 2 == pytest.approx(op.device)
    (peak,) = [line for line in fig.axes[1].lines if line.get_gid() == "peak_in_flight"]
    assert peak.get_ydata()[0] == pytest.approx(5.5)
    assert "18.8%" in fig.axes[0].get_title()


# -- memory over one step --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["Gpt2MixedPrecisionTwoMicroBatchesOnH100", "Gpt2MixedPrecisionAdamOnH100", "Llama3_8BFullFineTuneOnH100",
     "Llama3_8BLoraOnH100"],
)  # fmt: skip
def test_step_peak_is_the_models_training_total(name: str) -> None:
    """State resident throughout plus the activations at the end of the forward pass: ``training_total``."""
    s = getattr(Scenarios, name)
    d = step_memory(s)
    assert d.resident_total == pytest.approx(s.total.m_as("byte"))
    assert d.peak == pytest.approx(s.training_total.m_as("byte"))
    assert d.capacity is not None
    assert (d.peak <= d.capacity) == bool(s.training_fits)
    assert d.peak_time == {label: end for label, _, end in d.phases}["forward"]
    assert d.curve[0] == d.curve[-1] == 0  # the step starts and ends with no activations


def test_step_builds_layer_by_layer_and_frees_in_backward() -> None:
    """L rises of activations/L in the forward pass, L falls in the backward pass."""
    s = Scenarios.Gpt2MixedPrecisionTwoMicroBatchesOnH100
    d = step_memory(s)
    layers, per_layer = s.workload.layers, s.activations.m_as("byte") / s.workload.layers
    steps = [b - a for a, b in itertools.pairwise(d.curve)]
    assert steps[:layers] == pytest.approx([per_layer] * layers)
    assert steps[layers : 2 * layers] == pytest.approx([-per_layer] * layers)


@pytest.mark.parametrize("k", [1, 2, 6, 8, 24, 48])
def test_checkpointed_step_peak_is_the_models_checkpointed_activations(k: int) -> None:
    """The k segment inputs plus one live segment: the scenario's ``checkpointed_activations``, at every divisor."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed.variant(checkpoint_segments=k)
    d = step_memory(s)
    assert d.resident == ()
    assert d.peak == pytest.approx(s.checkpointed_activations.m_as("byte"))
    assert d.curve[-1] == pytest.approx(0, abs=1)
    # the backward pass of the last segment (and of every other) starts with its layers rebuilt
    assert len(d.boundaries) == k - 1


def test_checkpointed_step_refuses_uneven_segments() -> None:
    """The model's ⌊L/k⌋ estimate is not a schedule; the figure draws only k that divide L."""
    with pytest.raises(ValueError, match="divide the 48 layers"):
        step_memory(Scenarios.Gpt2XlBatch32SegmentCheckpointed.variant(checkpoint_segments=28))


def test_step_figure_marks_the_peak_and_stacks_the_state() -> None:
    """The bands are the state's parts in GB, the peak marker sits at the model's total."""
    s = Scenarios.Gpt2MixedPrecisionTwoMicroBatchesOnH100
    d = step_memory(s)
    fig = step_memory_figure(d)
    ax = fig.axes[0]
    (marker,) = [line for line in ax.lines if line.get_gid() == "peak"]
    assert marker.get_ydata()[0] == pytest.approx(s.training_total.m_as("GB"))
    assert marker.get_xdata()[0] == d.peak_time
    bands = [c for c in ax.collections if (c.get_gid() or "").startswith("resident:")]
    assert [c.get_gid() for c in bands] == [f"resident:{label}" for label, _ in d.resident]
    top = max(v[1] for v in bands[-1].get_paths()[0].vertices)
    assert top == pytest.approx(s.total.m_as("GB"))
    (cap,) = [line for line in ax.lines if line.get_gid() == "capacity"]
    assert cap.get_ydata()[0] == pytest.approx(s.hardware.memory.capacity.m_as("GB"))


def test_step_memory_refuses_a_scenario_without_activations() -> None:
    """A state with no activations has no step to draw."""
    with pytest.raises(ValueError, match="activations given"):
        step_memory(Scenarios.Gpt2Fp32AdamOnH100)


def test_step_memory_asks_the_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The figure's door calls the kind's own step_memory(); a kind that draws none refuses, naming its class."""
    s = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    drawn = object()
    monkeypatch.setattr(type(s), "step_memory", lambda self: drawn)
    assert step_memory(s) is drawn
    monkeypatch.undo()
    with pytest.raises(ValueError, match="ParallelTrainingScenario draws no memory over one step"):
        step_memory(Scenarios.Llama3_8BZero3On8H100)


def test_zero_partition_asks_the_kind() -> None:
    """ZeRO's picture is the many-device kind's data; a single-device kind refuses, naming its class."""
    data = zero_partition(Scenarios.Llama3_8BZero3On8H100)
    assert data.parts == ("weights", "gradients", "optimizer state", "master copy")
    with pytest.raises(ValueError, match="TrainingStateFitScenario has no data-parallel devices"):
        zero_partition(Scenarios.Gpt2Fp32AdamOnH100)
