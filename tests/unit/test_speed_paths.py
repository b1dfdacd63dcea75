"""The fast paths: a sweep evaluated block by block, variant()'s shortcuts, and the plain-int count check."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import Q_, FieldError, Scenarios, sweep
from mlsysim_nb.live import sweep_blocks, sweeps
from mlsysim_nb.live.sweep_blocks import grid_blocks
from mlsysim_nb.model.counts import check_count
from mlsysim_nb.units import same_units, unit_container

#: one case of each kind, swept over two or three axes (the activation one over a choice that sets a
#: flag when the scenario is made, over the whole grid)
GRIDS: dict[str, dict[str, Any]] = {
    "Gpt2MixedPrecisionFlashAttentionOnH100": {
        "batch_size": list(range(1, 13)),
        "optimizer_bytes_per_parameter": [0, 2, 8],
    },
    "Gpt2XlBatch32SegmentCheckpointed": {
        "micro_batch": list(range(1, 10)),
        "seq_len": [128, 256, 1024],
        "implementation": ["megatron", "transformers"],
    },
    "Llama3_8BZero3On8H100": {"data_parallel": list(range(1, 11)), "zero_stage": [0, 1, 2, 3]},
    "Llama3_1_70BServeOn8H100": {"batch_size": list(range(1, 10)), "context_length": [1024, 4096, 8192]},
}


def _read_all(grid: Any) -> dict[str, np.ndarray]:
    out = {name: np.array(grid.magnitude(name)) for name in grid.names()}
    for question in grid._questions():
        out[question] = getattr(grid, question)()
    return out


@pytest.mark.parametrize(("shape", "limit"), [((7,), 3), ((5, 4), 6), ((3, 5, 7), 4), ((3, 5, 7), 1), ((2, 3), 1000)])
def test_grid_blocks_cover_the_grid_once_within_the_limit(shape: tuple[int, ...], limit: int) -> None:
    """Every point of a grid lies in exactly one block, and no block holds more than the limit."""
    seen = np.zeros(shape, dtype=int)
    for block in grid_blocks(shape, limit):
        assert seen[block].size <= limit
        seen[block] += 1
    assert np.all(seen == 1)


def test_grid_blocks_of_a_5_by_4_grid() -> None:
    """A 5 x 4 grid in blocks of 8: two whole rows at a time (hand-worked: rows 0-1, 2-3, 4)."""
    blocks = [tuple((s.start, s.stop) for s in b) for b in grid_blocks((5, 4), 8)]
    assert blocks == [((0, 2), (None, None)), ((2, 4), (None, None)), ((4, 5), (None, None))]


@pytest.mark.parametrize("case", list(GRIDS))
def test_a_sweep_block_by_block_equals_the_whole_grid(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every quantity and verdict of a sweep past CHUNK_SIZE is, value and type, the whole grid's at once."""
    base = getattr(Scenarios, case)
    whole = _read_all(sweep(base, **GRIDS[case]))
    monkeypatch.setattr(sweeps, "CHUNK_SIZE", 5)
    grid = sweep(base, **GRIDS[case])
    assert grid._blockwise()
    blockwise = _read_all(grid)
    assert list(blockwise) == list(whole)
    for name, values in whole.items():
        assert blockwise[name].dtype == values.dtype, name
        assert blockwise[name].shape == values.shape, name
        assert np.array_equal(blockwise[name], values), name


def test_a_blockwise_sweep_reads_with_units_like_the_whole_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """s["training_total"] past CHUNK_SIZE carries the unit, and batch 8 of GPT-2 XL is 45.4 GB as in the docstring."""
    base = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    monkeypatch.setattr(sweeps, "CHUNK_SIZE", 2)
    s = sweep(base, batch_size=[8, 16, 32])
    assert s["training_total"].to("GB").magnitude.round(1).tolist() == [45.4, 66.8, 109.6]
    assert s.training_fits().tolist() == [True, True, False]
    assert s.fits().tolist() == [True, True, True]


