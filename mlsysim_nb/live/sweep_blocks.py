"""A sweep's grid evaluated whole or block by block: the blocks, and each block's scenario.

A sweep's scenario holds its inputs as arrays laid out on the grid. Up to a limit of configurations
(:data:`mlsysim_nb.live.sweeps.CHUNK_SIZE`) a quantity is read from that scenario once. Past it, the grid is
cut into blocks of at most the limit, each block's scenario holds its inputs cut to the block (views, no
copies), and each quantity is read block by block into an array of the whole grid: every formula is element
by element, so the values are the whole grid's, and no intermediate quantity is larger than a block.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.model.evaluator import Env

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["Grid", "cut", "grid_blocks", "on_grid"]


def grid_blocks(shape: tuple[int, ...], limit: int) -> Iterator[tuple[slice, ...]]:
    """Blocks of a grid of ``shape`` that cover it in order, each of at most ``limit`` points (one slice per axis).

    The leading axes are cut first, so that a block is a run of whole rows of the trailing axes where they fit.
    """
    ndim = len(shape)
    axis = next(k for k in range(ndim) if math.prod(shape[k + 1 :]) <= limit)
    step = max(1, limit // math.prod(shape[axis + 1 :]))
    rest = (slice(None),) * (ndim - axis - 1)
    for outer in itertools.product(*(range(n) for n in shape[:axis])):
        head = tuple(slice(i, i + 1) for i in outer)
        for start in range(0, shape[axis], step):
            yield (*head, slice(start, min(start + step, shape[axis])), *rest)


def on_grid(value: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``value`` is an array laid out on a grid of ``shape``: each of its axes is 1 or the grid's own."""
    if type(value) is not np.ndarray or value.ndim == 0 or value.ndim > len(shape):
        return False
    return all(n in (1, m) for n, m in zip(value.shape, shape[len(shape) - value.ndim :], strict=True))


def cut(value: Any, block: tuple[slice, ...]) -> Any:
    """``value`` over one block of the grid: an array input laid out on the grid is sliced (a view); others stay."""
    if type(value) is not np.ndarray or value.ndim == 0 or value.ndim > len(block):
        return value
    own = block[len(block) - value.ndim :]  # broadcasting aligns the trailing axes
    return value[tuple(part if n > 1 else slice(None) for part, n in zip(own, value.shape, strict=True))]


class Grid:
    """A sweep's scenario over a grid of ``shape``: read whole, or block by block past a limit."""

    def __init__(self, scenario: Scenario, shape: tuple[int, ...]) -> None:
        self.scenario = scenario
        self.shape = shape
        #: the scenario's inputs as it was made (before any formula ran): what each block is cut from
        self._inputs = dict(scenario._env.values)  # noqa: SLF001 - a block evaluates the scenario's own formulas
        #: the inputs laid out on the grid (an axis, or what the scenario computed from axes when it was made)
        self._gridded = {name for name, value in self._inputs.items() if on_grid(value, shape)}

    def blockwise(self, limit: int) -> bool:
        """Whether the grid holds more than ``limit`` configurations (so is read block by block)."""
        return math.prod(self.shape) > limit

    def block_scenario(self, block: tuple[slice, ...]) -> Scenario:
        """The scenario over one block of the grid: its array inputs cut to the block (views, no copies)."""
        env = self.scenario._env  # noqa: SLF001
        gridded = self._gridded
        values = {name: cut(value, block) if name in gridded else value for name, value in self._inputs.items()}
        part = copy.copy(self.scenario)
        object.__setattr__(part, "_env", Env(values, env.needs, env.formulas, env.constants, vectorised=True))
        return part

    def scenarios(self, limit: int) -> Iterator[Scenario]:
        """The scenario of each block in order past ``limit`` configurations, else the whole grid's alone."""
        if not self.blockwise(limit):
            yield self.scenario
            return
        for block in grid_blocks(self.shape, limit):
            yield self.block_scenario(block)

    def evaluate(self, read: Callable[[Scenario], Any], limit: int) -> np.ndarray:
        """``read(scenario)`` over the whole grid, as an array of the grid's shape.

        Up to ``limit`` configurations it reads the sweep's scenario once (its values cached). Past it, it
        reads one block of the grid at a time and writes each into the result, so that no intermediate
        quantity is ever larger than a block: every formula is element by element, so the values are those
        of the whole grid at once, and the flags a scenario sets when it is made were set over the whole grid.
        """
        if not self.blockwise(limit):
            return np.broadcast_to(np.asarray(read(self.scenario)), self.shape)
        out: np.ndarray | None = None
        for block in grid_blocks(self.shape, limit):
            value = np.asarray(read(self.block_scenario(block)))
            if out is None:
                if value.ndim == 0:  # the same for every configuration: no input it reads is swept
                    return np.broadcast_to(value, self.shape)
                out = np.empty(self.shape, dtype=value.dtype)
            elif np.result_type(out, value) != out.dtype:
                out = out.astype(np.result_type(out, value))
            out[block] = value
        assert out is not None  # a grid holds at least one block  # noqa: S101
        return out
