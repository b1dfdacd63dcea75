"""Live controls in plain pytest (no kernel): values re-bind through variant(), errors keep the last good state."""

from __future__ import annotations

import dataclasses
import timeit

import pytest

from mlsysim_nb import (
    Q_,
    FieldError,
    Hardware,
    Scenarios,
    compare,
    explore,
)
from mlsysim_nb.live.explorer import MemoryBarWidget, ScenarioExplorer, chart_data
from mlsysim_nb.model.controls import controls_for
from mlsysim_nb.model.knob import knobs
from mlsysim_nb.render.numbers import format_bytes


@pytest.fixture
def panel() -> ScenarioExplorer:
    """A panel on the FlashAttention GPT-2 case (batch and activations set)."""
    return explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100)


def test_batch_control_rebinds_through_variant(panel: ScenarioExplorer) -> None:
    """Moving batch_size gives old.variant(batch_size=b, activations=old.activations_at(b))."""
    old = panel.scenario
    html, bars = panel.derivation.value, panel.chart.bars
    panel.set("batch_size", 8)
    expected = old.variant(batch_size=8, activations=old.activations_at(8))
    assert expected == panel.scenario
    assert panel.derivation.value != html
    assert panel.chart.bars != bars
    assert panel.recomputes == 1


def test_hardware_dropdown(panel: ScenarioExplorer) -> None:
    """Choosing another accelerator swaps hardware; the fit verdict follows the model."""
    panel.set("hardware", "T4")
    assert panel.scenario.hardware == Hardware.T4
    assert panel.scenario.fits is False
    assert "does not fit" in panel.derivation.value
    assert pytest.approx(Q_(16, "GiB").to("GB").magnitude) == panel.chart.capacity  # 17.18 GB


def test_one_change_one_recompute(panel: ScenarioExplorer) -> None:
    """Each accepted change recomputes exactly once; setting the same value does nothing."""
    panel.set("batch_size", 4)
    panel.set("batch_size", 4)
    panel.set("bytes_per_value", 4.0)
    assert panel.recomputes == 2


def test_rejected_value_keeps_last_good_state(panel: ScenarioExplorer) -> None:
    """A value variant() rejects shows its message; the scenario and the picture stay."""
    panel.set("adapter_mode", True)
    panel.set("workload", "RESNET50")
    good, html, bars = panel.scenario, panel.derivation.value, panel.chart.bars
    panel.set("adapter_rank", 256)  # 50 layers x 2 x 256 x 3200 = 81.9M > ResNet-50's 25.6M parameters
    assert good is panel.scenario
    assert html == panel.derivation.value
    assert bars == panel.chart.bars
    assert "more than the model" in panel.error
    assert "more than the model" in panel.status.value
    panel.set("adapter_rank", 8)
    assert panel.error == ""
    assert panel.scenario.adapter_rank == 8


def test_adapter_toggle_and_rank(panel: ScenarioExplorer) -> None:
    """Adapters on: rank-16 on both 1600-wide matrices; rank changes the adapter state linearly."""
    panel.set("adapter_mode", True)
    s = panel.scenario
    assert (s.adapter_rank, s.adapted_matrices, s.adapter_in_dim, s.adapter_out_dim) == (16, 2, 1600, 1600)
    panel.set("adapter_rank", 32)
    assert 2 * s.adapter_state == panel.scenario.adapter_state
    panel.set("adapter_mode", False)
    assert panel.scenario.adapter_mode is False
    assert panel.controls["adapter_rank"].disabled


def test_stated_adapters_switch_to_shape() -> None:
    """Moving the rank on a stated-count LoRA case replaces the count with a shape."""
    p = explore(Scenarios.Llama3_8BLoraOnH100)
    p.set("adapter_rank", 8)
    assert p.scenario.adapter_parameters is None
    assert p.scenario.adapter_count == 32 * 2 * 8 * 8192


def test_activation_panel() -> None:
    """Micro-batch, sequence, segments and the strategy selector."""
    p = explore(Scenarios.Gpt2XlBatch32Activations)
    p.set("seq_len", 512)  # at most GPT-2 XL's context of 1,024 tokens
    assert p.scenario.sequence == 512
    p.set("checkpoint_segments", 6)
    assert p.scenario.checkpoint_segments == 6
    assert p.chart.bars[-1]["label"] == "6 segments"
    n = p.recomputes
    p.set("strategy", "selective")
    assert p.chart.highlight == "selective"
    assert n == p.recomputes
    p.set("checkpoint_segments", 0)
    assert p.scenario.checkpoint_segments is None
    p.set("workload", "LLAMA3_8B")
    assert p.controls["checkpoint_segments"].max == 32


