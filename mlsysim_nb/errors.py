"""The exceptions mlsysim_nb raises, each naming what was wrong and where."""

from __future__ import annotations

import decimal
import math
import numbers
from typing import Any

__all__ = ["FieldError", "FieldUnitError", "HardwareFileError", "MemoryLimitError", "NotApplicableError", "show_number"]

#: Whole numbers up to this size are written out in full, with thousands separators.
_EXACT_UP_TO = 10**30
#: Above 2**53 a float no longer holds every whole number; its digits beyond this many are rounding.
_EXACT_FLOAT = 2**53
_FLOAT_DIGITS = 15


def _scientific(log10: float, negative: bool) -> str:
    """``m e+N`` to three significant digits from a base-10 logarithm (no float of the number itself)."""
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), 2)
    if mantissa >= 10:  # 9.996 rounds up to the next power of ten
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{'-' if negative else ''}{mantissa:.3g}e{exponent:+d}"


def show_number(value: Any) -> str:
    """A number for a message, built safely for any size: ``1,048,576``, ``0.5``, ``1e+400``.

    Whole numbers up to 10^30 print in full with thousands separators (a float as its shortest
    decimal, so ``1e18`` is ``1,000,000,000,000,000,000``); other floats as Python writes them; an
    integer or ``Decimal`` too large for that in scientific notation, without converting it to a float.

    >>> show_number(2**20), show_number(2.5), show_number(10**400), show_number(2**64 - 1)
    ('1,048,576', '2.5', '1e+400', '18,446,744,073,709,551,615')
    """
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a NumPy scalar or 0-d array
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) <= _EXACT_UP_TO else _scientific(math.log10(abs(value)), value < 0)
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        exact = decimal.Decimal(repr(value))  # the shortest decimal that reads back as this float
        whole = exact == exact.to_integral_value() and abs(exact) <= _EXACT_UP_TO
        if whole and abs(value) > _EXACT_FLOAT and len(exact.as_tuple().digits) > _FLOAT_DIGITS:
            # a float this large stood for an integer it could not hold (2**70): its digits past the
            # 15th are the float's, not the number's, so give it in scientific notation
            return _scientific(math.log10(abs(value)), value < 0)
        return f"{int(exact):,}" if whole else repr(value)  # a fraction exactly, so 8.0000001 is not "8"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return repr(value)
        if value == value.to_integral_value() and abs(value) <= _EXACT_UP_TO:
            return f"{int(value):,}"
        return format(value, ".6g")
    return _other_number(value)


def _other_number(value: Any) -> str:
    """A Fraction or another real number: through a float when it fits one, else from its logarithm."""
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError, ArithmeticError):
        number = math.inf
    if math.isfinite(number) and (number != 0 or value == 0):
        return show_number(number)
    if isinstance(value, numbers.Rational) and value.numerator:
        return _scientific(math.log10(abs(value.numerator)) - math.log10(value.denominator), value < 0)
    if hasattr(value, "dtype"):  # a NumPy long double beyond a float's range
        import numpy as np

        if np.isfinite(value) and value != 0:
            return _scientific(float(np.log10(np.abs(value))), bool(value < 0))
    return repr(number) if math.isnan(number) else "a number too large to show"


#: Control characters a message may not carry as they are (a terminal would act on ESC, BEL, ...): all of C0 and C1
#: but the newline and the tab, written as Python writes them (``\\x1b``).
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\n\t"}


def _safe(message: str) -> str:
    """``message`` with its control characters escaped: a name read from a file cannot drive the terminal."""
    return message.translate(_CONTROL)


class FieldError(ValueError):
    """A field was given a value the model cannot use.

    The message starts with ``Owner.field:`` and says why; ``field`` and
    ``owner`` are attributes for programs (a widget shows the message).
    """

    def __init__(self, owner: str, field: str, reason: str) -> None:
        self.owner = owner
        self.field = field
        self.reason = reason
        super().__init__(_safe(f"{owner}.{field}: {reason}"))


class FieldUnitError(FieldError, TypeError):
    """A field was given a quantity of the wrong dimension (also a ``TypeError``)."""


class MemoryLimitError(FieldError):
    """A measurement the model predicts to need more memory than its ``memory_limit``; nothing was allocated."""


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
        super().__init__(_safe(message))


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
        super().__init__(_safe(f"{where}: {reason}"))
