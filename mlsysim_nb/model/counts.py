"""The checker of count fields.

A count is a whole number within a range, given as an int, an integral float, count text
(``"8.03 Gparam"``) or an array of them.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError, show_number
from mlsysim_nb.model.text import parse_quantity
from mlsysim_nb.model.values import (
    FLOAT_MAX,
    as_array,
    as_scalar,
    brief,
    first_bad,
    is_quantity,
    is_real,
    near_whole,
    refuse_unrepresentable,
    unrepresentable,
)
from mlsysim_nb.units import factor

__all__ = ["check_count"]


@functools.lru_cache(maxsize=1024)
def _count_bound(minimum: int, maximum: int | None) -> str:
    return f"from {show_number(minimum)} to {show_number(maximum)}" if maximum is not None else "a finite whole number"


def _count_text(owner: str, field: str, value: str) -> Any:
    """Count text such as ``"8.03 Gparam"`` or ``"32"``, read like a quantity."""
    try:
        return parse_quantity(value)
    except Exception as err:  # noqa: BLE001 - pint raises many kinds on bad text; all mean "cannot read"
        raise FieldError(owner, field, f"cannot read {brief(value)} as a count ({err or type(err).__name__})") from None


def _count_magnitude(owner: str, field: str, value: Any, bound: str) -> Any:
    """A dimensionless quantity's magnitude in counts (``Q_(8.03, "Gparam")`` -> 8029999999.999999)."""
    if not value.units.dimensionless:  # the unit alone: a magnitude of 10**400 is not converted
        raise FieldUnitError(owner, field, f"must be a plain count, got a quantity in {value.units:~P}")
    scale = factor(value.units, "count")
    magnitude = value.magnitude
    if scale == 1.0:
        return magnitude
    if np.ndim(magnitude) == 0:
        number = as_scalar(magnitude)
        if unrepresentable(number):
            refuse_unrepresentable(owner, field, number, bound, f" {value.units:~P}")
        if not is_real(number) or isinstance(number, bool):
            raise FieldError(owner, field, f"must be a whole number, got {brief(magnitude)}")
        magnitude = float(number)
    with np.errstate(over="ignore"):
        return magnitude * scale


def check_count(  # noqa: C901, PLR0912 - one check per way a count can be wrong, each with its message
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
    if type(value) is int and minimum <= value <= (FLOAT_MAX if maximum is None else maximum):
        return value  # the common case: a plain int in range, which every check below would pass unchanged
    if value is None:
        if optional:
            return None
        raise FieldError(owner, field, "is required")
    bound = _count_bound(minimum, maximum)
    if isinstance(value, str):
        value = _count_text(owner, field, value)
    if is_quantity(value):
        value = _count_magnitude(owner, field, value, bound)
    array = as_array(owner, field, value, lambda v: check_count(owner, field, v, minimum=minimum, maximum=maximum))
    if array is not None:
        return _check_count_array(owner, field, array, minimum, maximum)
    value = as_scalar(value)
    if isinstance(value, bool) or not is_real(value):
        raise FieldError(owner, field, f"must be a whole number, got {brief(value)}")
    if unrepresentable(value):
        refuse_unrepresentable(owner, field, value, bound)
    value = value if isinstance(value, int) else float(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(owner, field, f"must be a finite whole number, got {value!r}")
    if not isinstance(value, int):
        if not near_whole(value):
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
        raise FieldError(owner, field, f"must be finite whole numbers, got {first_bad(array, bad)!r}")
    frac = ~near_whole(array)
    if np.any(frac):
        raise FieldError(owner, field, f"must be whole numbers, got the fraction {first_bad(array, frac)!r}")
    low = array < minimum
    if np.any(low):
        got = show_number(first_bad(array, low))
        raise FieldError(owner, field, f"must be at least {show_number(minimum)}, got {got}")
    if maximum is not None:
        high = array > maximum
        if np.any(high):
            got = show_number(first_bad(array, high))
            raise FieldError(owner, field, f"must be at most {show_number(maximum)}, got {got}")
    return np.round(array).astype(np.int64)
