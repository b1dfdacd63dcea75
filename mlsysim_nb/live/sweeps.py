"""Sweeps: one scenario with NumPy-array fields evaluates a whole design space at once.

``sweep(scenario, batch_size=[1, 2, 4, ...], seq_len=[...])`` lays the axes
out as a grid, builds **one** scenario whose fields are broadcasting arrays
(validated element-wise), and evaluates every formula once, vectorised: no
loop over configurations. The result is tidy: each axis and each quantity as
an array of the grid's shape, with units, plus plot helpers.

A grid of more than :data:`CHUNK_SIZE` configurations is evaluated block by block (a few
dozen NumPy operations per block, not one per configuration; :mod:`mlsysim_nb.live.sweep_blocks`):
each quantity read is still an array of the whole grid, but no intermediate quantity its formulas
pass through is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError, NotApplicableError
from mlsysim_nb.live.sweep_axes import (
    axis_text,
    axis_values,
    bytes_of,
    check_axes,
    log_spaced,
    numeric,
    plain,
    range_text,
    tick,
)
from mlsysim_nb.live.sweep_blocks import Grid
from mlsysim_nb.model.values import brief
from mlsysim_nb.render.charts import chart_text
from mlsysim_nb.render.display import RichRepr
from mlsysim_nb.render.plain import one_line
from mlsysim_nb.units import Q_, ureg

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = [
    "CHUNK_SIZE",
    "MAX_SWEEP_SIZE",
    "Sweep",
    "accelerator",
    "check_size",
    "sweep",
]


class Sweep(RichRepr):
    """The result of :func:`sweep`: axes and quantities as arrays of the grid's shape.

    ``result["total"]`` is a quantity array; ``result.axes`` maps each swept
    field to its values; ``result.names()`` lists what can be read.
    """

    def __init__(self, base: Scenario, axes: dict[str, Any], scenario: Scenario) -> None:
        self.base = base
        #: each axis's values as given (a quantity array when they carry a unit)
        self.axes = axes
        self.scenario = scenario
        self.shape = tuple(len(v) for v in axes.values())
        self._grid = Grid(scenario, self.shape)
        self._names: list[str] | None = None

    # -- evaluation: the whole grid at once, or block by block past CHUNK_SIZE configurations -------
    def _blockwise(self) -> bool:
        return self._grid.blockwise(CHUNK_SIZE)

    def _evaluate(self, read: Callable[[Scenario], Any]) -> np.ndarray:
        """``read(scenario)`` over the whole grid, block by block past :data:`CHUNK_SIZE` (:mod:`.sweep_blocks`)."""
        return self._grid.evaluate(read, CHUNK_SIZE)

    def __len__(self) -> int:
        return int(np.prod(self.shape))

    def grid(self, axis: str) -> Any:
        """An axis's values broadcast over the whole grid (with their unit, if they have one)."""
        if axis not in self.axes:
            msg = f"no sweep axis {axis!r}; the axes are: {', '.join(map(repr, self.axes))}"
            raise KeyError(msg)
        index = list(self.axes).index(axis)
        shape = [1] * len(self.axes)
        shape[index] = -1
        values = self.axes[axis]
        magnitude = np.broadcast_to(np.asarray(getattr(values, "magnitude", values)).reshape(shape), self.shape)
        return Q_(magnitude, values.units) if isinstance(values, ureg.Quantity) else magnitude

    def names(self) -> list[str]:
        """The quantities this sweep can give (those applicable to its scenario over the whole grid)."""
        if self._names is None:
            candidates = list(self.base.FORMULA_NAMES)
            for scenario in self._grid.scenarios(CHUNK_SIZE):
                for name in list(candidates):
                    try:
                        scenario.magnitude(name)
                    except (NotApplicableError, KeyError):
                        candidates.remove(name)
            self._names = candidates
        return list(self._names)

    def magnitude(self, name: str) -> np.ndarray:
        """A quantity's (or a swept field's) base-unit magnitudes (bytes, seconds, counts) over the grid."""
        return self._evaluate(lambda scenario: scenario.magnitude(name))

    def __getitem__(self, name: str) -> Any:
        if name in self.axes:
            return self.grid(name)
        if name not in self.base.EQUATIONS:
            msg = f"no quantity {name!r}; available: {', '.join(self.names())}"
            raise KeyError(msg)
        values = self.magnitude(name)
        if not values.flags.writeable:  # a view of the scenario's cached values: the result is the caller's own
            values = np.array(values)
        return self.base.wrapper(name)(values)

    def to_dict(self) -> dict[str, np.ndarray]:
        """Flat columns: each axis and each applicable quantity in base units (bytes, seconds)."""
        columns = {axis: np.asarray(getattr(g, "magnitude", g)).ravel() for axis, g in
                   ((a, self.grid(a)) for a in self.axes)}  # fmt: skip
        for name in self.names():
            columns[name] = np.asarray(self.magnitude(name)).ravel()
        return columns

    def to_frame(self) -> Any:
        """The columns as a pandas DataFrame (pandas is optional; units are in base units)."""
        import pandas as pd

        return pd.DataFrame(self.to_dict())

    # -- answers --------------------------------------------------------------------------
    def _bytes_in_use(self, quantity: str | None) -> tuple[str, np.ndarray]:
        name = quantity or self.base.sweep_quantity()
        if name not in self.base.EQUATIONS or name not in self.base.FORMULA_NAMES:
            msg = f"no quantity {name!r} in this sweep; available: {', '.join(self.names())}"
            raise KeyError(msg)
        if self.base.base_unit(name) != "byte":
            unit = self.base.base_unit(name) or "a plain number"
            in_bytes = ", ".join(n for n in self.names() if self.base.base_unit(n) == "byte")
            msg = (
                f"{name} is not an amount of memory ({unit}), so it cannot be held against a device's "
                f"capacity; byte quantities here: {in_bytes}"
            )
            raise ValueError(msg)
        return name, np.asarray(self.magnitude(name), dtype=float)

    def _capacity(self, hardware: Any) -> tuple[float, str]:
        node = hardware if hardware is not None else getattr(self.base, "hardware", None)
        if node is None:
            msg = "a fit needs hardware: pass hardware=Hardware.H100 (the scenario has none)"
            raise NotApplicableError("fits", "hardware", msg)
        node = accelerator(node)
        return float(node.memory.capacity.m_as("byte")), node.name

    def _questions(self) -> dict[str, tuple[str, str]]:
        """The kind's verdicts (``fits``, ``training_fits``), each with the quantity it holds and its subject."""
        declared = getattr(self.base, "fit_questions", None)
        return dict(declared()) if declared is not None else {}

    def _verdict(self, question: str) -> np.ndarray:
        """The scenario's own verdict property, element by element over the grid."""
        value = self._evaluate(lambda scenario: np.asarray(getattr(scenario, question), dtype=bool))
        return value if value.flags.writeable else np.array(value)

    def fits(self, quantity: str | None = None, *, hardware: Any = None, plus: Any = None) -> np.ndarray:
        """Element by element, what the scenario's own ``fits`` says (for a training sweep, the state alone).

        With ``quantity``, ``hardware`` or ``plus``: where ``quantity`` (+ ``plus`` bytes, e.g. a
        training state) fits the device's memory (``hardware`` defaults to the scenario's). The
        quantity defaults to the one ``fits`` holds against the device (``total`` for a training
        sweep), or the sweep's own quantity for a kind without ``fits`` (``activations_selective``
        for an activation sweep). The whole run, state plus activations, is :meth:`training_fits`.
        """
        question = self._questions().get("fits")
        if question is not None and quantity is None and hardware is None and plus is None:
            return self._verdict("fits")
        return self._fit(quantity or (question[0] if question else None), hardware, plus)

    def training_fits(self, *, hardware: Any = None, plus: Any = None) -> np.ndarray:
        """Element by element, what the scenario's own ``training_fits`` says: the whole run, state plus activations.

        Raises
        ------
        NotApplicableError
            For a kind without ``training_fits`` (its ``fits`` is then the only verdict).
        """
        question = self._questions().get("training_fits")
        if question is None:
            kind = type(self.base).__name__
            raise NotApplicableError("training_fits", f"a kind with training_fits ({kind} has only fits: use fits())")
        if hardware is None and plus is None:
            return self._verdict("training_fits")
        return self._fit(question[0], hardware, plus)

    def _fit(self, quantity: str | None, hardware: Any, plus: Any) -> np.ndarray:
        _, used = self._bytes_in_use(quantity)
        if plus is not None:
            used = used + bytes_of(plus)
        capacity, _ = self._capacity(hardware)
        return used <= capacity

    def _subject(self, name: str) -> str:
        """What the shaded region of a plot of ``name`` says does not fit: ``the run``, ``the state``, or ``name``."""
        for quantity, subject in self._questions().values():
            if quantity == name:
                return subject
        return name

    def _axis(self, x: str | None, role: str = "x") -> str:
        if x is None:
            return next(iter(self.axes))
        if x not in self.axes:
            msg = f"no sweep axis {x!r} for {role}; the swept axes are: {', '.join(map(repr, self.axes))}"
            raise ValueError(msg)
        return x

    # -- plots ----------------------------------------------------------------------------
    def plot(self, quantity: str | None = None, x: str | None = None, *, hardware: Any = None, ax: Any = None) -> Any:
        """``quantity`` against axis ``x`` (one line per value of a second axis), with the capacity line."""
        from mlsysim_nb.render.charts import new_axes

        x = self._axis(x)
        name, used = self._bytes_in_use(quantity)
        fig, ax = new_axes(ax)
        values_x = plain(self.axes[x])
        categorical = not numeric(values_x)  # a choice (recompute) or a flag: one tick per value, in order
        xs = np.arange(len(values_x)) if categorical else values_x
        others = [a for a in self.axes if a != x]
        values = np.moveaxis(used, list(self.axes).index(x), 0).reshape(len(xs), -1)
        labels = [""] if not others else [f"{others[0]} = {tick(v)}" for v in plain(self.axes[others[0]])]
        is_bytes = self.base.base_unit(name) == "byte"
        scale = 1e9 if is_bytes else 1.0
        for column, label in zip(values.T, labels, strict=False):
            ax.plot(xs, column / scale, marker="o" if categorical else ".", label=label or name)
        try:
            capacity, device = self._capacity(hardware)
        except NotApplicableError:
            capacity, device = 0.0, ""
        if capacity and is_bytes:
            label = chart_text(f"{device} capacity")
            ax.axhline(capacity / scale, color="#1a1a1a", linestyle="--", linewidth=1.2, label=label)
            subject = self._subject(name) + (f" ({labels[0]})" if others else "")  # the first line's answer
            self._shade(ax, x, (xs, values_x), values[:, 0] > capacity, subject, categorical=categorical)
        if categorical:
            ax.set_xticks(xs, labels=[chart_text(tick(v)) for v in values_x])
        ax.set_xlabel(x)
        ax.set_ylabel(f"{name} ({'GB' if is_bytes else self.base.base_unit(name) or 'value'})")
        if not categorical and log_spaced(xs):
            ax.set_xscale("log", base=2)
        ax.legend(fontsize=8, frameon=False)
        return fig

    @staticmethod
    def _shade(ax: Any, x: str, axis: tuple[np.ndarray, np.ndarray], over: np.ndarray, subject: str, *,
               categorical: bool) -> None:  # fmt: skip
        """Grey where ``subject`` does not fit: from the first such x when every later one overflows too, else each."""
        xs, values_x = axis
        bad = np.nonzero(over)[0]
        if not bad.size:
            return
        style = {"color": "#d0d0d0", "alpha": 0.4}
        if not categorical and np.all(over[bad[0] :]):  # the fits boundary: from here on nothing fits
            label = chart_text(f"{subject} does not fit from {x} = {tick(values_x[bad[0]])}")
            ax.axvspan(xs[bad[0]], xs[-1], **style, label=label)
            return
        where = ", ".join(tick(values_x[i]) for i in bad)
        steps = np.diff(xs.astype(float)) if len(xs) > 1 else np.array([1.0])
        for n, i in enumerate(bad):
            half = 0.4 if categorical else 0.4 * float(np.min(steps))
            ax.axvspan(
                xs[i] - half,
                xs[i] + half,
                **style,
                label=chart_text(f"{subject} does not fit at {x} = {where}") if n == 0 else None,
            )

    def fit_map(self, x: str, y: str, quantity: str | None = None, *, hardware: Any = None, plus: Any = None,
                ax: Any = None) -> Any:  # fmt: skip
        """Fits / does-not-fit over two axes, titled with the device (green fits, grey does not)."""
        from matplotlib.colors import ListedColormap

        from mlsysim_nb.render.charts import new_axes

        if len(self.axes) != 2 or {x, y} != set(self.axes):
            msg = (
                f"fit_map needs a sweep over exactly the two axes {x!r} and {y!r}; "
                f"the swept axes are: {', '.join(map(repr, self.axes))}"
            )
            raise ValueError(msg)
        # a map answers the whole-run question where the kind has one (state and activations), else fits
        questions = self._questions()
        run = questions.get("training_fits") if quantity is None and plus is None else None
        if run is not None:
            mask = self.training_fits(hardware=hardware)
        else:
            mask = self.fits(quantity, hardware=hardware, plus=plus)
        if list(self.axes) != [y, x]:
            mask = mask.T
        _, device = self._capacity(hardware)
        fig, ax = new_axes(ax)
        cmap = ListedColormap(["#d0d0d0", "#009E73"])
        ax.pcolormesh(np.arange(len(self.axes[x]) + 1), np.arange(len(self.axes[y]) + 1), mask.astype(int),
                      cmap=cmap, vmin=0, vmax=1, edgecolors="white", linewidth=0.5)  # fmt: skip
        ax.set_xticks(np.arange(len(self.axes[x])) + 0.5, labels=[tick(v) for v in plain(self.axes[x])], rotation=45)
        ax.set_yticks(np.arange(len(self.axes[y])) + 0.5, labels=[tick(v) for v in plain(self.axes[y])])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        question = run or questions.get("fits")
        name, _ = self._bytes_in_use(quantity or (question[0] if question else None))
        if plus is not None:
            name += f" + {bytes_of(plus) / 1e9:.3g} GB"
        ax.set_title(chart_text(f"{name} fits on {device}: green yes, grey no"), fontsize=10, loc="left")
        return fig

    def _repr_text_(self) -> str:
        axes = ", ".join(f"{k} ({len(v)} values)" for k, v in self.axes.items())
        return f"Sweep of {one_line(self.base.title())} over {axes}: {len(self)} configurations"

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import catalog_html

        rows = [[axis, axis_text(values)] for axis, values in self.axes.items()]
        rows.extend(
            [name, range_text(self.base.base_unit(name), np.asarray(self.magnitude(name)))] for name in self.names()
        )
        return catalog_html(self._repr_text_(), ["quantity", "range over the sweep"], rows)

    def __repr__(self) -> str:
        return f"<{self._repr_text_()}>"


