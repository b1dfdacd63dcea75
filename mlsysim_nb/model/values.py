"""The number primitives the field checkers share.

Scalars out of NumPy and ``Decimal``, arrays of numbers, values no float can hold, and the short forms
of a value a message shows.

:mod:`mlsysim_nb.model.counts` checks counts with them and :mod:`mlsysim_nb.model.fields` byte sizes,
rates and choices.
"""

from __future__ import annotations

import decimal
import numbers
import sys
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.units import ureg

_ARRAY_KINDS = "iuf"

#: A count typed as a decimal (``Q_(8.03, "Gparam")`` is 8029999999.999999 in binary floating point)
#: is read as the whole number it misses by at most this relative amount.
WHOLE_NUMBER_TOLERANCE = 1e-9


def is_real(value: Any) -> bool:
    """A real number of any kind (int, float, Fraction, Decimal), without narrowing the type for mypy."""
    return isinstance(value, (numbers.Real, decimal.Decimal))


#: The largest magnitude a float holds; a larger int, Decimal or Fraction is refused before any float().
FLOAT_MAX = sys.float_info.max


def as_scalar(value: Any) -> Any:
    """NumPy scalars and 0-d arrays as Python numbers; a ``Decimal`` a float can hold as an int or float.

    A subclass of ``int`` or ``float`` is read as the number it holds, through the built-in type's own
    conversion (an override of ``__float__`` or ``__index__`` is never called). A ``Decimal`` that is not
    finite (NaN, sNaN, infinity) or too large for a float is returned unchanged, for the checker to refuse
    with its range (:func:`refuse_unrepresentable`).
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    if type(value) is not int and isinstance(value, int) and not isinstance(value, bool):
        value = int.__index__(value)
    elif type(value) is not float and isinstance(value, float):
        value = float.__float__(value)
    if isinstance(value, decimal.Decimal) and value.is_finite() and abs(value) <= FLOAT_MAX:
        if value == value.to_integral_value():
            return int(value)
        if value == 0 or float(value) != 0:  # a Decimal too small for a float stays, to be refused
            return float(value)
    return value


def unrepresentable(value: Any) -> bool:
    """A real number no float can stand for: NaN of a ``Decimal`` (signalling too), or beyond the float range."""
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        return value.is_nan()
    return not isinstance(value, float) and is_real(value) and abs(value) > FLOAT_MAX


def refuse_unrepresentable(owner: str, field: str, value: Any, bound: str, unit_text: str = "") -> None:
    """A :class:`FieldError` naming the range (``bound``) for a value too large for a float, or a Decimal NaN."""
    if isinstance(value, decimal.Decimal) and value.is_nan():
        raise FieldError(owner, field, f"must be a finite number ({bound}), got {show_number(value)}")
    finite = bound.startswith("a finite")  # no maximum: say why the number is refused
    tail = ", too large to represent" if finite else ""
    raise FieldError(owner, field, f"must be {bound}, got {show_number(value)}{unit_text}{tail}")


def brief(value: Any) -> str:
    """A value for a message: a whole number built safely (``1e+5000``), anything else its repr cut to 60 characters."""
    if isinstance(value, int) and not isinstance(value, bool):
        return show_number(value)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails (an int of too many digits) still gets named
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def near_whole(value: Any) -> Any:
    """True where ``value`` is a whole number up to float rounding (:data:`WHOLE_NUMBER_TOLERANCE`)."""
    return np.abs(value - np.round(value)) <= WHOLE_NUMBER_TOLERANCE * np.maximum(1.0, np.abs(value))


def is_quantity(value: Any) -> bool:
    """A pint quantity of the package's registry."""
    return isinstance(value, ureg.Quantity)


def _object_floats(owner: str, field: str, value: np.ndarray, check_one: Any) -> np.ndarray:
    """An array of Python numbers as floats; an element no float can hold goes to ``check_one`` to be refused."""
    for element in value.flat:
        if unrepresentable(as_scalar(element)):
            if check_one is not None:
                check_one(element)
            refuse_unrepresentable(owner, field, as_scalar(element), "a finite number")
    return np.array([float(as_scalar(v)) for v in value.flat]).reshape(value.shape)


def sequence_array(owner: str, field: str, value: list[Any] | tuple[Any, ...]) -> np.ndarray:
    """A list or tuple as a NumPy array, or a FieldError: ragged, or holding what no array can (mixed units)."""
    try:
        return np.asarray(value)
    except Exception:  # noqa: BLE001 - ragged (ValueError) or quantities of two dimensions (pint's error)
        raise FieldError(owner, field, "expected a flat sequence of values of one kind and shape") from None


def check_axis_shape(owner: str, field: str, value: np.ndarray) -> None:
    """An array field varies along one axis: a 1-D array, or a sweep's axis laid out on its grid (``(1, n, 1)``)."""
    if sum(n > 1 for n in value.shape) > 1:
        msg = (
            f"must be a single value or a 1-D array of values (one axis of a sweep), got an array of shape "
            f"{value.shape}; for a grid over two fields use sweep(scenario, {field}=[...], other=[...])"
        )
        raise FieldError(owner, field, msg)


def as_array(owner: str, field: str, value: Any, check_one: Any = None) -> np.ndarray | None:
    """A NumPy array of numbers, or None when ``value`` is a scalar.

    An element no float can hold (``10**400``, ``Decimal("sNaN")``) is passed to ``check_one``,
    the field's scalar checker, which refuses it with the field's range. An array that varies along
    more than one axis is refused (:func:`check_axis_shape`).
    """
    if isinstance(value, (list, tuple)):
        value = sequence_array(owner, field, value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return None
        check_axis_shape(owner, field, value)
        if value.dtype.kind == "O" and value.size and all(is_real(as_scalar(v)) for v in value.flat):
            value = _object_floats(owner, field, value, check_one)
        if value.dtype.kind == "f" and value.dtype.itemsize > np.dtype(float).itemsize:  # long double: as floats
            beyond = np.abs(value) > FLOAT_MAX
            if np.any(beyond):
                element = value[beyond].flat[0]
                if check_one is not None:
                    check_one(element)
                refuse_unrepresentable(owner, field, element, "a finite number")
            value = value.astype(float)
        if value.dtype.kind not in _ARRAY_KINDS:
            raise FieldError(owner, field, f"expected numbers, got an array of {value.dtype}")
        if value.size == 0:
            raise FieldError(owner, field, "got an empty array: give at least one value")
        array: np.ndarray = value
        return array
    return None


def first_bad(array: np.ndarray, bad: np.ndarray) -> Any:
    """The first element of ``array`` where ``bad`` holds, as a Python number."""
    return array[bad].flat[0].item()


def shown(value: Any) -> str:
    """The offending value in a message: a float as Python writes it, any other number built safely."""
    return repr(value) if isinstance(value, float) else show_number(value)
