"""The lab's size guard and argument checks: refused before PyTorch allocates anything, naming the field."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mlsysim_nb import Q_, FieldError
from mlsysim_nb.errors import MemoryLimitError
from mlsysim_nb.measure import measure_layer, measure_training_state

pytestmark = pytest.mark.measure

BIG_LAYER = {"seq_len": 8192, "micro_batch": 8, "hidden": 4096, "heads": 32}
SMALL_LAYER = {"seq_len": 16, "micro_batch": 1, "hidden": 64, "heads": 4}


def test_layer_the_model_predicts_too_large_is_refused_at_once() -> None:
    """A layer the model predicts at 96.5 GB is refused in well under a second, naming the size and the limit."""
    start = time.perf_counter()
    with pytest.raises(MemoryLimitError) as caught:
        measure_layer(**BIG_LAYER)
    assert time.perf_counter() - start < 1
    message = str(caught.value)
    assert caught.value.field == "memory_limit"
    assert "needs about 96.5 GB (89.88 GiB)" in message
    assert "saved activations 95.03 GB" in message
    assert "more than the limit of 4.295 GB (4 GiB)" in message
    assert "memory_limit=" in message


def test_training_step_the_model_predicts_too_large_is_refused() -> None:
    """A 32-layer h = 8192 AdamW step (413 GB of state by the model) is refused, naming the size and the limit."""
    with pytest.raises(MemoryLimitError, match=r"needs about 413 GB .*training state 412\.4 GB"):
        measure_training_state("fp32", hidden=8192, heads=64, layers=32)


def test_the_limit_can_be_lowered_and_raised(torch: Any) -> None:
    """memory_limit moves the guard: 8 MiB refuses a 23 MB layer that the default and 16 GiB run."""
    layer = {"seq_len": 256, "micro_batch": 2, "hidden": 512, "heads": 8}
    with pytest.raises(MemoryLimitError, match=r"more than the limit of 8\.389 MB \(8 MiB\)"):
        measure_layer(**layer, memory_limit="8 MiB")
    assert measure_layer(**layer).measured.m_as("B") > 0
    assert measure_layer(**layer, memory_limit=Q_(16, "GiB")).measured.m_as("B") > 0


@pytest.mark.parametrize(
    ("value", "reason"),
    [("lots", "cannot read"), (Q_(3, "s"), "units of"), ("1 kB", "from 1 MiB to 10 PB"), (-1, "positive")],
)
def test_bad_memory_limit_names_the_field(value: Any, reason: str) -> None:
    """A memory_limit that is not an amount of memory from 1 MiB to 10 PB is refused, naming memory_limit."""
    with pytest.raises(FieldError, match=reason) as caught:
        measure_layer(**SMALL_LAYER, memory_limit=value)
    assert caught.value.field == "memory_limit"


@pytest.mark.parametrize("recipe", [["fp32"], {"fp32": 1}, 32, None])
def test_recipe_that_is_not_a_name_is_a_field_error(recipe: Any) -> None:
    """measure_training_state(["fp32"]) is a FieldError naming recipe and the valid names, not a TypeError."""
    with pytest.raises(FieldError, match=r"recipe: must be one of 'fp32', 'bf16', 'bf16 \+ fp32 master'"):
        measure_training_state(recipe)


@pytest.mark.parametrize(
    ("value", "reason"),
    [(2**64, "must be at most 18,446,744,073,709,551,615, got 18,446,744,073,709,551,616"), (-1, "at least 0")],
)
def test_random_state_out_of_range_is_a_field_error(value: int, reason: str) -> None:
    """random_state=2**64 is refused before PyTorch sees it (which raises a bare overflow error)."""
    with pytest.raises(FieldError, match=reason) as caught:
        measure_layer(**SMALL_LAYER, random_state=value)
    assert caught.value.field == "random_state"


def test_largest_random_state_runs(torch: Any) -> None:
    """The largest value PyTorch's generator takes, 2**64 - 1, runs."""
    assert measure_layer(**SMALL_LAYER, random_state=2**64 - 1).measured.m_as("B") > 0


@pytest.mark.parametrize(("field", "value"), [("seq_len", 2**25), ("hidden", 2**21), ("heads", 2**17)])
def test_sizes_beyond_the_model_name_the_lab_field(field: str, value: int) -> None:
    """A size beyond the model's own range is refused naming the lab's argument, not an inner Workload field."""
    with pytest.raises(FieldError, match=rf"^measure_layer\.{field}: must be at most") as caught:
        measure_layer(**{**SMALL_LAYER, field: value})
    assert caught.value.owner == "measure_layer"
