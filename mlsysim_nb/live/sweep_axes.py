"""A sweep's axes: read and checked as arrays, and described in words, ticks and ranges.

:func:`mlsysim_nb.live.sweeps.sweep` reads each axis with :func:`axis_values` and checks it with
:func:`check_axes`; its table and plots write the values with :func:`axis_text`, :func:`range_text`
and :func:`tick`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.model.fields import check_quantity
from mlsysim_nb.model.knob import knobs
from mlsysim_nb.model.text import parse_quantity
from mlsysim_nb.units import Q_, ureg

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["axis_text", "axis_values", "bytes_of", "check_axes", "log_spaced", "numeric", "plain", "range_text", "tick"]


def _quantity_text(value: Any) -> bool:
    """``"2 GB"`` (a number, then a unit) rather than a choice such as ``"selective"``."""
    return isinstance(value, str) and value.strip()[:1].isdigit()


def axis_values(name: str, values: Any) -> Any:
    """An axis as a 1-D array, or a 1-D quantity array when its values carry units (never dropped)."""
    if isinstance(values, str):
        msg = f"sweep axis {name!r} must be a sequence of values, got the string {values!r}"
        raise TypeError(msg)
    if isinstance(values, (list, tuple)) and any(isinstance(v, ureg.Quantity) or _quantity_text(v) for v in values):
        try:
            values = ureg.Quantity.from_list([parse_quantity(v) if isinstance(v, str) else v for v in values])
        except Exception as err:  # noqa: BLE001 - mixed units or unreadable text: say which axis
            msg = f"sweep axis {name!r}: its values must be quantities of one dimension ({err})"
            raise FieldError("sweep", name, msg) from None
    magnitude = np.asarray(getattr(values, "magnitude", values))
    if magnitude.ndim != 1 or magnitude.size == 0:
        msg = f"sweep axis {name!r} must be a non-empty 1-D sequence of values, got shape {magnitude.shape}"
        raise ValueError(msg)
    return Q_(magnitude, values.units) if isinstance(values, ureg.Quantity) else magnitude


def bytes_of(amount: Any) -> float:
    """Bytes in a quantity or text such as ``"2 GB"``; a plain number is bytes (the rule for byte fields)."""
    _, magnitude = check_quantity("Sweep.fits", "plus", amount, "byte", positive=False)
    return float(magnitude)


def numeric(values: np.ndarray) -> bool:
    """Numbers (counts, sizes), as opposed to a choice such as a strategy or an on/off flag."""
    return np.asarray(values).dtype.kind in "iuf"


def tick(value: Any) -> str:
    """A number as ``4`` or ``1e+03``; a choice as itself."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    return f"{value:g}"


def axis_text(values: Any) -> str:
    """An axis's range for the table (``1 … 64 (4 values)``), or its choices in order (``none, full``)."""
    from mlsysim_nb.render.derivation import choice_values
    from mlsysim_nb.render.numbers import format_magnitude

    numbers = plain(values)
    if not numeric(numbers):
        return choice_values(numbers)
    return format_magnitude("", numbers) + _unit_suffix(values)


def range_text(base: str, values: np.ndarray) -> str:
    """A quantity's range over the sweep; a yes/no answer as how often it holds (``true for 2 of 3``)."""
    from mlsysim_nb.render.numbers import format_magnitude

    if values.dtype == bool:
        return f"true for {int(values.sum()):,} of {values.size:,}"
    return format_magnitude(base, values)


def plain(values: Any) -> np.ndarray:
    """An axis's numbers, without their unit (for plot ticks)."""
    return np.asarray(getattr(values, "magnitude", values))


def _unit_suffix(values: Any) -> str:
    return f" {values.units:~P}" if isinstance(values, ureg.Quantity) else ""


def log_spaced(values: np.ndarray) -> bool:
    """Three or more positive values in one ratio above 1.5 (powers of two, say): a plot takes a log axis."""
    v = np.asarray(values, dtype=float)
    return bool(v.size > 2 and np.all(v > 0) and np.allclose(v[1:] / v[:-1], v[1] / v[0]) and v[1] / v[0] > 1.5)


def check_axes(scenario: Scenario, values: dict[str, Any]) -> None:
    """Each axis through its field's own checker (as ``variant()`` checks it), before anything reads it.

    A field that follows another (the activations follow the batch) is computed from the checked
    values, so an element out of range is refused with the field's rule, never as an overflow.
    """
    declared = knobs(scenario)
    owner = type(scenario).__name__
    for name, v in values.items():
        if name in declared:
            declared[name].check(owner, name, v)
