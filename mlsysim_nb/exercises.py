"""Self-checks for the course notebooks: ``predict()``, ``check()``, ``require()`` and ``hint()``.

A notebook opens with ``predict(guess, unit=...)``: it records a guess and shows
nothing of the answer; ``reveal(name, actual)`` later compares the two.

An exercise has two checks. The visible one, ``check(answer, unit=..., ...)``,
confirms only what is fair to confirm before grading: that the cell ran and the
exercise is answered, that the answer reads as a number in the unit asked (or
as a whole number, a fraction between 0 and 1, one of the choices), and its
sign. It never sees the expected value, so it cannot give it away. The graded
one, ``require(answer, expected, ...)``, sits in the hidden tests that the
autograder puts back: it compares with the package's value at a tolerance and,
when the answer is off, says "not within tolerance" and nothing about how far or
in which direction; only a slip of unit or scale (an answer in bytes where GB
was asked, a GB/GiB mix-up, a percentage for a fraction) is named as such.

A failed check raises :class:`WrongAnswer`, an ``AssertionError`` that a
notebook shows as one short styled line instead of a traceback (and that still
counts as a failure for a grader). ``hint(label)`` shows the next, more explicit
hint of an exercise; the last one gives the method.
"""

from __future__ import annotations

import contextlib
import math
import sys
import types
from collections.abc import Iterator, Sequence
from typing import Any

from pint.errors import PintError

__all__ = [
    "NOT_GRADED",
    "NOT_WITHIN_TOLERANCE",
    "WrongAnswer",
    "check",
    "grading",
    "hint",
    "predict",
    "require",
    "reveal",
]

_HINTS: dict[str, tuple[str, ...]] = {}
_SHOWN: dict[str, int] = {}
_GUESSES: dict[str, tuple[float | bool | None, str | None]] = {}

_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"

#: what a graded answer outside the tolerance is told, whatever its distance or sign
NOT_WITHIN_TOLERANCE = "Not quite: not within tolerance of the model's value."

#: what a graded answer is told when its hidden test could not compare it (the test's code is never shown)
NOT_GRADED = "Not graded: the answer could not be compared with the model's value"

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
    ``AssertionError`` like any failed test.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{_RED}{_BOLD}✗{_RESET}{_RED} {self}{_RESET}"]


def _quantity(value: str, what: str) -> Any:
    from mlsysim_nb.units import Q_

    try:
        return Q_(value.strip())
    except (PintError, ValueError, TypeError, SyntaxError, AttributeError) as error:
        msg = f"could not read {what} {value!r} as a number with a unit ({type(error).__name__})"
        raise WrongAnswer(msg) from None


def _dimension(unit: str) -> str:
    from mlsysim_nb.units import Q_

    return str(Q_(1, unit).dimensionality)


def _read(value: Any, unit: str | None, what: str) -> float:
    """A number in ``unit`` from a plain number, a quantity or a string such as ``"6 GB"``."""
    if isinstance(value, str):
        value = _quantity(value, what)
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
                f"and the answer is a {_dimension(unit)} (asked in {unit})"
            )
            raise WrongAnswer(msg) from None
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        msg = f"{what} should be a number{f' in {unit}' if unit else ''}, got {value!r}"
        raise WrongAnswer(msg) from None


def _is_quantity(value: Any) -> bool:
    return hasattr(value, "units") and not value.dimensionless


#: set by ``check(None)``: the reminder is on screen, so the ``require(None)`` that follows in a grader's
#: copy of the cell does not say "not answered" a second time
_REMINDED: list[bool] = [False]


def _register(label: str, hints: tuple[str, ...]) -> None:
    if label and hints:
        if _HINTS.get(label) != hints:
            _SHOWN[label] = 0  # no hint of this exercise shown yet
        _HINTS[label] = hints


def _shown(label: str, step: int) -> None:
    """Hint ``step`` (1-based) of ``label`` is on screen."""
    if label in _HINTS:
        _SHOWN[label] = max(_SHOWN.get(label, 0), step)


def _hint_text(label: str, hints: tuple[str, ...]) -> str:
    if not hints:
        return ""
    text = f" Hint: {hints[0]}"
    if label and len(hints) > 1:
        text += f" (still stuck? run hint({label!r}))"
    return text


