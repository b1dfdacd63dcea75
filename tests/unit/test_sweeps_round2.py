"""Sweeps, round 2: choice and count axes displayed, ranges checked first, and one meaning of "fits"."""

from __future__ import annotations

import pytest

from mlsysim_nb import FieldError, NotApplicableError, Scenarios, Workloads, sweep

G = Scenarios.Gpt3_175BKorthikantiTable3OnA100
FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100  # state 24 GB, activations 85.56 GB at batch 32, H100
T = Scenarios.Gpt2Fp32AdamOnH100


def _legend(fig: object) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]  # type: ignore[attr-defined]


# -- 5. sweeps over choices, flags and counts display ------------------------------------------


def test_sweep_over_recompute_displays() -> None:
    """sweep(G, recompute=[...]): its mimebundle lists the strategies, and its derivation the cases each takes."""
    s = sweep(G, recompute=["none", "full"])
    bundle = s._repr_mimebundle_()
    assert "none, full" in bundle["text/html"]
    text = s.scenario.to_text()
    assert "recompute                    none, full" in text
    assert "(varies over the sweep: no recomputation / full recomputation)" in text


def test_categorical_axis_plots_as_categories() -> None:
    """plot(x="recompute") puts one tick per strategy, in the order swept, and shades each one that overflows.

    Micro-batch 2 on G's layout without interleaving (state 43.75 GB a device): s·b·h = 50,331,648 and 96 layers
    in flight, so
    none holds 14.25 · 50,331,648 · 96 = 68.85 GB (112.6 GB in all: over 85.9 GB), selective 4.25 · ... =
    20.54 GB (64.29 GB: fits), full 0.25 · ... = 1.21 GB (fits).
    """
    assert G.activations is not None
    two = G.variant(activations=G.activations.variant(micro_batch=2), interleave=1)
    s = sweep(two, recompute=["none", "selective", "full"])
    assert s["activations_per_device"].m_as("byte").tolist() == [
        50_331_648 * 14.25 * 96,
        50_331_648 * 4.25 * 96,
        50_331_648 * 0.25 * 96,
    ]
    assert s.fits().tolist() == [True, True, True]  # the state alone: 43.75 GB a device
    assert s.training_fits().tolist() == [False, True, True]
    fig = s.plot(x="recompute")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["none", "selective", "full"]
    assert list(ax.get_lines()[0].get_xdata()) == [0, 1, 2]
    assert "a device's share of the run does not fit at recompute = none" in _legend(fig)


def test_sweep_over_zero_stage_derivation() -> None:
    """sweep(G, zero_stage=[0, 3]).scenario.to_text() shows each shard count's cases (was: truth value ambiguous)."""
    text = sweep(G, zero_stage=[0, 3]).scenario.to_text()
    assert "N_w = N_d  or  1   (varies over the sweep: ZeRO stage 3 / replicated)" in text
    assert "Error" not in text


def test_sweep_over_checkpoint_segments_derivation() -> None:
    """A segment sweep's derivation evaluates k + L/k at the swept k: 2 + 48/2 = 26 and 4 + 48/4 = 16."""
    s = sweep(Scenarios.Gpt2XlBatch32Activations, checkpoint_segments=[2, 4])
    steps = {st.formula: st for sec in s.scenario.explain().sections for st in sec.steps}
    assert steps["checkpoint_memory_units"].result.tolist() == [26.0, 16.0]
    assert "Error" not in s.scenario.to_text()


def test_sweep_over_a_flag_displays() -> None:
    """A sweep over sequence parallelism lists False, True and plots them as two categories."""
    s = sweep(G, sequence_parallel=[False, True])
    assert "False, True" in s._repr_html_()
    ax = s.plot(x="sequence_parallel").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["False", "True"]


def test_bad_plot_axis_lists_the_swept_axes() -> None:
    """plot(x="nope") names the swept axes (it raised a bare KeyError)."""
    s = sweep(G, zero_stage=[0, 3])
    with pytest.raises(ValueError, match=r"no sweep axis 'nope' for x; the swept axes are: 'zero_stage'"):
        s.plot(x="nope")
    with pytest.raises(ValueError, match=r"the swept axes are: 'zero_stage'"):
        s.fit_map("zero_stage", "nope")


# -- 6. ranges before any int64 conversion ---------------------------------------------------------


@pytest.mark.parametrize("huge", [2**70, 2**64, 2**63])
def test_huge_batch_is_refused_by_the_fields_rule(huge: int) -> None:
    """batch_size = 2**70 beside activations: "must be at most 1,048,576", not a wrapped -9223372036854775808."""
    with pytest.raises(FieldError, match=r"batch_size: must be at most 1,048,576") as e:
        sweep(FLASH, batch_size=[1, huge])
    assert e.value.field == "batch_size"
    assert "-9223372036854775808" not in str(e.value)


