"""One word, one meaning: a sweep's fits and training_fits are, element by element, the scenario's own."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import sweep
from tests.strategies import parallel_scenarios, training_scenarios

_BATCHES = st.lists(st.integers(1, 4096), min_size=1, max_size=5)
_WIDTHS = st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4)


@given(training_scenarios(), _BATCHES)
def test_training_sweep_fits_is_the_scenarios_fits(s: Any, batches: list[int]) -> None:
    """sweep(s, batch_size=...).fits()[i] is s.variant(batch_size=b).fits; training_fits likewise."""
    grid = sweep(s, batch_size=batches)
    fits, run = grid.fits(), grid.training_fits()
    for i, b in enumerate(batches):
        one = s.variant(batch_size=b)  # the one path a sweep and a control move the batch through
        assert bool(fits[i]) == one.fits
        assert bool(run[i]) == one.training_fits


@given(training_scenarios(), _WIDTHS)
def test_training_sweep_over_widths(s: Any, widths: list[int]) -> None:
    """sweep(s, bytes_per_value=...).fits()[i] is s.variant(bytes_per_value=w).fits."""
    grid = sweep(s, bytes_per_value=widths)
    fits, run = grid.fits(), grid.training_fits()
    for i, w in enumerate(widths):
        one = s.variant(bytes_per_value=w)
        assert bool(fits[i]) == one.fits
        assert bool(run[i]) == one.training_fits


@given(parallel_scenarios(), st.lists(st.integers(1, 1024), min_size=1, max_size=4), st.sampled_from([0, 1, 2, 3]))
def test_parallel_sweep_fits_is_the_scenarios_fits(s: Any, replicas: list[int], stage: int) -> None:
    """sweep(s, data_parallel=..., zero_stage=[...]).fits()[i, j] is the scenario's fits at that layout."""
    stages = sorted({0, stage})
    grid = sweep(s, data_parallel=replicas, zero_stage=stages)
    fits = grid.fits()
    for i, n in enumerate(replicas):
        for j, z in enumerate(stages):
            assert bool(fits[i, j]) == s.variant(data_parallel=n, zero_stage=z).fits
