"""How an exercise's answer is read and judged: its number in the unit asked, its form, and its slips.

:mod:`mlsysim_nb.exercises` (``check``, ``require``) calls these. An answer is a plain number read in the
unit asked, a quantity or a string such as ``"6 GB"``; a right value given in a sibling unit or off by a unit's
factor is named as a slip, never as a distance.
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
import sys
import types
from collections.abc import Sequence
from typing import Any

from pint.errors import PintError

#: the comparison the grading uses, held here: a cell that replaces ``math.isclose`` changes no grade
_isclose = math.isclose

__all__ = [
    "WrongAnswer",
    "dimension",
    "form_problem",
    "is_quantity",
    "lock_module",
    "read_answer",
    "scale_note",
    "slip",
    "verdict",
]

_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"

#: units a slip of unit may have used instead of the one asked, by dimension
_SIBLINGS: dict[str, tuple[str, ...]] = {
    "[information]": ("B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB"),
    "[time]": ("s", "ms", "us", "ns", "min", "h"),
    "[information] / [time]": ("B/s", "kB/s", "MB/s", "GB/s", "TB/s", "GiB/s", "TiB/s"),
}
_UNIT_NAMES = {"B": "bytes", "s": "seconds", "min": "minutes", "h": "hours"}
#: scale slips of a plain number: a factor and what it usually means
_SCALES: tuple[tuple[float, str], ...] = (
    (100.0, "a percentage where a fraction was asked"),
    (1e-2, "a fraction where a percentage was asked"),
    (1e9, "a count where billions were asked, or bytes where GB were asked"),
    (1e-9, "billions where a count was asked"),
    (2**30 / 1e9, "a GB/GiB mix-up (a factor of 2**30 / 1e9)"),
    (1e9 / 2**30, "a GB/GiB mix-up (a factor of 2**30 / 1e9)"),
    (2**20 / 1e6, "an MB/MiB mix-up (a factor of 2**20 / 1e6)"),
    (1e6 / 2**20, "an MB/MiB mix-up (a factor of 2**20 / 1e6)"),
)


class WrongAnswer(AssertionError):  # noqa: N818 - students read the name: "wrong answer", not "error"
    """A wrong (or, under ``require``, missing) answer: one short line in a notebook, still a failure.

    IPython calls ``_render_traceback_`` instead of printing the traceback, so
    the student sees the message alone, in red; pytest and nbgrader see an
    ``AssertionError`` like any failed test. Its public home is :mod:`mlsysim_nb.exercises`, where the
    notebooks import it from, so it is named after that module.
    """

    __module__ = "mlsysim_nb.exercises"

    def _render_traceback_(self) -> list[str]:
        return [f"{_RED}{_BOLD}✗{_RESET}{_RED} {self}{_RESET}"]


def quantity_of(value: str, what: str) -> Any:
    """Text read as a quantity by the package's one safe reader (``"9**9**9**9 GB"`` is refused, not evaluated)."""
    from mlsysim_nb.model.text import parse_quantity

    if len(value) > 200:
        msg = f'{what} is {len(value):,} characters long: give a number with its unit, e.g. "12 GB"'
        raise WrongAnswer(msg)
    try:
        return parse_quantity(value.strip())
    except (PintError, ValueError, TypeError, SyntaxError, AttributeError) as error:
        msg = f"could not read {what} {value!r} as a number with a unit ({type(error).__name__})"
        raise WrongAnswer(msg) from None


def dimension(unit: str) -> str:
    """The dimension of ``unit`` as pint writes it, ``"[information]"`` for GB."""
    from mlsysim_nb.units import Q_

    return str(Q_(1, unit).dimensionality)


