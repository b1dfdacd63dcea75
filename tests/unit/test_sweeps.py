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
    grid = sweep(Scenarios.Gpt2XlBatch32Activations, micro_batch=[1, 8, 64], seq_len=[512, 2048])
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