def _slip(got: float, want: float, unit: str | None, rel: float) -> str:
    """The name of a unit or scale slip that turns the right value ``want`` into ``got``, or ``""``.

    A slip is named when ``got``, rescaled by the slip's factor, is within the exercise's tolerance ``rel``
    of ``want``: ``64e9`` for 64.24 GB is bytes for GB, as ``64.24e9`` is.
    """
    if want == 0 or got == 0 or (got > 0) != (want > 0):
        return ""
    ratio = got / want
    if unit is not None:
        from mlsysim_nb.units import Q_

        siblings = _SIBLINGS.get(_dimension(unit), ())
        for other in siblings if rel else ():
            factor = float(Q_(1, unit).m_as(other))
            if other != unit and math.isclose(ratio, factor, rel_tol=rel, abs_tol=0):
                return (
                    f"a slip of unit: the number reads as the answer in {_UNIT_NAMES.get(other, other)}, "
                    f"but it is asked in {unit}"
                )
    for factor, meaning in _SCALES if rel else ():  # a whole number off by one can look like 2**30 / 1e9
        if math.isclose(ratio, factor, rel_tol=rel, abs_tol=0):
            return f"a slip of scale: it looks like {meaning}"
    exponent = round(math.log10(ratio) / 3) * 3  # kilo, mega, giga...: a 10x off is no slip of a unit
    if exponent != 0 and math.isclose(ratio, 10.0**exponent, rel_tol=rel, abs_tol=0):
        return f"a slip of scale: the number is off by a factor of exactly 10^{exponent}; check the unit"
    exponent = round(math.log2(ratio) / 10) * 10
    if exponent != 0 and math.isclose(ratio, 2.0**exponent, rel_tol=rel, abs_tol=0):
        return f"a slip of scale: the number is off by a factor of exactly 2^{exponent}; check KiB, MiB and GiB"
    return ""


def _verdict(answer: Any, expected: Any, accept: tuple[Any, ...], unit: str | None, rel: float) -> tuple[bool, str]:
    """Whether ``answer`` matches ``expected`` (or an accepted alternative), and what to say if not.

    The message says "not within tolerance", never how far off or in which direction; a slip of
    unit or of scale (and a plain number where a quantity was asked) is named instead.
    """
    if isinstance(expected, bool):
        return (isinstance(answer, bool) and answer == expected), f"{answer!r} is not the model's answer"
    if unit is None and _is_quantity(expected):
        if not isinstance(answer, str) and not _is_quantity(answer):
            return False, 'a plain number, but the answer is a quantity: give it with its unit, e.g. "12 GB"'
        unit = f"{expected.units}"
    got = _read(answer, unit, "your answer")
    if not math.isfinite(got):
        return False, f"{got} is not a finite number"
    wants = [_read(v, unit, "the expected value") for v in (expected, *accept)]
    if any(math.isclose(got, want, rel_tol=rel, abs_tol=1e-12) for want in wants):
        return True, ""
    for want in wants:
        slip = _slip(got, want, unit, rel)  # a slip is named when the answer, rescaled, would pass
        if slip:
            return False, slip
    return False, ""


def _form(  # noqa: PLR0917 - one private helper of check()
answer: Any, unit: str | None, sign: str, whole: bool, between: Sequence[float] | None,
          choices: Sequence[Any] | None) -> tuple[str, float | bool]:  # fmt: skip
    """What is wrong with the answer's form (unit, dimension, sign, whole, range, choice), or ``""``."""
    if choices is not None:
        if answer not in list(choices) or isinstance(answer, bool) != isinstance(choices[0], bool):
            return f"the answer is one of {', '.join(repr(c) for c in choices)}; got {answer!r}", 0.0
        return "", answer if isinstance(answer, bool) else float(answer)
    got = _read(answer, unit, "your answer")
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