def read_answer(value: Any, unit: str | None, what: str) -> float:
    """A number in ``unit`` from a plain number, a quantity or a string such as ``"6 GB"``.

    A string without a unit (``"38.52"``) reads as a plain number does, in the unit asked; ``True`` and
    ``False`` are not numbers here.
    """
    if isinstance(value, bool):
        msg = f"{what} is {value}, not a number{f' in {unit}' if unit else ''}"
        raise WrongAnswer(msg)
    if not _plain(value):  # an object of the answer's own making could read the grader's frames in __float__
        shown = f" in {unit}" if unit else ""
        msg = f"{what} should be a number{shown}, a quantity or text, got a {type(value).__name__}"
        raise WrongAnswer(msg)
    if isinstance(value, str):
        value = quantity_of(value, what)
        if getattr(value, "unitless", False):  # the text names no unit: a plain number, in the unit asked
            return float(value.magnitude)
    if hasattr(value, "units"):
        if unit is None:
            if value.dimensionless:
                return float(value.m_as(""))
            msg = f"{what} is a plain number here: give it without a unit"
            raise WrongAnswer(msg)
        try:
            return float(value.m_as(unit))
        except PintError:
            msg = (
                f"{what} has the wrong dimension: {value.units:~P} is a {value.dimensionality}, "
                f"and the answer is a {dimension(unit)} (asked in {unit})"
            )
            raise WrongAnswer(msg) from None
    try:
        return float(value)
    except (TypeError, ValueError):
        msg = f"{what} should be a number{f' in {unit}' if unit else ''}, got {value!r}"
        raise WrongAnswer(msg) from None


def _plain(value: Any) -> bool:
    """A number (int, float, Fraction, Decimal, a NumPy scalar), text, or a pint quantity of a plain number."""
    from mlsysim_nb.units import ureg

    if type(value) is ureg.Quantity:
        return _plain(value.magnitude) and not isinstance(value.magnitude, str)
    if type(value) in (int, float, str, fractions.Fraction, decimal.Decimal):
        return True  # the exact types: a subclass could carry a __float__ of its own
    return type(value).__module__ == "numpy" and isinstance(value, numbers.Real)


def is_quantity(value: Any) -> bool:
    """A quantity with a dimension (a dimensionless one reads as a plain number)."""
    return hasattr(value, "units") and not value.dimensionless


def slip(got: float, want: float, unit: str | None, rel: float) -> str:
    """The name of a unit or scale slip that turns the right value ``want`` into ``got``, or ``""``.

    A slip is named when ``got``, rescaled by the slip's factor, is within the exercise's tolerance ``rel``
    of ``want``: ``64e9`` for 64.24 GB is bytes for GB, as ``64.24e9`` is.
    """
    if want == 0 or got == 0 or (got > 0) != (want > 0):
        return ""
    ratio = got / want
    if unit is not None:
        from mlsysim_nb.units import Q_

        siblings = _SIBLINGS.get(dimension(unit), ())
        for other in siblings if rel else ():
            factor = float(Q_(1, unit).m_as(other))
            if other != unit and _isclose(ratio, factor, rel_tol=rel, abs_tol=0):
                return (
                    f"a slip of unit: the number reads as the answer in {_UNIT_NAMES.get(other, other)}, "
                    f"but it is asked in {unit}"
                )
    for factor, meaning in _SCALES if rel else ():  # a whole number off by one can look like 2**30 / 1e9
        if _isclose(ratio, factor, rel_tol=rel, abs_tol=0):
            return f"a slip of scale: it looks like {meaning}"
    exponent = round(math.log10(ratio) / 3) * 3  # kilo, mega, giga...: a 10x off is no slip of a unit
    if exponent != 0 and _isclose(ratio, 10.0**exponent, rel_tol=rel, abs_tol=0):
        return f"a slip of scale: the number is off by a factor of exactly 10^{exponent}; check the unit"
    exponent = round(math.log2(ratio) / 10) * 10
    if exponent != 0 and _isclose(ratio, 2.0**exponent, rel_tol=rel, abs_tol=0):
        return f"a slip of scale: the number is off by a factor of exactly 2^{exponent}; check KiB, MiB and GiB"
    return ""


