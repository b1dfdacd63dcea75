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
    """A layer whose run the lab estimates at 184 GB at its peak is refused in well under a second, naming both figures.

    s = 8192, b = 8, h = 4096, a = 32, BF16, explicit attention, F.dropout: sbh = 268,435,456, as²b = 17,179,869,184;
    weights (12h² + 13h)·2 = 402,759,680; saved 36·sbh + 6·as²b + 8·sb = 112,743,415,808; forward temporaries
    (4·sbh + 2·as²b)·2 = 70,866,960,384; 184,013,135,872 bytes with the library's 16 MiB per thread on top.
    """
    from mlsysim_nb.measure.peak import threads
    from mlsysim_nb.render.numbers import format_bytes

    start = time.perf_counter()
    with pytest.raises(MemoryLimitError) as caught:
        measure_layer(**BIG_LAYER)
    assert time.perf_counter() - start < 1
    message = str(caught.value)
    assert caught.value.field == "memory_limit"
    total = 402_759_680 + 112_743_415_808 + 70_866_960_384 + threads() * 16 * 2**20
    assert f"needs about {format_bytes(total, binary=True)} at its peak, by the lab's estimate" in message
    assert "(weights 402.8 MB, saved activations 112.7 GB, forward temporaries 70.87 GB, library workspace" in message
    assert "more than the limit of 4.295 GB (4 GiB)" in message
    assert "memory_limit=" in message


def test_the_guard_bounds_the_peak_not_the_saved_bytes(torch: Any) -> None:
    """Weights, saved bytes, input and output (501 MB) fit 600 MiB at s = 1024, b = 8, h = 512, a = 8; the peak does not.

    The old guard compared 600 MiB with those 501,235,712 bytes and ran; the run's peak is 553,713,664 saved
    + 6,304,768 weights + (4·sbh + 2·as²b)·2 = 301,989,888 temporaries (sbh = 4,194,304, as²b = 67,108,864).
    """
    with pytest.raises(MemoryLimitError, match=r"saved activations 553\.7 MB, forward temporaries 302 MB") as caught:
        measure_layer(seq_len=1024, micro_batch=8, hidden=512, heads=8, memory_limit="600 MiB")
    assert "more than the limit of 629.1 MB (600 MiB)" in str(caught.value)


def test_training_step_the_model_predicts_too_large_is_refused() -> None:
    """A 32-layer h = 8192 AdamW step (413 GB of state by the model) is refused, naming the size and the limit."""
    with pytest.raises(MemoryLimitError, match=r"needs about 413 GB .*training state 412\.4 GB"):
        measure_training_state("fp32", hidden=8192, heads=64, layers=32)


def test_the_limit_can_be_lowered_and_raised(torch: Any) -> None:
    """memory_limit moves the guard: 8 MiB refuses a layer estimated at 28.3 MB + 16 MiB a thread; 4 and 16 GiB run it.

    s = 256, b = 2, h = 512, a = 8, BF16: weights 6,304,768, saved 15,732,736, temporaries (4·sbh + 2·as²b)·2 = 6,291,456.
    """
    layer = {"seq_len": 256, "micro_batch": 2, "hidden": 512, "heads": 8}
    with pytest.raises(MemoryLimitError, match=r"more than the limit of 8\.389 MB \(8 MiB\)") as caught:
        measure_layer(**layer, memory_limit="8 MiB")
    assert "(weights 6.305 MB, saved activations 15.73 MB, forward temporaries 6.291 MB," in str(caught.value)
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


RANDOM_STATES = [
    (2**64, "must be at most 18,446,744,073,709,551,615, got 18,446,744,073,709,551,616"),
    (-1, "must be at least 0"),
    ("x", "must be a whole number \\(an int\\) from 0 to 18,446,744,073,709,551,615, got str 'x'"),
    (1.5, "got float 1.5"),
    (True, "got bool True"),
]


@pytest.mark.parametrize(("value", "reason"), RANDOM_STATES)
def test_random_state_out_of_range_is_a_field_error(value: Any, reason: str) -> None:
    """random_state=2**64 is refused before PyTorch sees it (which raises a bare overflow error)."""
    with pytest.raises(FieldError, match=reason) as caught:
        measure_layer(**SMALL_LAYER, random_state=value)
    assert caught.value.field == "random_state"


