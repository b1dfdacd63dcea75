"""The exceptions mlsysim_nb raises, each naming what was wrong and where."""

from __future__ import annotations

import decimal
import math
import numbers
from typing import Any

__all__ = ["FieldError", "FieldUnitError", "HardwareFileError", "NotApplicableError", "show_number"]

#: Whole numbers up to this size are written out in full, with thousands separators.
_EXACT_UP_TO = 10**18


def _scientific(log10: float, negative: bool) -> str:
    """``m e+N`` to three significant digits from a base-10 logarithm (no float of the number itself)."""
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), 2)
    if mantissa >= 10:  # 9.996 rounds up to the next power of ten
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{'-' if negative else ''}{mantissa:.3g}e{exponent:+d}"


def show_number(value: Any) -> str:  # noqa: C901, PLR0912 - one spelling per kind of number
    """A number for a message, built safely for any size: ``1,048,576``, ``0.5``, ``1e+400``.

    Whole numbers up to 10^18 print in full with thousands separators; others
    to six significant digits; an integer or ``Decimal`` too large for a float
    in scientific notation, computed without converting it to a float.

    >>> show_number(2**20), show_number(2.5), show_number(10**400), show_number(1e18)
    ('1,048,576', '2.5', '1e+400', '1,000,000,000,000,000,000')
    """
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a NumPy scalar or 0-d array
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        if abs(value) <= _EXACT_UP_TO:
            return f"{value:,}"
        return _scientific(math.log10(abs(value)), value < 0)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return repr(value)
        if value == value.to_integral_value() and abs(value) <= _EXACT_UP_TO:
            return f"{int(value):,}"
        return format(value, ".6g")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError, ArithmeticError):
        if isinstance(value, numbers.Rational) and value.numerator:
            log10 = math.log10(abs(value.numerator)) - math.log10(value.denominator)
            return _scientific(log10, value < 0)
        return "a number too large to show"
    if not math.isfinite(number):
        return repr(number)
    if number == 0 and value != 0:  # a Fraction too small for a float is not zero
        if isinstance(value, numbers.Rational):
            return _scientific(math.log10(abs(value.numerator)) - math.log10(value.denominator), value < 0)
        return "a number too small to show"
    if number.is_integer() and abs(number) <= _EXACT_UP_TO:
        return f"{int(number):,}"
    return f"{number:.6g}"


class FieldError(ValueError):
    """A field was given a value the model cannot use.

    The message starts with ``Owner.field:`` and says why; ``field`` and
    ``owner`` are attributes for programs (a widget shows the message).
    """

    def __init__(self, owner: str, field: str, reason: str) -> None:
        self.owner = owner
        self.field = field
        self.reason = reason
        super().__init__(f"{owner}.{field}: {reason}")


class FieldUnitError(FieldError, TypeError):
    """A field was given a quantity of the wrong dimension (also a ``TypeError``)."""


class NotApplicableError(ValueError):
    """A quantity cannot be computed for this scenario, e.g. ``capacity_share`` without hardware.

    ``quantity`` names what was asked for and ``needs`` what is missing, so a
    repr can write "not applicable: needs hardware" instead of failing.
    """

    def __init__(self, quantity: str, needs: str, detail: str = "") -> None:
        self.quantity = quantity
        self.needs = needs
        self.detail = detail
        message = f"{quantity} is not applicable: it needs {needs}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


class HardwareFileError(ValueError):
    """A hardware catalog file or one of its entries is malformed; names the file, entry and key."""

    def __init__(self, path: str, reason: str, entry: str | None = None, key: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.entry = entry
        self.key = key
        where = path
        if entry is not None:
            where += f", entry [{entry}]"
        if key is not None:
            where += f", key {key!r}"
        super().__init__(f"{where}: {reason}")
