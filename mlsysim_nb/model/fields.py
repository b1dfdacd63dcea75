"""Validation of field values: byte sizes and rates, plain numbers and choices, scalars or NumPy arrays.

Counts are checked in :mod:`mlsysim_nb.model.counts` (``check_count`` is re-exported here).

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
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError, show_number
from mlsysim_nb.model.counts import check_count
from mlsysim_nb.model.text import parse_quantity, read_text
from mlsysim_nb.model.values import (
    FLOAT_MAX,
    as_array,
    as_scalar,
    brief,
    check_axis_shape,
    first_bad,
    is_quantity,
    is_real,
    refuse_unrepresentable,
    sequence_array,
    shown,
    unrepresentable,
)
from mlsysim_nb.units import Q_, dimensionality, factor, unit_container, ureg

__all__ = [
    "ONE_BIT",
    "check_choice",
    "check_count",
    "check_least",
    "check_number",
    "check_plain",
    "check_quantity",
    "parse_quantity",
    "read_sequence",
]

#: The narrowest amount of memory, in bytes: no value is stored in less than one bit (FP4 is 0.5 B, NVFP4's
#: 4.5 bits 0.5625 B, a 1-bit weight 0.125 B). A byte field refuses a nonzero amount below it (1e-320 B).
ONE_BIT = 0.125


def _plainly_valid(value: Any, *, positive: bool, maximum: float | None) -> bool:
    if type(value) is not float and type(value) is not int:
        return False
    if type(value) is int and abs(value) > FLOAT_MAX:
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

    array = as_array(owner, field, value, check_one)
    if array is not None:
        bad = ~np.isfinite(array) | ((array <= 0) if positive else (array < 0))
        if np.any(bad):
            need = "positive" if positive else "zero or more"
            raise FieldError(owner, field, f"must be {need} and finite, got {first_bad(array, bad)!r}")
        if maximum is not None and np.any(array > maximum):
            got = show_number(first_bad(array, array > maximum))
            raise FieldError(owner, field, f"must be at most {show_number(maximum)}{unit_text}, got {got}{unit_text}")
        return array
    value = as_scalar(value)
    if isinstance(value, bool) or not is_real(value):
        raise FieldError(owner, field, f"must be a number, got {brief(value)}")
    if unrepresentable(value):
        if not (isinstance(value, decimal.Decimal) and value.is_nan()) and value < 0:
            need = "positive" if positive else "zero or more"
            raise FieldError(owner, field, f"must be {need}, got {show_number(value)}{unit_text}")
        refuse_unrepresentable(owner, field, value, bound, unit_text)
    if not isinstance(value, (int, float)):
        tiny = value != 0
        value = float(value)
        if tiny and value == 0:
            raise FieldError(owner, field, "must be a number a float can hold, got one too small to represent")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(owner, field, f"must be finite, got {value!r}")
    if positive and not value > 0:
        raise FieldError(owner, field, f"must be positive, got {shown(value)}")
    if not positive and value < 0:
        raise FieldError(owner, field, f"must be zero or more, got {shown(value)}")
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
        value = _read(owner, field, value)
    short = _SHORT_UNITS.get(base, f" {base}")
    bound = rule or _quantity_bound(positive, minimum, maximum, short)
    if not is_quantity(value):
        if not allow_plain:
            msg = f"must be a quantity with a unit, like Q_(2, {base!r}), got {brief(value)}"
            raise FieldUnitError(owner, field, msg)
        unit = plain_unit or base
        number = check_number(owner, field, value, positive=positive, bound=bound, unit_text=short)
        scale = factor(unit, base) if unit != base else 1.0
        magnitude = _in_base(owner, field, number, scale, (short, f" {unit}"), (minimum, maximum, rule))
        return Q_(number, unit), magnitude
    units = unit_container(value)  # hashes cheaply: the conversion and the unit's text are cached by it
    try:
        scale = factor(units, base)
    except Exception:  # noqa: BLE001 - DimensionalityError or an unparseable unit: both are "wrong unit"
        want = dimensionality(base)
        got = dimensionality(value.units)
        msg = f"must be in units of {want} (like {base}), got a quantity in {value.units:~P}, which is {got}"
        raise FieldUnitError(owner, field, msg) from None
    given = _unit_text(units)
    number = check_number(owner, field, value.magnitude, positive=positive, bound=bound, unit_text=given)
    magnitude = _in_base(owner, field, number, scale, (short, given), (minimum, maximum, rule))
    return (value if number is value.magnitude else Q_(number, value.units)), magnitude


def _read(owner: str, field: str, text: str) -> Any:
    """Typed text as a number alone (``"1e9"``) or a quantity (``"80 GiB"``), or a FieldError saying why not."""
    try:
        return read_text(text)
    except Exception as err:  # noqa: BLE001 - pint raises many kinds on bad text; all mean "cannot read"
        why = err or type(err).__name__
        raise FieldError(owner, field, f"cannot read {brief(text)} as a quantity ({why})") from None


def read_sequence(owner: str, field: str, values: list[Any] | tuple[Any, ...]) -> Any:
    """A list of values holding quantities or text (``["2 GB", Q_(4, "GB")]``) as one quantity array.

    Each text is read by the one reader (:func:`~mlsysim_nb.model.text.read_text`); a list of plain numbers
    comes back as a NumPy array of them. Quantities of two dimensions, or quantities beside plain
    numbers, are refused naming the field.
    """
    read = [_read(owner, field, v) if isinstance(v, str) else v for v in values]
    quantities = [is_quantity(v) for v in read]
    if not any(quantities):
        return sequence_array(owner, field, read)
    if not all(quantities):
        msg = "its values must all carry a unit or all be plain numbers, got a mix (give each one its unit)"
        raise FieldError(owner, field, msg)
    try:
        return Q_.from_list(read)
    except Exception as err:  # noqa: BLE001 - two dimensions (pint's DimensionalityError) or shapes: name the field
        msg = f"its values must be quantities of one dimension and shape ({type(err).__name__}: {err})"
        raise FieldError(owner, field, msg) from None


def _given_bound(maximum: float, per_unit: float) -> float:
    """``maximum`` (a plain number) in a unit worth ``per_unit`` of it, without float noise (0.9 is 90 %)."""
    return float(f"{maximum / per_unit:.12g}")


def check_plain(
    owner: str,
    field: str,
    value: Any,
    *,
    positive: bool = True,
    optional: bool = False,
    maximum: float | None = None,
    rule: str = "a plain number",
) -> Any:
    """A plain number, given as a number, its text (``"0.1"``) or a dimensionless quantity (``Q_(10, "percent")``).

    A quantity of any dimension (``Q_(0.1, "B")``) is refused: a share of memory is not an amount of it.
    ``rule`` says what the field is in a refusal of a unit.

    >>> check_plain("S", "runtime_reserve", "10 %", positive=False, maximum=0.9)
    0.1
    >>> check_plain("S", "runtime_reserve", Q_(2, "bit"), positive=False)
    Traceback (most recent call last):
    ...
    mlsysim_nb.errors.FieldUnitError: S.runtime_reserve: must be a plain number, ..., got a quantity in bit, ...
    """
    if isinstance(value, str):
        value = _read(owner, field, value)
    if not is_quantity(value):
        return check_number(owner, field, value, positive=positive, optional=optional, maximum=maximum)
    units = value.units
    if not units.dimensionless:
        msg = (
            f"must be {rule}, like 0.1 or '10 %' (no unit, or a percentage), got a quantity in "
            f"{units:~P}, which is {dimensionality(units)}"
        )
        raise FieldUnitError(owner, field, msg)
    per_unit = factor(units, "dimensionless")
    top = None if maximum is None else _given_bound(maximum, per_unit)
    given = _unit_text(units) if str(units) != "dimensionless" else ""
    number = check_number(owner, field, value.magnitude, positive=positive, maximum=top, unit_text=given)
    if per_unit == 1.0:
        return number
    inverse = factor("dimensionless", units)  # 100 for percent: dividing by it rounds 10 % to exactly 0.1
    result = number / inverse
    if isinstance(result, float) and number != 0 and result == 0:
        raise FieldError(owner, field, "must be a number a float can hold, got one too small to represent")
    return result


def check_least(owner: str, field: str, magnitude: Any, least: float, *, positive: bool, unit_text: str) -> None:
    """Refuse a nonzero magnitude below ``least`` (an amount of memory narrower than a bit, ``1e-320 B``)."""
    if magnitude is None or least <= 0:
        return
    values = np.asarray(magnitude)
    narrow = (values != 0) & (values < least)
    if not np.any(narrow):
        return
    bad = values[narrow].flat[0].item() if values.ndim else values.item()
    why = " (one bit: no value is stored in less)" if least == ONE_BIT else ""
    need = f"{'' if positive else '0 or '}at least {show_number(least)}{unit_text}{why}"
    raise FieldError(owner, field, f"must be {need}, got {bad:g}{unit_text}")


@functools.lru_cache(maxsize=256)
def _unit_text(units: Any) -> str:
    """`` GiB``: a unit (or its unit container) as messages write it (cached: formatting one costs tens of us)."""
    return f" {ureg.Unit(units):~P}"


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
        value = sequence_array(owner, field, value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        check_axis_shape(owner, field, value)
        if value.size == 0:
            raise FieldError(owner, field, "got an empty array: give at least one value")
        kinds = {np.asarray(a).dtype.kind for a in allowed}
        if value.dtype.kind not in kinds:
            raise FieldError(owner, field, f"must be one of {shown}, got an array of {value.dtype}")
        unknown = ~np.isin(value, np.asarray(allowed))
        if np.any(unknown):
            raise FieldError(owner, field, f"must be one of {shown}, got {brief(value[unknown].flat[0].item())}")
        return value
    value = as_scalar(value)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise FieldError(owner, field, f"must be one of {shown}, got {brief(value)}")
    return value