@pytest.mark.parametrize("function", ["measure_hf_layer", "measure_hf_causal_lm"])
@pytest.mark.parametrize(("value", "reason"), RANDOM_STATES)
def test_hf_random_state_is_checked_like_the_layer(function: str, value: Any, reason: str) -> None:
    """The transformers lab refuses the same random_state with the same words, labelled with the function called."""
    import mlsysim_nb.measure as lab

    with pytest.raises(FieldError, match=rf"^{function}\.random_state: .*{reason}") as caught:
        getattr(lab, function)("llama", random_state=value)
    assert (caught.value.owner, caught.value.field) == (function, "random_state")


@pytest.mark.parametrize(
    ("keywords", "field"),
    [({"dtype": "float16"}, "dtype"), ({"attention": "flash"}, "attention"), ({"dropout": 1}, "dropout"),
     ({"seq_len": 1}, "seq_len"), ({"micro_batch": 17}, "micro_batch"), ({"seq_len": 64}, "seq_len")],
)  # fmt: skip
def test_causal_lm_errors_name_causal_lm(keywords: dict[str, Any], field: str) -> None:
    """measure_hf_causal_lm's refusals are labelled measure_hf_causal_lm, not measure_hf_layer."""
    from mlsysim_nb.measure import measure_hf_causal_lm

    with pytest.raises(FieldError, match=rf"^measure_hf_causal_lm\.{field}: ") as caught:
        measure_hf_causal_lm("llama", **keywords)
    assert caught.value.owner == "measure_hf_causal_lm"


def test_positional_sizes_name_the_keyword_parameters() -> None:
    """measure_layer(16, 2, 64, 4) is a TypeError that lists the parameters to name, with an example."""
    with pytest.raises(TypeError) as caught:
        measure_layer(16, 2, 64, 4)  # type: ignore[misc]
    assert str(caught.value) == (
        "measure_layer() takes every argument by name: seq_len, micro_batch, hidden, heads, dtype, attention, "
        "dropout_mask, random_state, memory_limit; got 4 positional arguments. "
        "Write, for example, measure_layer(seq_len=..., micro_batch=..., hidden=..., heads=...)"
    )


@pytest.mark.parametrize(
    ("function", "arguments", "expected"),
    [
        ("measure_hf_layer", ("llama", "float32"), ("measure_hf_layer() takes model_type by position and every other "
         "argument by name: dtype, attention, dropout, seq_len, micro_batch, random_state; got 2 positional arguments. "
         "Write, for example, measure_hf_layer(model_type, dtype=...)")),
        ("measure_training_state", ("fp32", 64), ("measure_training_state() takes recipe by position and every other "
         "argument by name: hidden, heads, layers, seq_len, micro_batch, memory_limit; got 2 positional arguments. "
         "Write, for example, measure_training_state(recipe, hidden=...)")),
    ],
)  # fmt: skip
def test_every_lab_function_names_its_keyword_parameters(
    function: str, arguments: tuple[Any, ...], expected: str
) -> None:
    """Too many positional arguments to any measuring function name the parameters to give by name."""
    import mlsysim_nb.measure as lab

    with pytest.raises(TypeError) as caught:
        getattr(lab, function)(*arguments)
    assert str(caught.value) == expected


def test_named_calls_keep_their_signature() -> None:
    """help() and inspect still show each function's own parameters, not the wrapper's."""
    import inspect

    assert list(inspect.signature(measure_layer).parameters)[:4] == ["seq_len", "micro_batch", "hidden", "heads"]
    assert measure_layer.__doc__ is not None
    assert measure_layer.__doc__.startswith("Run one GPT layer forward")


def test_largest_random_state_runs(torch: Any) -> None:
    """The largest value PyTorch's generator takes, 2**64 - 1, runs."""
    assert measure_layer(**SMALL_LAYER, random_state=2**64 - 1).measured.m_as("B") > 0


@pytest.mark.parametrize(("field", "value"), [("seq_len", 2**25), ("hidden", 2**21), ("heads", 2**17)])
def test_sizes_beyond_the_model_name_the_lab_field(field: str, value: int) -> None:
    """A size beyond the model's own range is refused naming the lab's argument, not an inner Workload field."""
    with pytest.raises(FieldError, match=rf"^measure_layer\.{field}: must be at most") as caught:
        measure_layer(**{**SMALL_LAYER, field: value})
    assert caught.value.owner == "measure_layer"