def test_controls_come_from_field_declarations() -> None:
    """Ranges come from knob() metadata next to the fields."""
    specs = {s.name: s for s in controls_for(Scenarios.Gpt2XlBatch32Activations)}
    assert (specs["micro_batch"].low, specs["micro_batch"].high) == (1, 2**20)
    assert specs["micro_batch"].kind == "log"
    training = {s.name: s for s in controls_for(Scenarios.Gpt2Fp32AdamOnH100)}
    assert {4.0, 2.0, 1.0} <= {v for _, v in training["bytes_per_value"].options}
    assert {8.0, 4.0, 2.0, 0.0} == {v for _, v in training["optimizer_bytes_per_parameter"].options}
    assert len(Hardware) + 1 == len(training["hardware"].options)


def test_user_hardware_appears_in_dropdown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An accelerator added to the catalog is offered by the hardware dropdown."""
    path = tmp_path / "lab.toml"
    path.write_text(
        '[LAB_GPU]\nname = "Lab GPU"\nmemory_capacity = "48 GB"\nmemory_bandwidth = "1 TB/s"\n'
        'source = "https://example.org/lab"\n',
        encoding="utf-8",
    )
    Hardware.add_file(path)
    try:
        p = explore(Scenarios.Gpt2Fp32AdamOnH100)
        assert ("Lab GPU (48 GB)", "LAB_GPU") in p.controls["hardware"].options
        p.set("hardware", "LAB_GPU")
        assert Q_(48, "GB") == p.scenario.hardware.memory.capacity
    finally:
        Hardware._load().pop("LAB_GPU")


def test_chart_data_matches_model() -> None:
    """The live chart's numbers are the model's, in GB."""
    s = Scenarios.Gpt2MixedPrecisionAdamOnH100
    data = chart_data(s)
    assert s.training_total.m_as("GB") == pytest.approx(data["bars"][0]["total_gb"])
    assert s.hardware.memory.capacity.m_as("GB") == pytest.approx(data["capacity"])


def test_anywidget_files_are_real() -> None:
    """_esm and _css are files in the package."""
    from mlsysim_nb.live.explorer import STATIC

    assert (STATIC / "memory_bar.js").read_text().strip().endswith("export default { render };")
    assert MemoryBarWidget()._css.strip().startswith("/*")


def test_reprs_are_deterministic(panel: ScenarioExplorer) -> None:
    """Fixed reprs (no memory addresses) for nbval."""
    assert "0x" not in repr(panel)
    assert repr(panel).startswith("ScenarioExplorer(TrainingStateFitScenario: ")
    assert repr(panel.chart) == "MemoryBarWidget(1 bars)"


def test_live_compare_follows_panel(panel: ScenarioExplorer) -> None:
    """compare() with a panel updates when the panel changes."""
    live = compare(panel, Scenarios.Gpt2Fp32AdamOnH100)
    before = live.value
    panel.set("bytes_per_value", 4.0)
    assert before != live.value
    assert "msn-diff" in live.value


def test_static_compare_marks_differences() -> None:
    """A static comparison marks changed cells with the relative change."""
    c = compare(Scenarios.Rank16AdaptersOnHypothetical8B, Scenarios.Rank32AdaptersOnHypothetical8B)
    text = c._repr_text_()
    assert "▲" in text
    with pytest.raises(TypeError, match="two or more scenarios"):
        compare(Scenarios.Gpt2Fp32AdamOnH100)


def test_control_change_is_fast(panel: ScenarioExplorer) -> None:
    """Five alternating changes each recompute once, well inside a loose 1 s each (the tight budget is in benchmarks/)."""
    assert panel.scenario.batch_size == 32
    before = panel.recomputes
    seconds = timeit.timeit(lambda: panel.set("batch_size", 16 if panel.scenario.batch_size != 16 else 8), number=5)
    assert panel.recomputes == before + 5
    assert panel.scenario.batch_size == 16  # 32 -> 16 -> 8 -> 16 -> 8 -> 16
    assert seconds / 5 < 1.0  # about 7 ms on a shared 2-core machine


def test_typed_value_between_powers_of_two_is_kept(panel: ScenarioExplorer) -> None:
    """Typing 23 keeps 23; the slider holds only an exact power of two (16), which a browser never re-snaps."""
    slider = panel._sliders["batch_size"]
    for typed, handle in ((23, 16), (24, 16), (11, 8), (12, 8), (100, 64), (5000, 4096), (32, 32)):
        panel.controls["batch_size"].value = str(typed)  # what the browser sends for the box
        assert panel.scenario.batch_size == typed
        assert panel.controls["batch_size"].value == str(typed)
        assert slider.value == handle
    panel.controls["batch_size"].value = "23"
    before = panel.recomputes
    slider.value = 16.0  # the browser's reply that the handle stands at 16: not a move
    assert (panel.scenario.batch_size, panel.recomputes) == (23, before)
    slider.value = 32.0  # a real move
    assert panel.scenario.batch_size == 32


def test_slider_starts_on_a_power_of_two() -> None:
    """A panel opened on batch 23 puts the handle on 16 and the box on 23."""
    p = explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100.variant(batch_size=23))
    assert p._sliders["batch_size"].value == 16
    assert p.controls["batch_size"].value == "23"


def test_strategy_toggle_moves_highlight_and_derivation() -> None:
    """Clicking "full" (the widget's own value, as the browser sets it) highlights full and marks its step."""
    p = explore(Scenarios.Gpt2XlBatch32Activations)
    assert p.chart.highlight == "none"
    assert 'class="msn-chosen"' in p.derivation.value
    before, n = p.derivation.value, p.recomputes
    p.controls["strategy"].value = "full"
    assert p.chart.highlight == "full"
    assert p.view == {"strategy": "full"}
    assert p.derivation.value != before
    chosen = p.derivation.value.split('class="msn-chosen"', 1)[1].split("</tr>", 1)[0]
    assert "activations(&quot;full&quot;)" in chosen
    assert f"recomputation: full = {format_bytes(p.scenario.activations('full').m_as('B'))}" in p.derivation.value
    assert n == p.recomputes  # a display setting recomputes nothing
    p.set("strategy", "selective")  # from code: the toggle buttons follow
    assert (p.controls["strategy"].value, p.chart.highlight) == ("selective", "selective")


def test_accelerator_options_show_capacities() -> None:
    """Each accelerator option names its memory as the catalog states it: "NVIDIA H100 (80 GiB)"."""
    p = explore(Scenarios.Gpt2Fp32AdamOnH100)
    labels = {v: label for label, v in p.controls["hardware"].options}
    assert labels["H100"] == "NVIDIA H100 (80 GiB)"
    assert labels["T4"] == "NVIDIA T4 (16 GiB)"
    assert labels[None] == "no hardware"
    assert all(label.endswith("GiB)") for key, label in labels.items() if key is not None)
    node = Hardware.T4
    own = explore(Scenarios.Gpt2Fp32AdamOnH100.variant(hardware=dataclasses.replace(node, name="My card")))
    assert own.controls["hardware"].options[0][0] == "My card (16 GiB)"


def test_title_of_an_fp32_run_with_a_master_copy() -> None:
    """Switching the master copy on in an FP32 run: the title says what each FP32 is, not "FP32 + FP32 master"."""
    p = explore(Scenarios.Gpt2Fp32AdamOnH100)
    p.set("master_bytes_per_parameter", True)
    assert p.scenario.title() == "GPT-2 XL (1.5B), FP32 weights + FP32 master + Adam on NVIDIA H100"
    assert "FP32 + FP32" not in p.derivation.value
    p.set("bytes_per_value", 2.0)
    assert p.scenario.title() == "GPT-2 XL (1.5B), 16-bit + FP32 master + Adam on NVIDIA H100"


def test_plain_text_form_holds_the_numbers(panel: ScenarioExplorer) -> None:
    """Without JavaScript (text/plain) the panel shows its whole title and headline numbers, never cut mid-word."""
    text = panel._repr_mimebundle_()["text/plain"]
    s = panel.scenario
    assert "…" not in text
    assert s.title() in text
    assert str(s.headline()) in text
    assert format_bytes(s.training_total.m_as("B")) in text
    panel.set("batch_size", 23)
    assert "at batch 23" in panel._repr_mimebundle_()["text/plain"]


def test_segment_count_that_does_not_divide_the_layers_warns() -> None:
    """Segments k = 28 of 48 layers: the estimate leaves 20 layers out and reads below full recomputation; the panel says so."""
    p = explore(Scenarios.Gpt2XlBatch32SegmentCheckpointed)
    assert "not counted alike" in p.derivation.value  # 8 segments of 6 layers keep more than full recomputation
    p.set("checkpoint_segments", 28)
    s = p.scenario
    assert s.checkpointed_activations < s.activations("full")  # the model's number, as its equation has it
    assert p.error == ""  # applied, not refused
    warning = p.derivation.value
    assert "28 segments do not divide the 48 layers" in warning
    assert "20 layers" in warning
    assert "reads low" in warning
    assert warning.count("28 segments do not divide") == 1  # once, under the answer, as in the repr
    assert p.status.value == ""
    p.set("checkpoint_segments", 0)  # segments off: nothing to compare
    assert 'class="msn-warning"' not in p.derivation.value
    p.set("checkpoint_segments", 48)  # divides, and keeps more than full recomputation
    assert "48 segments keep more than full recomputation" in p.derivation.value
    p.set("checkpoint_segments", 100)  # refused: the status line says so
    assert "was not applied" in p.status.value


@pytest.mark.parametrize(("start", "handle"), [(64, 32), (32, 32)])
def test_typed_value_survives_the_browsers_slider_echo(start: int, handle: int) -> None:
    """Typing 33..63 from 64 (the handle moves to 32) or from 32: the browser's 32.00000000000002 echo is no move."""
    p = explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100)
    slider, box = p._sliders["batch_size"], p.controls["batch_size"]
    for typed in range(33, 64):
        box.value = str(start)
        slider.value = float(start) * (1 + 2e-16)  # the browser's echo of the handle it was sent
        assert p.scenario.batch_size == start
        box.value = str(typed)  # what the browser sends for the box
        assert slider.value == handle
        before = p.recomputes
        for echo in (32.00000000000002, 31.999999999999996, 32.0):  # what the browser sends back for 32
            slider.value = echo
            assert (p.scenario.batch_size, p.recomputes, p.error) == (typed, before, "")
        assert box.value == str(typed)
    slider.value = 64.00000000000001  # a real move, one notch up, as a browser spells it
    assert p.scenario.batch_size == 64
    assert box.value == "64"


