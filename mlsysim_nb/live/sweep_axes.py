"""A sweep's axes: read and checked as arrays, and described in words, ticks and ranges.

:func:`mlsysim_nb.live.sweeps.sweep` reads each axis with :func:`axis_values` and checks it with
:func:`check_axes`; its table and plots write the values with :func:`axis_text`, :func:`range_text`
and :func:`tick`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.model.fields import check_quantity, read_sequence
from mlsysim_nb.model.knob import knobs
from mlsysim_nb.model.values import brief, is_quantity, sequence_array
from mlsysim_nb.units import Q_, ureg

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = [
    "MAX_AXIS_VALUES",
    "axis_text",
    "axis_values",
    "bytes_of",
    "check_axes",
    "log_spaced",
    "numeric",
    "plain",
    "range_text",
    "tick",
]


#: The most values one axis may hold: a generator is read at most this far (one more tells that it holds more);
#: an axis longer than this alone makes a grid beyond :data:`mlsysim_nb.live.sweeps.MAX_SWEEP_SIZE`.
MAX_AXIS_VALUES = 10**6


def _listed(name: str, values: Any) -> Any:
    """An axis's values as a list or array: a sequence as it is, a generator read (boundedly), a set refused."""
    if isinstance(values, (str, bytes, bytearray)):
        what = "string" if isinstance(values, str) else "bytes"
        msg = f"must be a sequence of values (a list, a tuple, a range or a 1-D array), got the {what} {brief(values)}"
        raise FieldError("sweep", name, msg)
    if isinstance(values, (set, frozenset, Mapping)):
        why = "a dict is ambiguous (its keys or its values?)" if isinstance(values, Mapping) else "a set has no order"
        msg = f"must be an ordered sequence of values (a list, a tuple, a range or a 1-D array); {why}"
        raise FieldError("sweep", name, f"{msg}, got a {type(values).__name__}")
    if isinstance(values, (list, tuple, range, np.ndarray)) or is_quantity(values):
        return values
    if isinstance(values, Iterator):  # a generator: read it, at most one value past the limit
        read = list(itertools.islice(values, MAX_AXIS_VALUES + 1))
        if len(read) > MAX_AXIS_VALUES:
            msg = f"holds more than {MAX_AXIS_VALUES:,} values (MAX_AXIS_VALUES in mlsysim_nb.live.sweep_axes)"
            raise FieldError("sweep", name, msg)
        return read
    msg = f"must be a sequence of values (a list, a tuple, a range, a generator or a 1-D array), got {brief(values)}"
    raise FieldError("sweep", name, msg)


def axis_values(name: str, values: Any) -> Any:
    """An axis as a 1-D array, or a 1-D quantity array when its values carry units (never dropped).

    A list, tuple, range, 1-D array or quantity array is read as it is, and a generator is read in full (up to
    :data:`MAX_AXIS_VALUES`); a set (no order), a dict, a string and anything empty are refused naming the axis.
    """
    values = _listed(name, values)
    if isinstance(values, (list, tuple)) and any(isinstance(v, ureg.Quantity) or _quantity_text(v) for v in values):
        values = read_sequence("sweep", name, values)
    magnitude = getattr(values, "magnitude", values)
    if isinstance(magnitude, (list, tuple)):
        magnitude = sequence_array("sweep", name, magnitude)
    magnitude = np.asarray(magnitude)
    if magnitude.size == 0:
        raise FieldError("sweep", name, "has no values: give at least one")
    if magnitude.ndim != 1:
        msg = f"must be a 1-D sequence of values (one axis of the grid), got shape {magnitude.shape}"
        raise FieldError("sweep", name, msg)
    return Q_(magnitude, values.units) if isinstance(values, ureg.Quantity) else magnitude


def _quantity_text(value: Any) -> bool:
    """``"2 GB"`` (a number, then a unit) rather than a choice such as ``"selective"``."""
    return isinstance(value, str) and value.strip()[:1].isdigit()


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
