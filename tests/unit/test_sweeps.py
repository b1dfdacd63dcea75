"""Sweeps: array fields, vectorised results equal to scalar ones, validation, plots."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import (
    Q_,
    FieldError,
    Hardware,
    NotApplicableError,
    Scenarios,
    Workloads,
    sweep,
)
from tests.strategies import activation_scenarios, training_scenarios

TRAINING = ["weights", "total", "full_state", "update_traffic", "checkpoint", "copies", "bytes_per_trained_parameter"]
ACTIVATION = ["per_token_activations", "score_activations", "score_share", "line_items_total", "segment_input"]


def test_grid_shape_and_axes() -> None:
    """Two axes give a grid of their lengths; axes broadcast over it."""
    s = sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[1, 2, 4], seq_len=[512, 1024])
    assert s.shape == (3, 2)
    assert s["activations_none"].shape == (3, 2)
    assert s.grid("seq_len")[2, 1] == 1024
    assert len(s) == 6


def test_batch_sweep_rescales_activations() -> None:
    """Sweeping batch_size of a training scenario scales its activations (as the control does)."""
    base = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    s = sweep(base, batch_size=[16, 32])
    assert s["training_total"][1].m_as("byte") == pytest.approx(base.training_total.m_as("byte"))
    assert s["training_total"][0].m_as("byte") == pytest.approx(
        base.variant(batch_size=16, activations=base.activations_at(16)).training_total.m_as("byte")
    )
    assert s.training_fits().tolist() == [True, False]


@given(training_scenarios(), st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=4))
def test_training_array_results_equal_scalar_ones(scenario, widths) -> None:
    """Element by element, an array scenario agrees with the scalar scenarios it stands for."""
    s = sweep(scenario, bytes_per_value=widths)
    for i, width in enumerate(widths):
        scalar = scenario.variant(bytes_per_value=width)
        for name in TRAINING:
            got = np.asarray(getattr(s[name], "magnitude", s[name]))[i]
            want = getattr(getattr(scalar, name), "magnitude", getattr(scalar, name))
            assert got == pytest.approx(want, rel=1e-12)


@given(activation_scenarios(), st.lists(st.integers(1, 64), min_size=1, max_size=4))
def test_activation_array_results_equal_scalar_ones(scenario, batches) -> None:
    """Element by element, micro-batch sweeps agree with scalar scenarios."""
    s = sweep(scenario, micro_batch=batches)
    for i, b in enumerate(batches):
        scalar = scenario.variant(micro_batch=b)
        for name in ACTIVATION:
            got = np.asarray(getattr(s[name], "magnitude", s[name]))[i]
            want = getattr(getattr(scalar, name), "magnitude", getattr(scalar, name))
            assert got == pytest.approx(want, rel=1e-12)
        for strategy in ("none", "selective", "full"):
            assert s["activations_" + strategy][i].m_as("byte") == pytest.approx(
                scalar.activations(strategy).m_as("byte"), rel=1e-12
            )


def test_validation_names_field_and_offending_value() -> None:
    """A bad element is refused with the field and the value."""
    with pytest.raises(FieldError, match=r"micro_batch: must be at least 1, got 0"):
        sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[4, 0, 8])
    with pytest.raises(FieldError, match=r"seq_len: must be whole numbers, got the fraction 1.5"):
        sweep(Scenarios.Gpt2XlBatch32Activations, seq_len=[512, 1.5])
    with pytest.raises(FieldError, match=r"checkpoint_segments: must be at most 48 \(the model's layers\), got 64"):
        sweep(Scenarios.Gpt2XlBatch32Activations, checkpoint_segments=[8, 64])
    with pytest.raises(TypeError, match="microbatch"):
        sweep(Scenarios.Gpt2XlBatch32Activations, microbatch=[1])
    with pytest.raises(ValueError, match="1-D"):
        sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[[1, 2]])


def test_large_sweep_is_one_vectorised_evaluation() -> None:
    """100,000 configurations evaluate as arrays (timed in benchmarks/, not here)."""
    s = sweep(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100, batch_size=np.arange(1, 100_001))
    fits = s.training_fits()
    assert fits.shape == (100_000,)
    assert fits.sum() == Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100.max_resident_batch
    assert len(s.to_dict()["training_total"]) == 100_000


def test_fits_needs_hardware_for_activations() -> None:
    """An activation sweep fits against a device only when one is named."""
    s = sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[1, 64])
    with pytest.raises(NotApplicableError, match="hardware"):
        s.fits()
    state = Scenarios.Gpt2MixedPrecisionAdamOnH100.total
    assert s.fits(hardware=Hardware.H100, plus=state).tolist() == [True, False]


def test_plots() -> None:
    """The line plot marks capacity and the boundary; the map colours fit cells."""
    s = sweep(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100, batch_size=[4, 8, 16, 32, 64])
    fig = s.plot()
    ax = fig.axes[0]
    assert ax.get_xlabel() == "batch_size"
    assert any("does not fit from batch_size = 32" in t.get_text() for t in ax.get_legend().get_texts())
    grid = sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[1, 8, 64], seq_len=[512, 1024])
    fig = grid.fit_map("micro_batch", "seq_len", hardware=Hardware.H100)
    assert "NVIDIA H100" in fig.axes[0].get_title(loc="left")
    with pytest.raises(ValueError, match="two axes"):
        grid.fit_map("micro_batch", "precision_bytes", hardware=Hardware.H100)


def test_sweep_reprs() -> None:
    """A sweep and an array scenario show ranges, never raise."""
    s = sweep(Scenarios.Rank16AdaptersOnHypothetical8B, adapter_rank=[4, 8, 16, 32], adapted_matrices=[1, 2, 4])
    assert "12 configurations" in repr(s)
    assert "adapter_state" in s._repr_html_()
    assert "a sweep over adapter_rank, adapted_matrices" in repr(s.scenario)
    assert "…" in s.scenario.to_text()


# -- axes: an ordered sequence of values, a bounded grid ----------------------------------------------------------------
FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100


def test_a_generator_axis_is_read_in_full() -> None:
    """A generator of batch sizes gives the same sweep as the list of them."""
    listed = sweep(FLASH, batch_size=[8, 16, 32])
    generated = sweep(FLASH, batch_size=(2**n for n in range(3, 6)))
    assert generated["training_total"].m_as("byte").tolist() == listed["training_total"].m_as("byte").tolist()
    assert sweep(FLASH, batch_size=range(1, 4)).shape == (3,)


@pytest.mark.parametrize(
    ("axis", "rule"),
    [
        ({8, 16}, "a set has no order"),
        (frozenset({8}), "a set has no order"),
        ({8: 1, 16: 2}, r"a dict is ambiguous \(its keys or its values\?\)"),
        ([], "has no values"),
        (np.array([]), "has no values"),
        ("8, 16", "must be a sequence of values"),
        (b"\x08", "must be a sequence of values"),
        (8, "must be a sequence of values"),
        (None, "must be a sequence of values"),
        ([[8, 16], [32, 64]], "must be a 1-D sequence"),
        ([[8, 16], [32]], "flat sequence of values of one kind and shape"),
    ],
)
def test_an_axis_that_is_not_an_ordered_sequence_is_refused(axis: object, rule: str) -> None:
    """A set, a dict, an empty axis, a string, a number or a 2-D axis: a FieldError naming the axis and the rule."""
    with pytest.raises(FieldError, match=rule) as info:
        sweep(FLASH, batch_size=axis)  # type: ignore[arg-type]
    assert info.value.field == "batch_size"


def test_a_grid_over_the_limit_is_refused_before_allocating() -> None:
    """10**9 configurations (7.45 GiB per array) are refused naming the size and the limit, in no time."""
    from mlsysim_nb.live.sweeps import MAX_SWEEP_SIZE

    axis = np.arange(1, 1001)
    with pytest.raises(FieldError, match=r"1,000,000,000 configurations .* limit of 1,000,000 .* 7\.45 GiB") as info:
        sweep(FLASH, batch_size=axis, bytes_per_value=axis / 500, optimizer_bytes_per_parameter=axis / 100)
    assert info.value.field == "optimizer_bytes_per_parameter"
    assert MAX_SWEEP_SIZE == 10**6


def test_the_limit_is_a_module_constant_a_user_can_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """With MAX_SWEEP_SIZE at 6, a 2 x 3 grid is swept and a 7-value axis is refused."""
    from mlsysim_nb.live import sweeps

    monkeypatch.setattr(sweeps, "MAX_SWEEP_SIZE", 6)
    assert len(sweep(FLASH, batch_size=[1, 2], bytes_per_value=[1, 2, 4])) == 6
    with pytest.raises(FieldError, match="7 configurations"):
        sweep(FLASH, batch_size=range(1, 8))


def test_a_generator_longer_than_an_axis_may_be_is_refused_unread() -> None:
    """An endless generator is read only up to MAX_AXIS_VALUES + 1 values, then refused."""
    import itertools

    with pytest.raises(FieldError, match=r"holds more than 1,000,000 values"):
        sweep(FLASH, batch_size=itertools.count(1))


def test_an_unknown_axis_is_refused_before_its_values_are_read() -> None:
    """A misspelt axis is a TypeError listing the fields, whatever its values."""
    with pytest.raises(TypeError, match=r"unknown field\(s\) 'batchsize'; valid fields are: workload"):
        sweep(FLASH, batchsize={1, 2})


@pytest.mark.parametrize("method", ["fits", "training_fits", "plot", "fit_map"])
def test_an_unknown_accelerator_lists_the_catalog(method: str) -> None:
    """hardware='nope' is a FieldError naming the argument and listing the keys (a raw KeyError before)."""
    grid = sweep(FLASH, batch_size=[8, 16], bytes_per_value=[2, 4])
    call = {
        "fits": lambda: grid.fits(hardware="nope"),
        "training_fits": lambda: grid.training_fits(hardware="nope"),
        "plot": lambda: grid.plot(hardware="nope"),
        "fit_map": lambda: grid.fit_map("bytes_per_value", "batch_size", hardware="nope"),
    }[method]
    with pytest.raises(FieldError, match=r"hardware: no accelerator 'nope' in the catalog; .*H100, .*L4") as info:
        call()
    assert info.value.field == "hardware"
    assert grid.fits(hardware="L4").tolist() == [[True, False], [True, False]]  # 12 GB and 24 GB of state on 24 GiB


G = Scenarios.Gpt3_175BKorthikantiTable3OnA100


T = Scenarios.Gpt2Fp32AdamOnH100


def _legend(fig: object) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]  # type: ignore[attr-defined]


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


TRAIN = Scenarios.Gpt2MixedPrecisionAdamOnH100  # GPT-2 XL, 16 B per parameter, batch 32


def test_sweep_reads_quantity_arrays_in_their_unit() -> None:
    """Activations of 10 and 20 GB are 10 and 20 GB, not bytes: training totals 34 and 44 GB."""
    result = sweep(FLASH, activations=Q_(np.array([10, 20]), "GB"))
    np.testing.assert_allclose([34.0, 44.0], result["training_total"].m_as("GB"))


def test_sweep_converts_bits_to_bytes() -> None:
    """16 and 32 bits per value are 2 and 4 bytes: 24 and 30 GB of state with an FP32 master and Adam."""
    result = sweep(TRAIN, bytes_per_value=Q_([16, 32], "bit"))
    np.testing.assert_allclose([24.0, 30.0], result["total"].m_as("GB"))


def test_sweep_converts_megabytes() -> None:
    """normalization_per_layer in MB reaches the line items as megabytes (10 MB x 48 layers = 0.48 GB more)."""
    case = Scenarios.Gpt2XlBatch32Activations
    result = sweep(case.variant(normalization_per_layer=None), normalization_per_layer=Q_([0, 10], "MB"))
    extra = np.diff(result["line_items_total"].m_as("GB"))[0]
    assert extra == pytest.approx(0.48)


def test_sweep_refuses_a_wrong_dimension() -> None:
    """Seconds are not bytes, in a sweep as in variant()."""
    with pytest.raises(FieldError, match=r"bytes_per_value: must be in units of \[information\]"):
        sweep(TRAIN, bytes_per_value=Q_([2, 4], "s"))


@pytest.mark.parametrize("name", ["capacity_share", "update_time", "copies"])
def test_fits_refuses_quantities_that_are_not_memory(name: str) -> None:
    """A ratio or a time cannot be held against a capacity in bytes."""
    result = sweep(TRAIN, batch_size=[8, 16])
    with pytest.raises(ValueError, match=f"{name} is not an amount of memory"):
        result.fits(name)


def test_fits_reads_text_and_catalog_keys() -> None:
    """plus="2 GB" is two gigabytes and hardware="H100" is the catalog's H100."""
    result = sweep(FLASH, batch_size=[16, 22, 23])
    by_node = result.training_fits(hardware=Hardware.H100, plus=Q_(2, "GB"))
    assert by_node.tolist() == result.training_fits(hardware="H100", plus="2 GB").tolist()
    assert by_node.tolist() == [True, True, False]  # 24 + 2.674 x 23 + 2 = 87.5 GB > 85.9 GB
    with pytest.raises(TypeError, match="HardwareNode or a catalog key"):
        result.fits(hardware=3)
    with pytest.raises(FieldError, match="plus: cannot read"):
        result.fits(plus="two gigabytes")


def test_grid_names_the_axes() -> None:
    """An unknown axis lists the ones there are."""
    with pytest.raises(KeyError, match="the axes are: 'batch_size'"):
        sweep(TRAIN, batch_size=[1, 2]).grid("nope")


def test_sweep_text_is_read_by_the_guarded_reader() -> None:
    """sweep(bytes_per_value=["1 B", "10**10**10 B"]) is refused at once, naming the axis, instead of hanging."""
    with pytest.raises(FieldError, match="bytes_per_value"):
        sweep(FLASH, bytes_per_value=["1 B", "10**10**10 B"])


def test_a_float_that_lost_an_integers_digits_is_not_written_out_in_full() -> None:
    """sweep(batch_size=[1, 2**70]) reads 2**70 as a float: the message says 1.18e+21, not 20 invented digits."""
    from mlsysim_nb.errors import show_number

    with pytest.raises(FieldError, match=r"got 1\.18e\+21$"):
        sweep(FLASH, batch_size=[1, 2**70])
    assert show_number(2**70) == "1,180,591,620,717,411,303,424"  # an int keeps every digit
    assert show_number(1e18) == "1,000,000,000,000,000,000"  # a float whose digits are all its own
