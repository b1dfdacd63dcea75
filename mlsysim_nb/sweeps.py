"""Sweeps: one scenario with NumPy-array fields evaluates a whole design space at once.

``sweep(scenario, batch_size=[1, 2, 4, ...], seq_len=[...])`` lays the axes
out as a grid, builds **one** scenario whose fields are broadcasting arrays
(validated element-wise), and evaluates every formula once, vectorised: no
loop over configurations. The result is tidy: each axis and each quantity as
an array of the grid's shape, with units, plus plot helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.base import wrapper
from mlsysim_nb.display import RichRepr
from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.physics import FORMULAS, QUANTITIES
from mlsysim_nb.units import Q_, ureg

if TYPE_CHECKING:
    from mlsysim_nb.base import Scenario

__all__ = ["Sweep", "sweep"]


def _quantity_text(value: Any) -> bool:
    """``"2 GB"`` (a number, then a unit) rather than a choice such as ``"selective"``."""
    return isinstance(value, str) and value.strip()[:1].isdigit()


def _axis_values(name: str, values: Any) -> Any:
    """An axis as a 1-D array, or a 1-D quantity array when its values carry units (never dropped)."""
    if isinstance(values, str):
        msg = f"sweep axis {name!r} must be a sequence of values, got the string {values!r}"
        raise TypeError(msg)
    if isinstance(values, (list, tuple)) and any(isinstance(v, ureg.Quantity) or _quantity_text(v) for v in values):
        try:
            values = ureg.Quantity.from_list([Q_(v) if isinstance(v, str) else v for v in values])
        except Exception as err:  # noqa: BLE001 - mixed units or unreadable text: say which axis
            msg = f"sweep axis {name!r}: its values must be quantities of one dimension ({err})"
            raise FieldError("sweep", name, msg) from None
    magnitude = np.asarray(getattr(values, "magnitude", values))
    if magnitude.ndim != 1 or magnitude.size == 0:
        msg = f"sweep axis {name!r} must be a non-empty 1-D sequence of values, got shape {magnitude.shape}"
        raise ValueError(msg)
    return Q_(magnitude, values.units) if isinstance(values, ureg.Quantity) else magnitude


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
        """The quantities this sweep can give (those applicable to its scenario)."""
        out = []
        for name in self.base.FORMULA_NAMES:
            try:
                self.scenario.magnitude(name)
            except (NotApplicableError, KeyError):
                continue
            out.append(name)
        return out

    def magnitude(self, name: str) -> np.ndarray:
        """A quantity's (or a swept field's) base-unit magnitudes (bytes, seconds, counts) over the grid."""
        values: np.ndarray = np.broadcast_to(np.asarray(self.scenario.magnitude(name)), self.shape)
        return values

    def __getitem__(self, name: str) -> Any:
        if name in self.axes:
            return self.grid(name)
        if name not in FORMULAS:
            msg = f"no quantity {name!r}; available: {', '.join(self.names())}"
            raise KeyError(msg)
        return wrapper(name)(np.array(self.magnitude(name)))

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
        if name not in FORMULAS or name not in self.base.FORMULA_NAMES:
            msg = f"no quantity {name!r} in this sweep; available: {', '.join(self.names())}"
            raise KeyError(msg)
        if QUANTITIES[name].base != "byte":
            unit = QUANTITIES[name].base or "a plain number"
            msg = (
                f"{name} is not an amount of memory ({unit}), so it cannot be held against a device's "
                f"capacity; byte quantities here: {', '.join(n for n in self.names() if QUANTITIES[n].base == 'byte')}"
            )
            raise ValueError(msg)
        return name, np.asarray(self.magnitude(name), dtype=float)

    def _capacity(self, hardware: Any) -> tuple[float, str]:
        node = hardware if hardware is not None else getattr(self.base, "hardware", None)
        if isinstance(node, str):
            from mlsysim_nb.hardware import Hardware

            node = Hardware[node]
        if node is None:
            msg = "a fit needs hardware: pass hardware=Hardware.H100 (the scenario has none)"
            raise NotApplicableError("fits", "hardware", msg)
        if not hasattr(node, "memory"):
            msg = f"hardware must be a HardwareNode or a catalog key such as 'H100', got {node!r}"
            raise TypeError(msg)
        return float(node.memory.capacity.m_as("byte")), node.name

    def fits(self, quantity: str | None = None, *, hardware: Any = None, plus: Any = None) -> np.ndarray:
        """Where ``quantity`` (+ ``plus`` bytes, e.g. a training state) fits the device's memory.

        ``quantity`` defaults to ``training_total`` (or ``total`` without
        activations) for a training sweep and ``activations_selective`` for an
        activation sweep; ``hardware`` defaults to the scenario's.
        """
        _, used = self._bytes_in_use(quantity)
        if plus is not None:
            used = used + _bytes(plus)
        capacity, _ = self._capacity(hardware)
        return used <= capacity

    # -- plots ----------------------------------------------------------------------------
    def plot(self, quantity: str | None = None, x: str | None = None, *, hardware: Any = None, ax: Any = None) -> Any:
        """``quantity`` against axis ``x`` (one line per value of a second axis), with the capacity line."""
        from mlsysim_nb.charts import new_axes

        x = x or next(iter(self.axes))
        name, used = self._bytes_in_use(quantity)
        fig, ax = new_axes(ax)
        xs = _plain(self.axes[x])
        others = [a for a in self.axes if a != x]
        values = np.moveaxis(used, list(self.axes).index(x), 0).reshape(len(xs), -1)
        labels = [""] if not others else [f"{others[0]} = {v:g}" for v in _plain(self.axes[others[0]])]
        is_bytes = QUANTITIES[name].base == "byte"
        scale = 1e9 if is_bytes else 1.0
        for column, label in zip(values.T, labels, strict=False):
            ax.plot(xs, column / scale, marker=".", label=label or name)
        try:
            capacity, device = self._capacity(hardware)
        except NotApplicableError:
            capacity, device = 0.0, ""
        if capacity and is_bytes:
            ax.axhline(capacity / scale, color="#1a1a1a", linestyle="--", linewidth=1.2, label=f"{device} capacity")
            over = np.nonzero(values[:, 0] > capacity)[0]
            if over.size:  # the fits boundary: the first value of x that no longer fits
                first = xs[over[0]]
                ax.axvspan(first, xs[-1], color="#d0d0d0", alpha=0.4, label=f"does not fit from {x} = {first}")
        ax.set_xlabel(x)
        ax.set_ylabel(f"{name} ({'GB' if is_bytes else QUANTITIES[name].base or 'value'})")
        if _log_spaced(xs):
            ax.set_xscale("log", base=2)
        ax.legend(fontsize=8, frameon=False)
        return fig

    def fit_map(self, x: str, y: str, quantity: str | None = None, *, hardware: Any = None, plus: Any = None,
                ax: Any = None) -> Any:  # fmt: skip
        """Fits / does-not-fit over two axes, titled with the device (green fits, grey does not)."""
        from matplotlib.colors import ListedColormap

        from mlsysim_nb.charts import new_axes

        if len(self.axes) != 2 or {x, y} != set(self.axes):
            msg = f"fit_map needs a sweep over exactly the two axes {x!r} and {y!r}"
            raise ValueError(msg)
        mask = self.fits(quantity, hardware=hardware, plus=plus)
        if list(self.axes) != [y, x]:
            mask = mask.T
        _, device = self._capacity(hardware)
        fig, ax = new_axes(ax)
        cmap = ListedColormap(["#d0d0d0", "#009E73"])
        ax.pcolormesh(np.arange(len(self.axes[x]) + 1), np.arange(len(self.axes[y]) + 1), mask.astype(int),
                      cmap=cmap, vmin=0, vmax=1, edgecolors="white", linewidth=0.5)  # fmt: skip
        ax.set_xticks(np.arange(len(self.axes[x])) + 0.5, labels=[f"{v:g}" for v in _plain(self.axes[x])], rotation=45)
        ax.set_yticks(np.arange(len(self.axes[y])) + 0.5, labels=[f"{v:g}" for v in _plain(self.axes[y])])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        name, _ = self._bytes_in_use(quantity)
        if plus is not None:
            name += f" + {_bytes(plus) / 1e9:.3g} GB"
        ax.set_title(f"{name} fits on {device}: green yes, grey no", fontsize=10, loc="left")
        return fig

    def _repr_text_(self) -> str:
        axes = ", ".join(f"{k} ({len(v)} values)" for k, v in self.axes.items())
        return f"Sweep of {self.base.title()} over {axes}: {len(self)} configurations"

    def _repr_html_(self) -> str:
        from mlsysim_nb.formatting import format_magnitude
        from mlsysim_nb.repr_html import catalog_html

        rows = [
            [axis, format_magnitude("", _plain(values)) + _unit_suffix(values)] for axis, values in self.axes.items()
        ]
        rows.extend(
            [name, format_magnitude(QUANTITIES[name].base, np.asarray(self.magnitude(name)))] for name in self.names()
        )
        return catalog_html(self._repr_text_(), ["quantity", "range over the sweep"], rows)

    def __repr__(self) -> str:
        return f"<{self._repr_text_()}>"


def _bytes(amount: Any) -> float:
    """Bytes in a quantity or text such as ``"2 GB"``; a plain number is bytes (the rule for byte fields)."""
    from mlsysim_nb.fields import check_quantity

    _, magnitude = check_quantity("Sweep.fits", "plus", amount, "byte", positive=False)
    return float(magnitude)


def _plain(values: Any) -> np.ndarray:
    """An axis's numbers, without their unit (for plot ticks)."""
    return np.asarray(getattr(values, "magnitude", values))


