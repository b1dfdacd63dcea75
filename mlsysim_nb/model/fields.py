"""Validation of field values: counts, byte sizes and rates, scalars or NumPy arrays.

A field's declaration (:func:`~mlsysim_nb.model.knob.knob`) names the checker it goes through.

Each checker returns the value to store on the (frozen) record and its
magnitude in base units, or raises :class:`~mlsysim_nb.errors.FieldError`
naming the field and the reason. A plain number given to a byte field means
bytes; a quantity of the wrong dimension is refused.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
import sys
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError, show_number
from mlsysim_nb.model.text import parse_quantity
from mlsysim_nb.units import Q_, dimensionality, factor, ureg

__all__ = [
    "check_choice",
    "check_count",
    "check_number",
    "check_quantity",
    "parse_quantity",
]

_ARRAY_KINDS = "iuf"

#: A count typed as a decimal (``Q_(8.03, "Gparam")`` is 8029999999.999999 in binary floating point)
#: is read as the whole number it misses by at most this relative amount.
WHOLE_NUMBER_TOLERANCE = 1e-9


def _is_real(value: Any) -> bool:
    """A real number of any kind (int, float, Fraction, Decimal), without narrowing the type for mypy."""
    return isinstance(value, (numbers.Real, decimal.Decimal))


#: The largest magnitude a float holds; a larger int, Decimal or Fraction is refused before any float().
_FLOAT_MAX = sys.float_info.max


def _scalar(value: Any) -> Any:
    """NumPy scalars and 0-d arrays as Python numbers; a ``Decimal`` a float can hold as an int or float.

    A ``Decimal`` that is not finite (NaN, sNaN, infinity) or too large for a float is returned
    unchanged, for the checker to refuse with its range (:func:`_refuse_unrepresentable`).
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, decimal.Decimal) and value.is_finite() and abs(value) <= _FLOAT_MAX:
        if value == value.to_integral_value():
            return int(value)
        if value == 0 or float(value) != 0:  # a Decimal too small for a float stays, to be refused
            return float(value)
    return value


def _unrepresentable(value: Any) -> bool:
    """A real number no float can stand for: NaN of a ``Decimal`` (signalling too), or beyond the float range."""
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        return value.is_nan()
    return not isinstance(value, float) and _is_real(value) and abs(value) > _FLOAT_MAX


def _refuse_unrepresentable(owner: str, field: str, value: Any, bound: str, unit_text: str = "") -> None:
    """A :class:`FieldError` naming the range (``bound``) for a value too large for a float, or a Decimal NaN."""
    if isinstance(value, decimal.Decimal) and value.is_nan():
        raise FieldError(owner, field, f"must be a finite number ({bound}), got {show_number(value)}")
    finite = bound.startswith("a finite")  # no maximum: say why the number is refused
    tail = ", too large to represent" if finite else ""
    raise FieldError(owner, field, f"must be {bound}, got {show_number(value)}{unit_text}{tail}")


def _brief(value: Any) -> str:
    """A value for a message: a whole number built safely (``1e+5000``), anything else its repr cut to 60 characters."""
    if isinstance(value, int) and not isinstance(value, bool):
        return show_number(value)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails (an int of too many digits) still gets named
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _near_whole(value: Any) -> Any:
    """True where ``value`` is a whole number up to float rounding (:data:`WHOLE_NUMBER_TOLERANCE`)."""
    return np.abs(value - np.round(value)) <= WHOLE_NUMBER_TOLERANCE * np.maximum(1.0, np.abs(value))


def _is_quantity(value: Any) -> bool:
    return isinstance(value, ureg.Quantity)


def _object_floats(owner: str, field: str, value: np.ndarray, check_one: Any) -> np.ndarray:
    """An array of Python numbers as floats; an element no float can hold goes to ``check_one`` to be refused."""
    for element in value.flat:
        if _unrepresentable(_scalar(element)):
            if check_one is not None:
                check_one(element)
            _refuse_unrepresentable(owner, field, _scalar(element), "a finite number")
    return np.array([float(_scalar(v)) for v in value.flat]).reshape(value.shape)