def test_the_chunk_size_bounds_every_array_a_blockwise_sweep_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """With CHUNK_SIZE 16, no input or intermediate of any block of a 40 x 30 grid holds more than 16 numbers."""
    monkeypatch.setattr(sweeps, "CHUNK_SIZE", 16)
    made: list[Any] = []
    original = sweep_blocks.Grid.block_scenario

    def recording(self: Any, block: Any) -> Any:
        scenario = original(self, block)
        made.append(scenario)
        return scenario

    monkeypatch.setattr(sweep_blocks.Grid, "block_scenario", recording)
    base = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    s = sweep(base, micro_batch=np.arange(1, 41), seq_len=np.arange(1, 31) * 32)
    for name in s.names():
        assert s.magnitude(name).shape == (40, 30)
    sizes = [np.size(v) for scenario in made for v in scenario._env.values.values() if isinstance(v, np.ndarray)]
    assert made
    assert max(sizes) <= 16
    # the whole grid's scenario computed nothing: its values are still the inputs it was made with
    assert max(np.size(v) for v in s.scenario._env.values.values() if isinstance(v, np.ndarray)) <= 40


def test_a_quantity_no_axis_moves_is_read_once_past_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A quantity that no swept field changes (the weights over a batch sweep) is one value over the grid."""
    monkeypatch.setattr(sweeps, "CHUNK_SIZE", 2)
    s = sweep(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100, batch_size=[1, 2, 3, 4, 5])
    weights = s.magnitude("weights")
    assert weights.tolist() == [3e9] * 5  # 1.5e9 parameters x 2 B
    assert weights.strides == (0,)  # one value, broadcast: nothing allocated per configuration


def test_a_blockwise_sweep_names_only_what_applies_over_every_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """names() past CHUNK_SIZE is the whole grid's: a quantity without hardware is left out, as at once."""
    base = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    whole = sweep(base, micro_batch=[1, 2, 3, 4]).names()
    monkeypatch.setattr(sweeps, "CHUNK_SIZE", 1)
    assert sweep(base, micro_batch=[1, 2, 3, 4]).names() == whole


def test_variant_moves_the_activations_in_their_own_unit() -> None:
    """variant(batch_size=64) of GPT-2 XL at 32 doubles its activations, in the unit they were stated in (GB)."""
    base = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
    moved = base.variant(batch_size=64)
    assert str(moved.activations.units) == str(base.activations.units)
    assert moved.activations.magnitude == pytest.approx(2 * base.activations.magnitude, rel=1e-15)
    assert moved == type(base)(**{**base.inputs(), "batch_size": 64, "activations": moved.activations, "name": ""})


def test_variant_of_an_unknown_field_still_names_the_valid_ones() -> None:
    """variant(microbatch=8) lists the valid fields, whatever the per-class cache holds."""
    with pytest.raises(TypeError, match="valid fields are: workload, hardware"):
        Scenarios.Llama3_8BLoraOnH100.variant(microbatch=8)


def test_same_units_is_q_in_the_template_s_units() -> None:
    """same_units(Q_(2, "GiB"), 3.5) is Q_(3.5, "GiB"), formatted and converted alike; a foreign value goes through Q_."""
    made = same_units(Q_(2, "GiB"), 3.5)
    assert made == Q_(3.5, "GiB")
    assert f"{made:~P}" == "3.5 GiB"
    assert made.to("byte").magnitude == 3.5 * 2**30
    assert unit_container(Q_(2, "GiB")) == Q_(1, "GiB")._units


@pytest.mark.parametrize(
    ("value", "minimum", "maximum", "expected"),
    [(1, 1, None, 1), (10**15, 0, 10**15, 10**15), (0, 0, 3, 0), (2**1000, 1, None, 2**1000)],
)
def test_a_plain_int_count_in_range_is_itself(value: int, minimum: int, maximum: int | None, expected: int) -> None:
    """A plain int within its range comes back unchanged (the fast path), up to the float range without a maximum."""
    assert check_count("S", "n", value, minimum=minimum, maximum=maximum) == expected


@pytest.mark.parametrize(
    ("value", "maximum", "message"),
    [
        (0, None, "must be at least 1, got 0"),
        (9, 8, "must be at most 8, got 9"),
        (True, None, "must be a whole number, got True"),
        (2**1100, None, "too large to represent"),
    ],
)
def test_a_plain_int_count_out_of_range_is_refused(value: Any, maximum: int | None, message: str) -> None:
    """The fast path refuses nothing it should not and accepts nothing the full check refuses (bool, beyond floats)."""
    with pytest.raises(FieldError, match=message):
        check_count("S", "n", value, maximum=maximum)