def check(
    answer: Any,
    *,
    unit: str | None = None,
    sign: str = "positive",
    whole: bool = False,
    between: Sequence[float] | None = None,
    choices: Sequence[Any] | None = None,
    hint: str = "",
    hints: tuple[str, ...] | list[str] = (),
    label: str = "",
) -> None:
    """The visible check of an exercise: confirm what is fair before grading, never the value.

    It knows nothing of the expected value: it says whether the exercise is
    answered, whether the answer reads in ``unit`` (a quantity of another
    dimension, a string that is not a number fail), whether it is a whole number,
    lies in ``between`` or is one of ``choices``, and its sign. The value itself
    is graded by :func:`require` in the hidden tests.

    Parameters
    ----------
    answer
        ``None`` (not answered yet), a number read in ``unit``, a quantity, a
        string such as ``"6 GB"``, or a bool.
    unit
        The unit a plain-number answer is read in, e.g. ``"GB"``.
    sign
        ``"positive"`` (the default), ``"negative"`` or ``"any"``.
    whole, between, choices
        The answer is a whole number; lies in ``[low, high]``; is one of these.
    hints
        Graded hints: the first (a nudge) is shown with an answer of the wrong
        form, the next ones (the method, at the last) by ``hint(label)``.
    label
        The exercise's label, e.g. ``"1.1"``, which ``hint()`` takes.

    Raises
    ------
    WrongAnswer
        When the answer has the wrong form (an ``AssertionError``).

    >>> check(None, unit="GB")
    Not answered yet: replace None with your answer (in GB) and run this cell again.
    >>> check("24 GB", unit="GB")
    Answer recorded: 24 GB. It reads in GB and is positive; its value is graded when the notebook is graded.
    >>> check(6.4e10, unit="GB")  # doctest: +ELLIPSIS
    Answer recorded: 6.4e+10 GB. ... Note: 6.4e+10 GB is more than a petabyte; if you typed bytes, convert to GB.
    >>> check(-3, unit="GB", hints=["a nudge", "the method"])
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Check the form: the answer is a positive amount; check the sign. Hint: a nudge
    """
    steps = tuple(hints) or ((hint,) if hint else ())
    _register(label, steps)
    _REMINDED[0] = answer is None
    if answer is None:
        suffix = f" (in {unit})" if unit else ""
        print(f"Not answered yet: replace None with your answer{suffix} and run this cell again.")  # noqa: T201
        return
    try:
        problem, got = _form(answer, unit, sign, whole, between, choices)
    except WrongAnswer as error:
        problem, got = str(error), 0.0
    if problem:
        if steps:
            _shown(label, 1)
        raise WrongAnswer(f"Check the form: {problem}.{_hint_text(label, steps)}")
    if choices is not None:
        print(f"Answer recorded: {answer!r}, one of the choices; it is graded when the notebook is graded.")  # noqa: T201
        return
    said = [f"reads in {unit}" if unit else ("is a whole number" if whole else "is a plain number")]
    said += ["is a whole number"] if whole and unit else []
    said += [f"lies between {between[0]:g} and {between[1]:g}"] if between is not None else []
    said += {"positive": ["is positive"], "negative": ["is negative"]}.get(sign, [])
    listed = ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]
    shown = f"{got:.4g}{f' {unit}' if unit else ''}"
    graded = "its value is graded when the notebook is graded"
    print(f"Answer recorded: {shown}. It {listed}; {graded}.{_scale_note(got, unit)}")  # noqa: T201


#: more memory than any one exercise of the course asks about: an answer above it was likely typed in bytes
_IMPLAUSIBLE_BYTES = 1e15


def _scale_note(got: float, unit: str | None) -> str:
    """A note on an answer of memory above a petabyte (the usual cause: bytes typed where GB were asked).

    It depends on the answer alone, never on the expected value.
    """
    if unit is None or _dimension(unit) != "[information]":
        return ""
    from mlsysim_nb.units import Q_

    if abs(float(Q_(got, unit).m_as("B"))) < _IMPLAUSIBLE_BYTES:
        return ""
    return f" Note: {got:.4g} {unit} is more than a petabyte; if you typed bytes, convert to {unit}."


def require(
    answer: Any,
    expected: Any,
    *,
    unit: str | None = None,
    rel: float = 0.02,
    accept: tuple[Any, ...] | list[Any] = (),
    **_ignored: Any,
) -> None:
    """The graded check (in the hidden tests): silent when right; a wrong or missing answer fails.

    A wrong answer is told "not within tolerance", never how far off or in which
    direction; a slip of unit or of scale is named as such.

    Parameters
    ----------
    answer
        The student's answer (as for :func:`check`).
    expected
        The memory model's value (a quantity, number or bool).
    unit
        The unit a plain-number answer is read in, e.g. ``"GB"``. Without one, an
        expected quantity wants an answer with a unit.
    rel
        Relative tolerance (2 % by default: answers worked by hand round; 0 for a whole number).
    accept
        Other values that also count as right, e.g. the same quantity worked
        from a model's nominal and from its exact parameter count.

    >>> from mlsysim_nb import Q_
    >>> require(3.01, 3)
    >>> require(None, 3)
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not answered: this exercise has no answer yet.
    >>> require(12, Q_(24, "GB"), unit="GB")
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not quite: not within tolerance of the model's value.
    >>> require(2.4e10, Q_(24, "GB"), unit="GB")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not quite: a slip of unit: the number reads as the answer in bytes, but it is ...
    """
    reminded, _REMINDED[0] = _REMINDED[0], False
    if answer is None:
        # right after check(None) printed its reminder (a grader's copy of the cell), say only what it costs
        msg = "Not answered: this exercise has no answer yet."
        if reminded:
            msg = "No points: there is no answer to grade."
        raise WrongAnswer(msg)
    ok, why = _verdict(answer, expected, tuple(accept), unit, rel)
    if not ok:
        raise WrongAnswer(f"Not quite: {why}." if why else NOT_WITHIN_TOLERANCE)