def _as_array(owner: str, field: str, value: Any, check_one: Any = None) -> np.ndarray | None:
    """A NumPy array of numbers, or None when ``value`` is a scalar.

    An element no float can hold (``10**400``, ``Decimal("sNaN")``) is passed to ``check_one``,
    the field's scalar checker, which refuses it with the field's range.
    """
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value)
        except ValueError:
            raise FieldError(owner, field, "expected a flat sequence of numbers of one shape") from None
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return None
        if value.dtype.kind == "O" and value.size and all(_is_real(_scalar(v)) for v in value.flat):
            value = _object_floats(owner, field, value, check_one)
        if value.dtype.kind not in _ARRAY_KINDS:
            raise FieldError(owner, field, f"expected numbers, got an array of {value.dtype}")
        if value.size == 0:
            raise FieldError(owner, field, "got an empty array: give at least one value")
        array: np.ndarray = value
        return array
    return None


def _first_bad(array: np.ndarray, bad: np.ndarray) -> Any:
    return array[bad].flat[0].item()


def _got(value: Any) -> str:
    """The offending value in a message: a float as Python writes it, any other number built safely."""
    return repr(value) if isinstance(value, float) else show_number(value)


@functools.lru_cache(maxsize=1024)
def _count_bound(minimum: int, maximum: int | None) -> str:
    return f"from {show_number(minimum)} to {show_number(maximum)}" if maximum is not None else "a finite whole number"


def _count_text(owner: str, field: str, value: str) -> Any:
    """Count text such as ``"8.03 Gparam"`` or ``"32"``, read like a quantity."""
    try:
        return parse_quantity(value)
    except Exception as err:  # noqa: BLE001 - pint raises many kinds on bad text; all mean "cannot read"
        raise FieldError(owner, field, f"cannot read {_brief(value)} as a count ({err})") from None


def _count_magnitude(owner: str, field: str, value: Any, bound: str) -> Any:
    """A dimensionless quantity's magnitude in counts (``Q_(8.03, "Gparam")`` -> 8029999999.999999)."""
    if not value.units.dimensionless:  # the unit alone: a magnitude of 10**400 is not converted
        raise FieldUnitError(owner, field, f"must be a plain count, got a quantity in {value.units:~P}")
    scale = factor(value.units, "count")
    magnitude = value.magnitude
    if scale == 1.0:
        return magnitude
    if np.ndim(magnitude) == 0:
        number = _scalar(magnitude)
        if _unrepresentable(number):
            _refuse_unrepresentable(owner, field, number, bound, f" {value.units:~P}")
        if not _is_real(number) or isinstance(number, bool):
            raise FieldError(owner, field, f"must be a whole number, got {_brief(magnitude)}")
        magnitude = float(number)
    with np.errstate(over="ignore"):
        return magnitude * scale


