"""Sweeps: array fields, vectorised results equal to scalar ones, validation, plots."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import FieldError, Hardware, NotApplicableError, Scenarios, sweep
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