def test_typed_layout_survives_the_browsers_slider_echo() -> None:
    """Notebook 09: p = 48 and 40 data-parallel replicas stay 48 and 40 after the handles' echoes (32)."""
    p = explore(
        Scenarios.Gpt3_175BKorthikantiTable3OnA100.variant(
            data_parallel=8, zero_stage=1, tensor_parallel=2, pipeline_parallel=1, interleave=1
        )
    )
    for name, typed in (("pipeline_parallel", 48), ("data_parallel", 40)):
        p.controls[name].value = str(typed)
        assert p._sliders[name].value == 32
        p._sliders[name].value = 32.00000000000002
        assert (getattr(p.scenario, name), p.error) == (typed, "")
    assert p.scenario.devices == 2 * 48 * 40  # t x p x d = 3,840 devices


def test_retyped_value_shows_as_applied() -> None:
    """'4,096' or '4_096' typed over the context in use shows 4096; retyping it clears a refusal's message."""
    p = explore(Scenarios.Llama3_1_8BServeOnH100)
    box = p.controls["context_length"]
    for typed in ("4,096", "4_096", " 4096 ", "4096.0"):
        box.value = typed
        assert (box.value, p.scenario.context_length, p.recomputes) == ("4096", 4096, 0)
    box.value = "0"
    assert "was not applied" in p.status.value
    assert p.error
    box._handle_custom_msg({"event": "submit"}, [])  # "0" again: Enter, then the text (the browser's order)
    box.value = "0"
    assert "was not applied" in p.status.value
    box._handle_custom_msg({"event": "submit"}, [])  # the value in use retyped: Enter, and no text, as it is unchanged
    assert (p.error, p.status.value, box.value) == ("", "", "4096")
    box.value = "0"
    box._handle_custom_msg({"event": "submit"}, [])
    box.value = "4,096"  # retyped in another spelling: Enter, then the text
    assert (p.error, p.status.value, box.value) == ("", "", "4096")