def check_count(  # noqa: C901 - one check per way a count can be wrong, each with its message
    owner: str, field: str, value: Any, *, minimum: int = 1, maximum: int | None = None, optional: bool = False
) -> Any:
    """A whole number ``>= minimum`` (an int, an integral float, count text, or an array of them).

    Text is read as a quantity (``"8.03 Gparam"``), with the same whole-number tolerance.

    >>> check_count("S", "batch_size", 32)
    32
    >>> check_count("S", "batch_size", 0)
    Traceback (most recent call last):
    ...
    mlsysim_nb.errors.FieldError: S.batch_size: must be at least 1, got 0
    """
    if value is None:
        if optional:
            return None
        raise FieldError(owner, field, "is required")
    bound = _count_bound(minimum, maximum)
    if isinstance(value, str):
        value = _count_text(owner, field, value)
    if _is_quantity(value):
        value = _count_magnitude(owner, field, value, bound)
    array = _as_array(owner, field, value, lambda v: check_count(owner, field, v, minimum=minimum, maximum=maximum))
    if array is not None:
        return _check_count_array(owner, field, array, minimum, maximum)
    value = _scalar(value)
    if isinstance(value, bool) or not _is_real(value):
        raise FieldError(owner, field, f"must be a whole number, got {_brief(value)}")
    if _unrepresentable(value):
        _refuse_unrepresentable(owner, field, value, bound)
    value = value if isinstance(value, int) else float(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(owner, field, f"must be a finite whole number, got {value!r}")
    if not isinstance(value, int):
        if not _near_whole(value):
            raise FieldError(owner, field, f"must be a whole number, got the fraction {value!r}")
        value = round(value)
    if value < minimum:
        raise FieldError(owner, field, f"must be at least {show_number(minimum)}, got {show_number(value)}")
    if maximum is not None and value > maximum:
        raise FieldError(owner, field, f"must be at most {show_number(maximum)}, got {show_number(value)}")
    return value


def _check_count_array(owner: str, field: str, array: np.ndarray, minimum: int, maximum: int | None) -> np.ndarray:
    if not np.all(np.isfinite(array)):
        bad = ~np.isfinite(array)
        raise FieldError(owner, field, f"must be finite whole numbers, got {_first_bad(array, bad)!r}")
    frac = ~_near_whole(array)
    if np.any(frac):
        raise FieldError(owner, field, f"must be whole numbers, got the fraction {_first_bad(array, frac)!r}")
    low = array < minimum
    if np.any(low):
        got = show_number(_first_bad(array, low))
        raise FieldError(owner, field, f"must be at least {show_number(minimum)}, got {got}")
    if maximum is not None:
        high = array > maximum
        if np.any(high):
            got = show_number(_first_bad(array, high))
            raise FieldError(owner, field, f"must be at most {show_number(maximum)}, got {got}")
    return np.round(array).astype(np.int64)


def _plainly_valid(value: Any, *, positive: bool, maximum: float | None) -> bool:
    if type(value) is not float and type(value) is not int:
        return False
    if type(value) is int and abs(value) > _FLOAT_MAX:
        return False
    in_range = value > 0 if positive else value >= 0
    return in_range and abs(value) != math.inf and (maximum is None or value <= maximum)


def _number_bound(positive: bool, maximum: float | None, unit_text: str) -> str:
    if maximum is not None:
        return f"at most {show_number(maximum)}{unit_text}"
    return "a finite number" + (" more than 0" if positive else " 0 or more")


def check_number(  # noqa: C901, PLR0912 - one check per way a number can be wrong, each with its message
    owner: str,
    field: str,
    value: Any,
    *,
    positive: bool = True,
    optional: bool = False,
    maximum: float | None = None,
    unit_text: str = "",
    bound: str = "",
) -> Any:
    """A finite real number (or array) that is positive (or ``>= 0`` with ``positive=False``) and ``<= maximum``.

    ``bound`` names the range in a refusal of a number too large for a float (default: from ``maximum``).

    >>> check_number("S", "precision_bytes", 1e300, maximum=8, unit_text=" B")
    Traceback (most recent call last):
    ...
    mlsysim_nb.errors.FieldError: S.precision_bytes: must be at most 8 B, got 1e+300 B
    """
    if _plainly_valid(value, positive=positive, maximum=maximum):  # the common case, without conversions
        return value
    if value is None:
        if optional:
            return None
        raise FieldError(owner, field, "is required")
    bound = bound or _number_bound(positive, maximum, unit_text)

    def check_one(element: Any) -> Any:
        return check_number(owner, field, element, positive=positive, maximum=maximum, unit_text=unit_text, bound=bound)

    array = _as_array(owner, field, value, check_one)
    if array is not None:
        bad = ~np.isfinite(array) | ((array <= 0) if positive else (array < 0))
        if np.any(bad):
            need = "positive" if positive else "zero or more"
            raise FieldError(owner, field, f"must be {need} and finite, got {_first_bad(array, bad)!r}")
        if maximum is not None and np.any(array > maximum):
            got = show_number(_first_bad(array, array > maximum))
            raise FieldError(owner, field, f"must be at most {show_number(maximum)}{unit_text}, got {got}{unit_text}")
        return array
    value = _scalar(value)
    if isinstance(value, bool) or not _is_real(value):
        raise FieldError(owner, field, f"must be a number, got {_brief(value)}")
    if _unrepresentable(value):
        if not (isinstance(value, decimal.Decimal) and value.is_nan()) and value < 0:
            need = "positive" if positive else "zero or more"
            raise FieldError(owner, field, f"must be {need}, got {show_number(value)}{unit_text}")
        _refuse_unrepresentable(owner, field, value, bound, unit_text)
    if not isinstance(value, (int, float)):
        tiny = value != 0
        value = float(value)
        if tiny and value == 0:
            raise FieldError(owner, field, "must be a number a float can hold, got one too small to represent")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(owner, field, f"must be finite, got {value!r}")
    if positive and not value > 0:
        raise FieldError(owner, field, f"must be positive, got {_got(value)}")
    if not positive and value < 0:
        raise FieldError(owner, field, f"must be zero or more, got {_got(value)}")
    if maximum is not None and value > maximum:
        raise FieldError(
            owner, field, f"must be at most {show_number(maximum)}{unit_text}, got {show_number(value)}{unit_text}"
        )
    return value


_SHORT_UNITS = {"byte": " B", "byte/second": " B/s", "second": " s", "FLOP/second": " FLOP/s"}


def check_quantity(
    owner: str,
    field: str,
    value: Any,
    base: str,
    *,
    positive: bool = True,
    optional: bool = False,
    plain_unit: str | None = None,
    allow_plain: bool = True,
    maximum: float | None = None,
    minimum: float | None = None,
    rule: str = "",
) -> tuple[Any, Any]:
    """A quantity of the dimension of ``base``; returns ``(stored, magnitude in base)``.

    A plain number is read in ``plain_unit`` (default: ``base``), so
    ``bytes_per_value=2`` is 2 bytes. A string such as ``"80 GiB"`` is parsed.
    ``maximum`` and ``minimum`` bound the magnitude in ``base``; ``rule`` says the range in words
    (default: the two numbers).

    >>> check_quantity("S", "bytes_per_value", 2, "byte")
    (<Quantity(2, 'byte')>, 2)
    >>> check_quantity("S", "bytes_per_value", Q_(3, "s"), "byte")
    Traceback (most recent call last):
    ...
    mlsysim_nb.errors.FieldUnitError: S.bytes_per_value: must be in units of [information] (like byte), ...
    """
    if value is None:
        if optional:
            return None, None
        raise FieldError(owner, field, "is required")
    if isinstance(value, str):
        try:
            value = parse_quantity(value)
        except Exception as err:  # noqa: BLE001 - pint raises many kinds on bad text; all mean "cannot read"
            raise FieldError(owner, field, f"cannot read {_brief(value)} as a quantity ({err})") from None
    short = _SHORT_UNITS.get(base, f" {base}")
    bound = rule or _quantity_bound(positive, minimum, maximum, short)
    if not _is_quantity(value):
        if not allow_plain:
            msg = f"must be a quantity with a unit, like Q_(2, {base!r}), got {_brief(value)}"
            raise FieldUnitError(owner, field, msg)
        unit = plain_unit or base
        number = check_number(owner, field, value, positive=positive, bound=bound, unit_text=short)
        scale = factor(unit, base) if unit != base else 1.0
        magnitude = _in_base(owner, field, number, scale, (short, f" {unit}"), (minimum, maximum, rule))
        return Q_(number, unit), magnitude
    try:
        scale = factor(value.units, base)
    except Exception:  # noqa: BLE001 - DimensionalityError or an unparseable unit: both are "wrong unit"
        want = dimensionality(base)
        got = dimensionality(value.units)
        msg = f"must be in units of {want} (like {base}), got a quantity in {value.units:~P}, which is {got}"
        raise FieldUnitError(owner, field, msg) from None
    given = _unit_text(value.units)
    number = check_number(owner, field, value.magnitude, positive=positive, bound=bound, unit_text=given)
    magnitude = _in_base(owner, field, number, scale, (short, given), (minimum, maximum, rule))
    return (value if number is value.magnitude else Q_(number, value.units)), magnitude


@functools.lru_cache(maxsize=256)
def _unit_text(units: Any) -> str:
    """`` GiB``: a unit as messages write it (cached: formatting a pint unit costs tens of microseconds)."""
    return f" {units:~P}"


@functools.lru_cache(maxsize=1024)
def _quantity_bound(positive: bool, minimum: float | None, maximum: float | None, short: str) -> str:
    if minimum is not None and maximum is not None:
        return f"from {show_number(minimum)}{short} to {show_number(maximum)}{short}"
    if maximum is not None:
        return f"at most {show_number(maximum)}{short}"
    return "a finite amount" + (" more than 0" if positive else " 0 or more") + short


def _in_base(  # noqa: C901, PLR0917 - one check per bound, each with its message
    owner: str, field: str, number: Any, scale: float, units: tuple[str, str], bounds: tuple[Any, Any, str]
) -> Any:
    """``number * scale`` (the magnitude in the base unit), refused outside ``bounds`` (in the base unit).

    ``units`` is the short base unit and the unit the number was given in, for the message.
    """
    short, given = units
    minimum, maximum, rule = bounds
    if type(number) in (int, float) and (minimum is None or number * scale >= minimum):  # the common case
        magnitude = number * scale if scale != 1.0 else number
        if maximum is None or magnitude <= maximum:
            return magnitude
    with np.errstate(over="ignore"):
        magnitude = number * scale if scale != 1.0 else number
    as_given = bool(rule) and np.ndim(number) == 0  # a range in words: name the value as it was given
    if rule:
        pass
    elif minimum is not None and maximum is not None:
        rule = f"from {show_number(minimum)}{short} to {show_number(maximum)}{short}"
    elif maximum is not None:
        rule = f"at most {show_number(maximum)}{short}"
    else:
        rule = f"a finite amount{short and ' in' + short}"
    values = np.asarray(magnitude, dtype=float)
    if not np.all(np.isfinite(values)):  # the conversion overflowed: name the number as given
        bad = np.asarray(number)[~np.isfinite(values)].flat[0]
        raise FieldError(owner, field, f"must be {rule}, got {show_number(bad)}{given}")
    outside = np.zeros(values.shape, dtype=bool)
    if maximum is not None:
        outside |= values > maximum
    if minimum is not None:
        outside |= values < minimum
    if np.any(outside):
        if as_given:
            raise FieldError(owner, field, f"must be {rule}, got {show_number(number)}{given}")
        bad = values[outside].flat[0] if values.ndim else magnitude
        raise FieldError(owner, field, f"must be {rule}, got {show_number(bad)}{short}")
    return magnitude


def check_choice(owner: str, field: str, value: Any, allowed: tuple[Any, ...], *, optional: bool = False) -> Any:
    """One of ``allowed``, of the same type (``1`` is not ``True``); an array of them for a sweep."""
    if value is None and optional:
        return None
    shown = ", ".join(map(repr, allowed))
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        if value.size == 0:
            raise FieldError(owner, field, "got an empty array: give at least one value")
        kinds = {np.asarray(a).dtype.kind for a in allowed}
        if value.dtype.kind not in kinds:
            raise FieldError(owner, field, f"must be one of {shown}, got an array of {value.dtype}")
        unknown = ~np.isin(value, np.asarray(allowed))
        if np.any(unknown):
            raise FieldError(owner, field, f"must be one of {shown}, got {_brief(value[unknown].flat[0].item())}")
        return value
    value = _scalar(value)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise FieldError(owner, field, f"must be one of {shown}, got {_brief(value)}")
    return value