def test_huge_layout_value_is_refused_by_the_fields_rule() -> None:
    """A many-device sweep: data_parallel = 2**70 is out of the field's range, said as such."""
    with pytest.raises(FieldError, match=r"data_parallel: must be at most 1,048,576"):
        sweep(G, data_parallel=[1, 2**70])


# -- 7. one word, one meaning ----------------------------------------------------------------------------


def test_fits_is_the_scenarios_fits() -> None:
    """FLASH over batch 8..64: the state (24 GB) fits everywhere, as FLASH.fits says; the run only to 16."""
    s = sweep(FLASH, batch_size=[8, 16, 32, 64])
    assert s.fits().tolist() == [True, True, True, True]
    assert s.fits().tolist() == [FLASH.variant(batch_size=b).fits for b in (8, 16, 32, 64)]
    # training_total = 24 GB + 85.56 GB · B / 32: 45.4, 66.8, 109.6, 195.1 GB against 85.9 GB
    assert s.training_fits().tolist() == [True, True, False, False]
    assert s.training_fits().tolist() == [FLASH.variant(batch_size=b).training_fits for b in (8, 16, 32, 64)]


def test_fits_with_a_quantity_keeps_its_meaning() -> None:
    """fits(quantity) holds that quantity against the device: training_total gives the run's answer."""
    s = sweep(FLASH, batch_size=[8, 16, 32, 64])
    assert s.fits("training_total").tolist() == s.training_fits().tolist()
    assert s.fits("total").tolist() == s.fits().tolist()


def test_fits_without_hardware_is_false_like_the_scenario() -> None:
    """Without a device the scenario's fits is False; so is the sweep's, element by element."""
    bare = T.variant(hardware=None)
    assert sweep(bare, batch_size=[1, 2]).fits().tolist() == [False, False] == [bare.fits, bare.fits]
    with pytest.raises(NotApplicableError, match="hardware"):
        sweep(bare, batch_size=[1, 2]).fits("total")


def test_parallel_fits_and_training_fits() -> None:
    """A many-device sweep answers both questions as its scenarios do: the state per device, and the whole run.

    State per device 2,800 GB / (8 p): 350, 175, 87.5, 43.75 GB, so the state fits from p = 8 on 85.9 GB,
    and so does the run (54.02 GB with its activations).
    """
    plain = G.variant(interleave=1)  # m = 3 needs p > 1
    s = sweep(plain, pipeline_parallel=[1, 2, 4, 8])
    assert s.fits().tolist() == [plain.variant(pipeline_parallel=p).fits for p in (1, 2, 4, 8)] == [False] * 3 + [True]
    assert s.training_fits().tolist() == [plain.variant(pipeline_parallel=p).training_fits for p in (1, 2, 4, 8)]
    assert s.training_fits().tolist() == [False] * 3 + [True]
    state_only = plain.variant(zero_stage=2, data_parallel=8, tensor_parallel=1, sequence_parallel=False)
    assert state_only.fits is True  # 82.03 GB of state per device
    assert state_only.training_fits is False  # 188.1 GB with the activations
    assert repr(state_only).endswith(": the state fits; the run does not>")


def test_plot_says_which_question_it_answers() -> None:
    """The shaded region says "the run does not fit" for state plus activations, "the state" for the state alone."""
    run = sweep(FLASH, batch_size=[4, 8, 16, 32, 64]).plot()
    assert "the run does not fit from batch_size = 32" in _legend(run)
    state = sweep(T, bytes_per_value=[2, 4, 8]).plot()  # 1.5e9 · (2w + 8): 18, 24, 36 GB, all under 85.9 GB
    assert not any("does not fit" in t for t in _legend(state))
    big = sweep(T.variant(workload=Workloads.LLAMA3_8B), bytes_per_value=[1, 2, 4]).plot()
    # 8.03e9 · (2w + 8): 80.3, 96.4, 128.5 GB against 85.9 GB: the state does not fit from w = 2
    assert "the state does not fit from bytes_per_value = 2" in _legend(big)


def test_yes_no_rows_say_how_often() -> None:
    """The sweep's table gives a verdict as a count, not a range: the run fits at 8 and 16 of 8, 16, 32."""
    html = sweep(FLASH, batch_size=[8, 16, 32])._repr_html_()
    assert "true for 2 of 3" in html  # training_fits
    assert "true for 3 of 3" in html  # fits: the state alone
    assert "false … true" not in html


def test_shading_of_a_two_axis_plot_names_the_line_it_reads() -> None:
    """Two axes: the grey region is the first line's answer, and says so (p = 2 overflows for both strategies)."""
    s = sweep(G, pipeline_parallel=[2, 4, 8], recompute=["none", "full"])
    # p = 2: 175e9 · 16 / 16 = 175 GB of state per device, over 85.9 GB whatever the recomputation
    assert not s.fits()[0].any()
    legend = _legend(s.plot(x="recompute"))
    assert "a device's share of the run (pipeline_parallel = 2) does not fit at recompute = none, full" in legend