@contextlib.contextmanager
def grading() -> Iterator[None]:
    """The body of a hidden test: a failure inside is one short line, never the test's code.

    A :class:`WrongAnswer` passes through; any other error (a name the student's cell rebound, an answer
    of a type nothing can compare) becomes a :class:`WrongAnswer` naming only the error's type, so that
    the feedback a student receives never shows the hidden test's source in a traceback.

    >>> with grading():  # doctest: +ELLIPSIS
    ...     1 / 0
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not graded: the answer could not be compared ... (ZeroDivisionError).
    """
    try:
        yield
    except WrongAnswer:
        raise
    except Exception as error:  # noqa: BLE001 - every error of a hidden test must hide the test
        raise WrongAnswer(f"{NOT_GRADED} ({type(error).__name__}).") from None


def hint(label: str) -> None:
    """Show the next hint of exercise ``label`` (run its check cell once first).

    The first call shows the first hint, unless a wrong answer has already shown it;
    after the last, ``hint()`` shows the last one again.

    >>> check(None, label="0.1", hints=["a nudge", "the method"])
    Not answered yet: replace None with your answer and run this cell again.
    >>> hint("0.1")
    Hint 1 of 2 for 0.1: a nudge
    >>> hint("0.1")
    Hint 2 of 2 for 0.1: the method
    >>> hint("0.1")
    Hint 2 of 2 for 0.1 (the last): the method
    """
    if label not in _HINTS:
        print(f"No hints for {label!r} yet: run the exercise's check cell first.")  # noqa: T201
        return
    steps = _HINTS[label]
    last = _SHOWN.get(label, 0) >= len(steps)
    step = min(_SHOWN.get(label, 0) + 1, len(steps))
    _shown(label, step)
    print(f"Hint {step} of {len(steps)} for {label}{' (the last)' if last else ''}: {steps[step - 1]}")  # noqa: T201


def predict(guess: Any, *, unit: str | None = None, name: str = "guess") -> None:
    """Record a prediction before the notebook derives the answer; show nothing of the answer.

    >>> predict(None, unit="GB")
    Write your guess (in GB) in place of None and run this cell, before reading on.
    >>> predict(30, unit="GB")
    Recorded your guess: 30 GB. Now read on.
    """
    suffix = f" (in {unit})" if unit else ""
    if guess is None:
        _GUESSES[name] = (None, unit)
        print(f"Write your guess{suffix} in place of None and run this cell, before reading on.")  # noqa: T201
        return
    value: float | bool = guess if isinstance(guess, bool) else _read(guess, unit, "your guess")
    _GUESSES[name] = (value, unit)
    shown = str(value) if isinstance(value, bool) else f"{value:.4g}{f' {unit}' if unit else ''}"
    print(f"Recorded your guess: {shown}. Now read on.")  # noqa: T201


def reveal(actual: Any, *, name: str = "guess") -> None:
    """Compare the recorded prediction with the model's value.

    >>> predict(30, unit="GB")
    Recorded your guess: 30 GB. Now read on.
    >>> from mlsysim_nb import Q_
    >>> reveal(Q_(24, "GB"))
    The memory model says 24 GB; you guessed 30 GB (1.25x high).
    """
    guess, unit = _GUESSES.get(name, (None, None))
    if isinstance(actual, bool):
        said = f"The memory model says {actual}"
        if guess is None:
            print(f"{said}. (You made no guess: next time commit to one first.)")  # noqa: T201
        else:
            print(f"{said}; you guessed {guess} ({'right' if guess == actual else 'wrong'}).")  # noqa: T201
        return
    value = _read(actual, unit, "the model's value")
    said = f"The memory model says {value:.4g}{f' {unit}' if unit else ''}"
    if guess is None:
        print(f"{said}. (You made no guess: next time commit to one first.)")  # noqa: T201
        return
    ratio = float(guess) / value if value else math.inf
    judged = "about right" if 0.9 <= ratio <= 1.1 else (f"{ratio:.3g}x high" if ratio > 1 else f"{1 / ratio:.3g}x low")
    print(f"{said}; you guessed {float(guess):.4g}{f' {unit}' if unit else ''} ({judged}).")  # noqa: T201


#: the names a hidden test grades with: a notebook cannot replace them on the module
_LOCKED = frozenset({"require", "grading", "WrongAnswer", "NOT_WITHIN_TOLERANCE", "NOT_GRADED"})


class _Exercises(types.ModuleType):
    """The module itself, refusing to have its grading names replaced (``mlsysim_nb.exercises.require = ...``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LOCKED:
            msg = f"mlsysim_nb.exercises.{name} is what the grader uses and cannot be replaced"
            raise AttributeError(msg)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in _LOCKED:
            msg = f"mlsysim_nb.exercises.{name} is what the grader uses and cannot be removed"
            raise AttributeError(msg)
        super().__delattr__(name)


sys.modules[__name__].__class__ = _Exercises