def verdict(answer: Any, expected: Any, accept: tuple[Any, ...], unit: str | None, rel: float) -> tuple[bool, str]:
    """Whether ``answer`` matches ``expected`` (or an accepted alternative), and what to say if not.

    The message says "not within tolerance", never how far off or in which direction; a slip of
    unit or of scale (and a plain number where a quantity was asked) is named instead.
    """
    if isinstance(expected, bool):
        return (isinstance(answer, bool) and answer == expected), f"{answer!r} is not the model's answer"
    if unit is None and is_quantity(expected):
        if not isinstance(answer, str) and not is_quantity(answer):
            return False, 'a plain number, but the answer is a quantity: give it with its unit, e.g. "12 GB"'
        unit = f"{expected.units}"
    got = read_answer(answer, unit, "your answer")
    if not math.isfinite(got):
        return False, f"{got} is not a finite number"
    wants = [read_answer(v, unit, "the expected value") for v in (expected, *accept)]
    if any(_isclose(got, want, rel_tol=rel, abs_tol=1e-12) for want in wants):
        return True, ""
    for want in wants:
        named = slip(got, want, unit, rel)  # a slip is named when the answer, rescaled, would pass
        if named:
            return False, named
    return False, ""


def form_problem(  # noqa: PLR0917 - one private helper of check()
answer: Any, unit: str | None, sign: str, whole: bool, between: Sequence[float] | None,
          choices: Sequence[Any] | None) -> tuple[str, float | bool]:  # fmt: skip
    """What is wrong with the answer's form (unit, dimension, sign, whole, range, choice), or ``""``."""
    if choices is not None:
        if answer not in list(choices) or isinstance(answer, bool) != isinstance(choices[0], bool):
            return f"the answer is one of {', '.join(repr(c) for c in choices)}; got {answer!r}", 0.0
        return "", answer if isinstance(answer, bool) else float(answer)
    got = read_answer(answer, unit, "your answer")
    if not math.isfinite(got):
        return f"{got} is not a finite number", got
    if whole and got != round(got):
        return f"the answer is a whole number; got {got:.6g}", got
    if between is not None and not between[0] <= got <= between[1]:
        return f"the answer lies between {between[0]:g} and {between[1]:g}; got {got:.4g}", got
    if sign == "positive" and got <= 0:
        return "the answer is a positive amount; check the sign", got
    if sign == "negative" and got >= 0:
        return "the answer is negative here; check the sign", got
    return "", got


#: more memory than any one exercise of the course asks about: an answer above it was likely typed in bytes
IMPLAUSIBLE_BYTES = 1e15


def scale_note(got: float, unit: str | None) -> str:
    """A note on an answer of memory above a petabyte (the usual cause: bytes typed where GB were asked).

    It depends on the answer alone, never on the expected value.
    """
    if unit is None or dimension(unit) != "[information]":
        return ""
    from mlsysim_nb.units import Q_

    if abs(float(Q_(got, unit).m_as("B"))) < IMPLAUSIBLE_BYTES:
        return ""
    return f" Note: {got:.4g} {unit} is more than a petabyte; if you typed bytes, convert to {unit}."


class _Locked(types.ModuleType):
    """A grading module that refuses to have any of its names replaced or removed (new names are allowed).

    ``mlsysim_nb.exercises.require = ...`` or ``mlsysim_nb.answers.read_answer = ...`` in a student's cell would
    change what every later hidden test grades with; the module state that changes (hints shown, guesses) is
    mutated in place, never rebound.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__dict__:
            msg = f"{self.__name__}.{name} is what the grader uses and cannot be replaced"
            raise AttributeError(msg)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__:
            msg = f"{self.__name__}.{name} is what the grader uses and cannot be removed"
            raise AttributeError(msg)
        super().__delattr__(name)


def lock_module(module: types.ModuleType) -> None:
    """Make ``module`` refuse to have its names replaced (the grading modules lock themselves when imported)."""
    module.__class__ = _Locked


lock_module(sys.modules[__name__])