#: The most configurations evaluated at once: a larger grid is evaluated block by block (:meth:`Sweep.magnitude`),
#: so that each intermediate quantity is an array of at most this many numbers (2 MiB of 8-byte numbers) and a
#: sweep's memory is its results, not the dozens of intermediate arrays its formulas pass through.
CHUNK_SIZE = 2**18


#: The most configurations one sweep evaluates: each quantity read is an array of this many 8-byte numbers
#: (7.6 MiB here), and reading a sweep whole (``to_dict()``, the HTML repr) holds dozens of them, so a grid past
#: it could exhaust a notebook's memory (10⁹ configurations take 7.45 GiB per array). Raise it explicitly for a
#: larger grid on a machine that holds it: ``mlsysim_nb.live.sweeps.MAX_SWEEP_SIZE = 10**7`` (reading every
#: quantity of such a sweep one after another peaks at about 0.25 GB, ``make bench``).
MAX_SWEEP_SIZE = 10**6


def check_size(lengths: dict[str, int]) -> None:
    """Refuse, before anything is allocated, a grid of more than :data:`MAX_SWEEP_SIZE` configurations."""
    size = math.prod(lengths.values())
    if size > MAX_SWEEP_SIZE:
        shape = " × ".join(f"{n:,} {name}" for name, n in lengths.items())
        msg = (
            f"the grid holds {size:,} configurations ({shape}), more than the limit of {MAX_SWEEP_SIZE:,} "
            f"(each quantity is an array of {size * 8 / 2**30:,.3g} GiB); sweep fewer values, or raise "
            f"mlsysim_nb.live.sweeps.MAX_SWEEP_SIZE if this machine holds it"
        )
        raise FieldError("sweep", next(reversed(lengths)), msg)