def test_panel_stores_a_static_snapshot_of_what_it_shows() -> None:
    """The panel's HTML form is the derivation and the chart at its current values, with its settings."""
    p = explore(Scenarios.Gpt2XlBatch32Activations)
    html = p._repr_mimebundle_()["text/html"]
    assert html.count('class="msn-panel-snapshot"') == 1
    assert "micro-batch = 32" in html
    assert "recomputation = none" in html
    assert '<img class="msn-chart"' in html  # the chart, as a picture that needs no kernel
    assert "286.9 GB" in html  # no recomputation: 48 layers x 5.977 GB
    p.set("micro_batch", 8)
    p.set("strategy", "full")
    html = p._repr_mimebundle_()["text/html"]
    assert "micro-batch = 8" in html
    assert "recomputation = full" in html
    full = format_bytes(p.scenario.activations("full").m_as("B"))
    assert full == "1.258 GB"  # 48 x 1024 x 8 x 1600 x 2 B
    assert f"recomputation: full = {full}" in html
    assert "micro-batch 32" not in html


def test_model_dropdown_names_each_model_once() -> None:
    """Notebook 11: the scenario's Llama 3.1 8B (its config.json) and the catalog's (the paper's table) read apart."""
    p = explore(Scenarios.Llama3_1_8BServeOnH100)
    labels = [label for label, _ in p.controls["workload"].options]
    assert len(labels) == len(set(labels))
    assert labels[0] == "Llama 3.1 8B (from its published config.json)"
    assert "Llama 3.1 8B (catalog)" in labels
    assert p.scenario.workload.parameters.m_as("count") == 8_030_261_248  # the config's exact count
    p.set("workload", "LLAMA3_8B")  # the catalog's: 8.03e9 as the paper rounds it
    assert p.scenario.workload.parameters.m_as("count") == 8_030_000_000