def test_blocks_of_every_small_grid_are_in_order() -> None:
    """Blocks come in the grid's own (C) order, so that written one after another they fill it front to back."""
    for shape, limit in itertools.product([(4,), (3, 4), (2, 3, 4)], [1, 2, 5, 12]):
        order = np.arange(int(np.prod(shape))).reshape(shape)
        starts = [int(order[b].flat[0]) for b in grid_blocks(shape, limit)]
        assert starts == sorted(starts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("80 GiB", Q_(80, "GiB")), ("3.35 TB/s", Q_(3.35, "TB/s")), ("2 B^3", Q_(2, "B**3")), ("2 B**3", Q_(2, "B**3"))],
)
def test_quantity_text_with_and_without_a_power_reads_alike(text: str, expected: Any) -> None:
    """Text with no power skips pint's preprocessor; text with one (^, **) is checked and reads the same way."""
    from mlsysim_nb.model.text import read_text

    assert read_text(text) == expected


@pytest.mark.parametrize("text", ["9^9^9^9 GB", "2 B ** 3 ** 2", "2 B²^9", "9 B squared ** 9 ** 9"])
def test_power_text_is_still_bounded(text: str) -> None:
    """A tower of powers, however spelt (^, **, superscripts, words), is refused before pint evaluates it."""
    from mlsysim_nb.model.text import read_text

    with pytest.raises(ValueError, match="a power must raise"):
        read_text(text)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a * b", 6.0),  # name, name
        ("a * 4", 8.0),  # name, number
        ("4 / b", 4 / 3),  # number, name
        ("(a + 1) ** b", 27.0),  # expression, name
        ("a // (b - 1)", 1.0),  # name, expression
        ("(a + b) - (b - a)", 4.0),  # expression, expression
        ("-a + max(a, b) * floor(b / a)", 1.0),
    ],
)
def test_formulas_of_every_operand_shape_compute_python_s_arithmetic(expression: str, expected: float) -> None:
    """Each operand shape the compiler reads in place gives what Python's own operators give (a = 2, b = 3)."""
    from mlsysim_nb.formula import Formula

    formula = Formula("x", expression)
    assert formula.evaluate({"a": 2.0, "b": 3.0}) == expected
    arrays = formula.evaluate({"a": np.array([2.0, 2.0]), "b": np.array([3.0, 3.0])})
    assert arrays.tolist() == [expected, expected]


def test_make_variant_treats_a_field_init_does_not_take_as_replace_does() -> None:
    """A field declared init=False is recomputed, and naming it is refused with dataclasses.replace()'s ValueError."""
    import dataclasses

    from mlsysim_nb.model.changes import make_variant

    @dataclasses.dataclass(frozen=True)
    class Doubled:
        COUPLINGS = ()
        x: int
        twice: int = dataclasses.field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "twice", 2 * self.x)

    made = make_variant(Doubled(3), {"x": 5})
    assert (made.x, made.twice) == (5, 10)
    with pytest.raises(ValueError, match="init=False") as ours:
        make_variant(Doubled(3), {"twice": 4})
    with pytest.raises(ValueError, match="init=False") as theirs:
        dataclasses.replace(Doubled(3), twice=4)
    assert str(ours.value) == str(theirs.value)


def test_only_arrays_laid_out_on_the_grid_are_cut_into_blocks() -> None:
    """An input of the grid's layout (an axis, (1, 4), (3, 1)) is cut; a table of another shape, or a number, is not."""
    from mlsysim_nb.live.sweep_blocks import cut, on_grid

    shape = (3, 4)
    assert on_grid(np.zeros((1, 4)), shape)
    assert on_grid(np.zeros((3, 1)), shape)
    assert on_grid(np.zeros(4), shape)  # broadcasting aligns the trailing axes
    assert not on_grid(np.zeros(5), shape)
    assert not on_grid(np.zeros((2, 3, 4)), shape)
    assert not on_grid(2.0, shape)
    block = (slice(1, 2), slice(None))
    assert cut(np.arange(3).reshape(3, 1), block).tolist() == [[1]]
    assert cut(np.arange(4).reshape(1, 4), block).tolist() == [[0, 1, 2, 3]]