def _unit_suffix(values: Any) -> str:
    return f" {values.units:~P}" if isinstance(values, ureg.Quantity) else ""


def _log_spaced(values: np.ndarray) -> bool:
    v = np.asarray(values, dtype=float)
    return bool(v.size > 2 and np.all(v > 0) and np.allclose(v[1:] / v[:-1], v[1] / v[0]) and v[1] / v[0] > 1.5)


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
    >>> s.fits().tolist()
    [True, True, False]

    Raises
    ------
    TypeError
        For a name that is not a field (listing the valid ones).
    mlsysim_nb.FieldError
        For an invalid value, naming the field and the first offending value.
    """
    if not axes:
        msg = "sweep() needs at least one axis, e.g. sweep(s, batch_size=[1, 2, 4])"
        raise TypeError(msg)
    if getattr(scenario, "is_sweep", False):
        msg = "sweep() starts from a single scenario; this one already holds arrays"
        raise TypeError(msg)
    values = {name: _axis_values(name, v) for name, v in axes.items()}
    changes: dict[str, Any] = {}
    for index, (name, v) in enumerate(values.items()):
        shape = [1] * len(values)
        shape[index] = -1
        changes[name] = v.reshape(shape)  # a quantity array keeps its unit; variant() converts and checks it
    return Sweep(scenario, values, scenario.rebind(**changes))