def test_activation_panel_names_the_sequence_it_sets() -> None:
    """Notebook 05: the control is the sequence length the model reads, not a second "stated" length."""
    p = explore(Scenarios.Gpt2XlBatch32Activations)
    labels = [s.label for s in p.specs.values()]
    assert "sequence length" in labels
    assert "stated sequence length" not in labels
    p.set("seq_len", 512)
    assert p.scenario.sequence == 512


def test_large_numbers_are_formatted() -> None:
    """Batch 1,000,000 reads 1×10⁶ in the headline; a 1.77 million per cent share reads 1.77×10⁶ %."""
    from mlsysim_nb.render.numbers import format_share

    s = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    big = s.variant(batch_size=1_000_000, activations=s.activations_at(1_000_000))
    assert "at batch 1×10⁶" in str(big.headline())
    assert "1000000" not in str(big.headline())
    assert "e+" not in str(big.headline())
    assert format_share(17_700) == "1.77×10⁶ %"
    assert format_share(32.597) == "3260 %"  # GPT-3's 2.8 TB state on an 85.9 GB A100, not 3.26e+03 %
    assert format_share(0.2791) == "27.9 %"
    assert format_share(1) == "100 %"
    assert "e+" not in compare(s, big)._repr_html_()


def test_counts_of_one_are_singular() -> None:
    """One device reads "on 1 device"; k = 47 of 48 layers leaves out "the other 1 layer", which "holds" 2."""
    s = Scenarios.Gpt3_175BKorthikantiTable3OnA100
    one = s.variant(
        data_parallel=1,
        tensor_parallel=1,
        pipeline_parallel=1,
        interleave=1,
        sequence_parallel=False,
        state=s.state.variant(hardware=None),
    )
    assert one.title().endswith("on 1 device")
    assert "on 1 device, N_d=1" in str(one.headline())
    (caveat,) = Scenarios.Gpt2XlBatch32Activations.variant(checkpoint_segments=47).caveats()
    assert "47 segments of 1 layer and leaves out the other 1 layer," in caveat
    assert "Really 1 of the segments holds 2 layers" in caveat


FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # batch 32, activations 85.56 GB


def test_the_control_offers_the_range_the_checker_accepts() -> None:
    """One declaration: the batch control's bounds are the checker's."""
    declared = knobs(FLASH)["batch_size"]
    spec = explore(FLASH).specs["batch_size"]
    assert (declared.low, declared.high) == (spec.low, spec.high)
    FLASH.variant(batch_size=int(declared.high), activations=Q_(1, "GB"))
    with pytest.raises(FieldError, match=f"must be at most {int(declared.high):,}"):
        FLASH.variant(batch_size=int(declared.high) + 1)


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


def test_a_huge_typed_integer_is_refused_in_the_panel_with_a_short_message() -> None:
    """10**400 typed into the batch box: refused with the field's range, the number written 1e+400."""
    panel = explore(FLASH)
    before = panel.scenario
    panel.set("batch_size", 10**400)
    assert panel.error == (
        "batch size = 1e+400 was not applied: TrainingStateFitScenario.batch_size: must be from 1 to 1,048,576, "
        "got 1e+400"
    )
    assert panel.scenario is before


def test_control_range_messages_write_whole_numbers_with_separators() -> None:
    """A control refusing text says "from 1 to 1,048,576", not "1.04858e+06"."""
    from mlsysim_nb.model.controls import controls_for

    spec = next(c for c in controls_for(FLASH) if c.name == "batch_size")
    assert spec.accepts(float("nan")) == "must be a whole number from 1 to 1,048,576"
    assert spec.accepts(10**400) == ""  # a whole number: the field's own check gives the range
