"""Validation of field values: counts, byte sizes and rates, scalars or NumPy arrays.

Each checker returns the value to store on the (frozen) record and its
magnitude in base units, or raises :class:`~mlsysim_nb.errors.FieldError`
naming the field and the reason. A plain number given to a byte field means
bytes; a quantity of the wrong dimension is refused.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError
from mlsysim_nb.units import Q_, dimensionality, factor, unit, ureg

__all__ = ["check_count", "check_number", "check_quantity"]

_ARRAY_KINDS = "iuf"


_QUANTITY_TEXT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/][A-Za-z0-9/* ]*?)\s*$")


def _parse(text: str) -> Any:
    """``"80 GiB"`` -> a quantity; the unit string is parsed once and cached (catalog loading reads dozens)."""
    match = _QUANTITY_TEXT.match(text)
    if match is None:
        return Q_(text)
    number = float(match.group(1))
    return Q_(int(number) if number.is_integer() and "." not in match.group(1) else number, unit(match.group(2)))


def _is_real(value: Any) -> bool:
    """A real number of any kind (int, float, Fraction, Decimal), without narrowing the type for mypy."""
    return isinstance(value, numbers.Real)


def _is_quantity(value: Any) -> bool:
    return isinstance(value, ureg.Quantity)


def _as_array(owner: str, field: str, value: Any) -> np.ndarray | None:
    """A NumPy array of numbers, or None when ``value`` is a scalar."""
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            raise FieldError(owner, field, f"expected numbers, got an array of {value.dtype}")
        if value.ndim == 0:
            return None
        return value
    return None


def _first_bad(array: np.ndarray, bad: np.ndarray) -> Any:
    return array[bad].flat[0].item()


def check_count(  # noqa: C901 - one check per way a count can be wrong, each with its message
    owner: str, field: str, value: Any, *, minimum: int = 1, maximum: int | None = None, optional: bool = False
) -> Any:
    """A whole number ``>= minimum`` (an int, an integral float, or an array of them).

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
    if _is_quantity(value):
        if not value.dimensionless:
            raise FieldUnitError(owner, field, f"must be a plain count, got a quantity in {value.units:~P}")
        value = value.to("count").magnitude
    array = _as_array(owner, field, value)
    if array is not None:
        return _check_count_array(owner, field, array, minimum, maximum)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not _is_real(value):
        raise FieldError(owner, field, f"must be a whole number, got {value!r}")
    value = value if isinstance(value, int) else float(value)
    if not math.isfinite(value):
        raise FieldError(owner, field, f"must be a finite whole number, got {value!r}")
    if int(value) != value:
        raise FieldError(owner, field, f"must be a whole number, got the fraction {value!r}")
    value = int(value)
    if value < minimum:
        raise FieldError(owner, field, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise FieldError(owner, field, f"must be at most {maximum}, got {value}")
    return value


def _check_count_array(owner: str, field: str, array: np.ndarray, minimum: int, maximum: int | None) -> np.ndarray:
    if not np.all(np.isfinite(array)):
        bad = ~np.isfinite(array)
        raise FieldError(owner, field, f"must be finite whole numbers, got {_first_bad(array, bad)!r}")
    frac = array != np.floor(array)
    if np.any(frac):
        raise FieldError(owner, field, f"must be whole numbers, got the fraction {_first_bad(array, frac)!r}")
    low = array < minimum
    if np.any(low):
        raise FieldError(owner, field, f"must be at least {minimum}, got {_first_bad(array, low)!r}")
    if maximum is not None:
        high = array > maximum
        if np.any(high):
            raise FieldError(owner, field, f"must be at most {maximum}, got {_first_bad(array, high)!r}")
    return array.astype(np.int64)


def check_number(  # noqa: C901 - one check per way a number can be wrong, each with its message
    owner: str, field: str, value: Any, *, positive: bool = True, optional: bool = False
) -> Any:
    """A real number (or array) that is positive, or non-negative with ``positive=False``."""
    if value is None:
        if optional:
            return None
        raise FieldError(owner, field, "is required")
    array = _as_array(owner, field, value)
    if array is not None:
        bad = ~np.isfinite(array) | ((array <= 0) if positive else (array < 0))
        if np.any(bad):
            need = "positive" if positive else "zero or more"
            raise FieldError(owner, field, f"must be {need}, got {_first_bad(array, bad)!r}")
        return array
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not _is_real(value):
        raise FieldError(owner, field, f"must be a number, got {value!r}")
    if not isinstance(value, (int, float)):
        value = float(value)
    if not math.isfinite(value):
        raise FieldError(owner, field, f"must be finite, got {value!r}")
    if positive and not value > 0:
        raise FieldError(owner, field, f"must be positive, got {value!r}")
    if not positive and value < 0:
        raise FieldError(owner, field, f"must be zero or more, got {value!r}")
    return value


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
) -> tuple[Any, Any]:
    """A quantity of the dimension of ``base``; returns ``(stored, magnitude in base)``.

    A plain number is read in ``plain_unit`` (default: ``base``), so
    ``bytes_per_value=2`` is 2 bytes. A string such as ``"80 GiB"`` is parsed.

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
            value = _parse(value)
        except Exception as err:  # noqa: BLE001 - pint raises many kinds on bad text; all mean "cannot read"
            raise FieldError(owner, field, f"cannot read {value!r} as a quantity ({err})") from None
    if not _is_quantity(value):
        if not allow_plain:
            msg = f"must be a quantity with a unit, like Q_(2, {base!r}), got {value!r}"
            raise FieldUnitError(owner, field, msg)
        unit = plain_unit or base
        number = check_number(owner, field, value, positive=positive)
        return Q_(number, unit), number * factor(unit, base) if unit != base else number
    try:
        scale = factor(value.units, base)
    except Exception:  # noqa: BLE001 - DimensionalityError or an unparseable unit: both are "wrong unit"
        want = dimensionality(base)
        got = dimensionality(value.units)
        msg = f"must be in units of {want} (like {base}), got {value:~P}, which is {got}"
        raise FieldUnitError(owner, field, msg) from None
    number = check_number(owner, field, value.magnitude, positive=positive)
    magnitude = number * scale if scale != 1.0 else number
    return value, magnitude
