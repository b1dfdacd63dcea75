"""Self-checks for the course notebooks: ``predict()``, ``check()`` and ``hint()``.

A notebook opens with ``predict(guess, unit=...)``: it records a guess and shows
nothing of the answer; ``reveal(name, actual)`` later compares the two. An
exercise is checked with ``check(answer, expected, ...)``: an unanswered one
(``None``) prints a reminder, so the notebook still runs top to bottom; a right
one says so; a wrong one raises :class:`WrongAnswer`, an ``AssertionError``
that a notebook shows as one short styled line with the first hint instead of
a traceback (and that still counts as a failure for a grader). ``hint(label)``
shows the next, more explicit hint of an exercise.
"""

from __future__ import annotations

import math
from typing import Any

from pint.errors import PintError

__all__ = ["WrongAnswer", "check", "hint", "predict", "require", "reveal"]

_HINTS: dict[str, tuple[str, ...]] = {}
_SHOWN: dict[str, int] = {}
_GUESSES: dict[str, tuple[float | bool | None, str | None]] = {}

_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"


class WrongAnswer(AssertionError):  # noqa: N818 - students read the name: "wrong answer", not "error"
    """A wrong (or, under ``require``, missing) answer: one short line in a notebook, still a failure.

    IPython calls ``_render_traceback_`` instead of printing the traceback, so
    the student sees the message alone, in red; pytest and nbgrader see an
    ``AssertionError`` like any failed test.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{_RED}{_BOLD}✗{_RESET}{_RED} {self}{_RESET}"]


def _read(value: Any, unit: str | None, what: str) -> float:
    """A number in ``unit`` from a plain number, a quantity or a string such as ``"6 GB"``."""
    if isinstance(value, str):
        from mlsysim_nb.units import Q_

        try:
            value = Q_(value.strip())
        except (PintError, ValueError, TypeError, SyntaxError, AttributeError) as error:
            msg = f"could not read {what} {value!r} as a number with a unit ({type(error).__name__})"
            raise WrongAnswer(msg) from None
    if hasattr(value, "units"):
        if unit is None:
            if value.dimensionless:
                return float(value.m_as(""))
            msg = f"{what} is a plain number here: give it without a unit"
            raise WrongAnswer(msg)
        try:
            return float(value.m_as(unit))
        except PintError:
            msg = f"{what} has unit {value.units:~P}, which cannot be read in {unit}"
            raise WrongAnswer(msg) from None
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        msg = f"{what} should be a number{f' in {unit}' if unit else ''}, got {value!r}"
        raise WrongAnswer(msg) from None


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


def _verdict(answer: Any, expected: Any, accept: tuple[Any, ...], unit: str | None, rel: float) -> tuple[bool, str]:
    """Whether ``answer`` matches ``expected`` (or an accepted alternative), and how far off it is."""
    if isinstance(expected, bool):
        return (isinstance(answer, bool) and answer == expected), f"{answer!r} is not the model's answer"
    got = _read(answer, unit, "your answer")
    wants = [_read(v, unit, "the expected value") for v in (expected, *accept)]
    if any(math.isclose(got, want, rel_tol=rel, abs_tol=1e-12) for want in wants):
        return True, ""
    want = wants[0]
    unit_text = f" {unit}" if unit else ""
    side = "above" if got > want else "below"
    percent = abs(got - want) / abs(want) * 100 if want else math.inf
    # say how far off, not the value itself: the student should find it
    return False, f"{got:.4g}{unit_text} is {percent:.3g} % {side} the model's value"


def check(
    answer: Any,
    expected: Any,
    *,
    unit: str | None = None,
    rel: float = 0.02,
    hint: str = "",
    hints: tuple[str, ...] | list[str] = (),
    label: str = "",
    accept: tuple[Any, ...] | list[Any] = (),
) -> None:
    """Compare a student's ``answer`` with the model's ``expected`` value.

    Parameters
    ----------
    answer
        ``None`` (not answered yet), a number read in ``unit``, a quantity, a
        string such as ``"6 GB"``, or a bool.
    expected
        The memory model's value (a quantity, number or bool).
    unit
        The unit a plain-number answer is read in, e.g. ``"GB"``.
    rel
        Relative tolerance (2 % by default: answers worked by hand round).
    hint
        One hint, shown with a wrong answer (same as ``hints=[hint]``).
    hints
        Graded hints: the first (a nudge) is shown with a wrong answer, the
        next ones (the method) by ``hint(label)``.
    label
        The exercise's label, e.g. ``"1.1"``, which ``hint()`` takes.
    accept
        Other values that also count as right, e.g. the same quantity worked
        from a model's nominal and from its exact parameter count.

    Raises
    ------
    WrongAnswer
        When the answer is wrong (an ``AssertionError``).

    >>> from mlsysim_nb import Q_
    >>> check(None, Q_(24, "GB"), unit="GB")
    Not answered yet: replace None with your answer (in GB) and run this cell again.
    >>> check("24 GB", Q_(24e9, "byte"), unit="GB")
    Correct: 24 GB.
    >>> check(12, Q_(24e9, "byte"), unit="GB", hints=["count the gradients too", "16 bytes per parameter"])
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not quite: 12 GB is 50 % below the model's value. Hint: count the gradients too
    """
    steps = tuple(hints) or ((hint,) if hint else ())
    _register(label, steps)
    _REMINDED[0] = answer is None
    if answer is None:
        suffix = f" (in {unit})" if unit else ""
        print(f"Not answered yet: replace None with your answer{suffix} and run this cell again.")  # noqa: T201
        return
    ok, off = _verdict(answer, expected, tuple(accept), unit, rel)
    if not ok:
        if steps:
            _shown(label, 1)
        raise WrongAnswer(f"Not quite: {off}.{_hint_text(label, steps)}")
    shown = str(expected) if isinstance(expected, bool) else f"{_read(expected, unit, 'the expected value'):.4g}"
    print(f"Correct: {shown}{f' {unit}' if unit and not isinstance(expected, bool) else ''}.")  # noqa: T201


def require(answer: Any, expected: Any, **options: Any) -> None:
    """Like :func:`check`, but silent when right, and an unanswered exercise fails: what an autograder runs.

    >>> require(3.01, 3)
    >>> require(None, 3)
    Traceback (most recent call last):
    ...
    mlsysim_nb.exercises.WrongAnswer: Not answered: this exercise has no answer yet.
    """
    reminded, _REMINDED[0] = _REMINDED[0], False
    if answer is None:
        # right after check(None) printed its reminder (a grader's copy of the cell), say only what it costs
        msg = "Not answered: this exercise has no answer yet."
        if reminded:
            msg = "No points: there is no answer to grade."
        raise WrongAnswer(msg)
    ok, off = _verdict(
        answer, expected, tuple(options.get("accept", ())), options.get("unit"), options.get("rel", 0.02)
    )
    if not ok:
        raise WrongAnswer(f"Not quite: {off}.")


def hint(label: str) -> None:
    """Show the next hint of exercise ``label`` (run its check cell once first).

    The first call shows the first hint, unless a wrong answer has already shown it;
    after the last, ``hint()`` shows the last one again.

    >>> check(None, 1, label="0.1", hints=["a nudge", "the method"])
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