def accelerator(hardware: Any) -> Any:
    """A ``hardware=`` argument as a ``HardwareNode``: a node, or a key of the catalog (``"H100"``).

    Anything else is refused naming the argument and what it accepts: a ``FieldError`` for a key the
    catalog does not hold (listing its keys), a ``FieldUnitError`` (also a ``TypeError``) for another type.
    """
    from mlsysim_nb.records.hardware import Hardware, HardwareNode

    if isinstance(hardware, HardwareNode):
        return hardware
    keys = ", ".join(Hardware)
    if isinstance(hardware, str):
        if hardware in list(Hardware):
            return Hardware[hardware]
        msg = f"no accelerator {one_line(brief(hardware))} in the catalog; give a HardwareNode or one of: {keys}"
        raise FieldError("Sweep", "hardware", msg)
    msg = f"must be a HardwareNode or a catalog key such as 'H100' (one of: {keys}), got {one_line(brief(hardware))}"
    raise FieldUnitError("Sweep", "hardware", msg)


def sweep(scenario: Scenario, **axes: Sequence[Any] | np.ndarray) -> Sweep:
    """Evaluate ``scenario`` over a grid of field values, vectorised.

    Each keyword is a field and its values; the grid is their outer product
    (axis order as given). For a training scenario with activations, sweeping
    ``batch_size`` rescales the activations with it (``activations_at``), as
    the live control does.

    >>> import numpy as np
    >>> from mlsysim_nb import Scenarios, sweep
    >>> s = sweep(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100, batch_size=[8, 16, 32])
    >>> s["training_total"].to("GB").magnitude.round(1)
    array([ 45.4,  66.8, 109.6])
    >>> s.training_fits().tolist()
    [True, True, False]
    >>> s.fits().tolist()  # the state alone, as the scenario's own fits
    [True, True, True]

    Raises
    ------
    TypeError
        For a name that is not a field (listing the valid ones).
    mlsysim_nb.FieldError
        For an invalid value, naming the field and the first offending value; for an axis that is not an
        ordered sequence (a set, a dict, a string) or is empty; for a grid of more than :data:`MAX_SWEEP_SIZE`
        configurations, before anything is allocated.
    """
    if not axes:
        msg = "sweep() needs at least one axis, e.g. sweep(s, batch_size=[1, 2, 4])"
        raise TypeError(msg)
    if getattr(scenario, "is_sweep", False):
        msg = "sweep() starts from a single scenario; this one already holds arrays"
        raise TypeError(msg)
    fields = scenario.field_names()
    unknown = [name for name in axes if name not in fields]
    if unknown:
        msg = f"sweep() got unknown field(s) {', '.join(map(repr, unknown))}; valid fields are: {', '.join(fields)}"
        raise TypeError(msg)
    values = {name: axis_values(name, v) for name, v in axes.items()}
    check_size({name: len(v) for name, v in values.items()})
    check_axes(scenario, values)
    changes: dict[str, Any] = {}
    for index, (name, v) in enumerate(values.items()):
        shape = [1] * len(values)
        shape[index] = -1
        changes[name] = v.reshape(shape)  # a quantity array keeps its unit; variant() converts and checks it
    return Sweep(scenario, values, scenario.variant(**changes))
