"""Reading a quantity from text (``"80 GiB"``) safely: text whose arithmetic could exhaust time or memory is refused.

The one reader of quantity text: the field checkers read typed values here, and so should any front end
that takes typed text (a sweep's values).
"""

from __future__ import annotations

import decimal
import math
import re
from typing import Any

from mlsysim_nb.units import Q_, unit

__all__ = ["MAX_TEXT_LENGTH", "is_number_text", "parse_quantity", "read_text"]

_NUMBER = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # ASCII digits only
#: text that is a number alone (``"1e9"``, ``"0.1"``, ``"-2.5E-3"``): read as a number, never by pint's parser
_NUMBER_TEXT = re.compile(rf"^\s*({_NUMBER})\s*$")
_QUANTITY_TEXT = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-z/][A-Za-z0-9/* ]*?)\s*$")

#: The longest quantity text read (``"81559 MiB"`` is 9 characters); longer text is refused unread.
MAX_TEXT_LENGTH = 200
# a power is a number or unit name (at most 20 characters) raised to a plain exponent below 1000,
# so that no text makes the unit parser compute a number of billions of digits (``10**10**10``)
_POWER_BASE = re.compile(r"[\w.]{1,20}\s*$")
_POWER_EXPONENT = re.compile(r"^\s*(\(\s*[-+]?\d{1,3}(?:\.\d*)?\s*\)|[-+]?\d{1,3}(?:\.\d*)?)(?![\d.]|\s*\*\*)")


#: the words pint's preprocessor turns into a power ("m squared", "cubic m", "sq m"); a superscript is not ASCII
_POWER_WORDS = ("sq", "cubed", "cubic")


def _check_text(text: str) -> None:
    """Refuse, before pint evaluates it, text whose arithmetic could exhaust time or memory."""
    if len(text) > MAX_TEXT_LENGTH:
        msg = f"the text is {len(text):,} characters long; a quantity is at most {MAX_TEXT_LENGTH} characters"
        raise ValueError(msg)
    if text.isascii() and "*" not in text and "^" not in text and not any(w in text for w in _POWER_WORDS):
        return  # nothing pint's preprocessor turns into a power ("80 GiB", "3.35 TB/s"): no power to bound
    from pint.util import string_preprocessor

    expanded = string_preprocessor(text)  # what pint evaluates: superscripts and ^ become **
    for power in re.finditer(r"\*\*", expanded):
        if not (_POWER_BASE.search(expanded[: power.start()]) and _POWER_EXPONENT.match(expanded[power.end() :])):
            msg = "a power must raise a number or unit to a plain exponent between -999 and 999 (no nested powers)"
            raise ValueError(msg)


def _number(text: str) -> Any:
    """A number's text as an int (no point: ``"1e9"``), a float, or a ``Decimal`` beyond a float's range."""
    number = float(text)
    if math.isinf(number) or (number == 0 and decimal.Decimal(text) != 0):
        # beyond a float's range: kept exact, so that the checker refuses it with the field's range
        return decimal.Decimal(text)
    return int(number) if number.is_integer() and "." not in text else number


def is_number_text(text: str) -> bool:
    """Text that is a number alone, without a unit (``"48"``, ``"1e9"``)."""
    return _NUMBER_TEXT.match(text) is not None


def read_text(text: str) -> Any:
    """Typed text as a field reads it: a number alone (``"1e9"``) as a plain number, anything else as a quantity.

    A plain number is read in the field's own unit (bytes for a byte field), as a number given in code is.

    >>> read_text("1e9"), read_text(" 0.1 "), read_text("80 GiB")
    (1000000000, 0.1, <Quantity(80, 'gibibyte')>)
    """
    _check_text(text)
    match = _NUMBER_TEXT.match(text)
    return _number(match.group(1)) if match is not None else _parse_checked(text)


def parse_quantity(text: str) -> Any:
    """``"80 GiB"`` -> a quantity, refusing (``ValueError``) text whose arithmetic would exhaust time or memory.

    The one reader of quantity text: a front end that takes typed text (a sweep's values) should read it here.
    The unit string is parsed once and cached (catalog loading reads dozens).

    >>> parse_quantity("80 GiB")
    <Quantity(80, 'gibibyte')>
    """
    _check_text(text)
    return _parse_checked(text)


def _parse_checked(text: str) -> Any:
    """``parse_quantity`` of text :func:`_check_text` has passed."""
    alone = _NUMBER_TEXT.match(text)
    if alone is not None:  # pint reads "1e9" as 1 times a unit "e9"
        return Q_(_number(alone.group(1)))
    match = _QUANTITY_TEXT.match(text)
    if match is None:
        return Q_(text)
    return Q_(_number(match.group(1)), unit(match.group(2)))
