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

The visible check never raises: an answer of the wrong form is told what is wrong
in one line, and Run All goes on. A failed graded check raises
:class:`WrongAnswer`, an ``AssertionError`` that a notebook shows as one short
styled line instead of a traceback (and that still counts as a failure for a
grader). ``hint(label)`` shows the next, more explicit hint of an exercise; the
last one gives the method. Working alone, with the answer key that ``make
student`` writes beside the self-study notebooks (:mod:`mlsysim_nb.answer_key`),
``check`` also says whether the value is within tolerance, never how far off.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from mlsysim_nb.answers import (
    WrongAnswer,
    form_problem,
    lock_module,
    read_answer,
    scale_note,
    verdict,
)

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

#: what a graded answer outside the tolerance is told, whatever its distance or sign
NOT_WITHIN_TOLERANCE = "Not quite: not within tolerance of the package's value."

#: what a graded answer is told when its hidden test could not compare it (the test's code is never shown)
NOT_GRADED = "Not graded: the answer could not be compared with the package's value"

#: set by ``check(None)``: the reminder is on screen, so the ``require(None)`` that follows in a grader's
#: copy of the cell does not say "not answered" a second time
_REMINDED: list[bool] = [False]

#: what an exercise's label looks like ("1.1", "12.4"): text of another form passed to hint() is an answer
_LABEL = re.compile(r"\w{1,8}(\.\w{1,8})+")


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
    """The visible check of an exercise: confirm what is fair before grading; never raise, so Run All goes on.

    It says whether the exercise is answered, whether the answer reads in ``unit`` (a quantity of another
    dimension, a string that is not a number fail), whether it is a whole number, lies in ``between`` or is
    one of ``choices``, and its sign. An answer of the wrong form is told what is wrong in one line, and the
    notebook runs on; the graded check, :func:`require` in the hidden tests, still scores it 0.

    Working alone (the self-study notebooks, with the answer key that ``make student`` writes beside them),
    it also says whether the value is within the exercise's tolerance of the package's value, never how far
    off or in which direction. Without a key (the graded release, the instructor's notebooks) it knows
    nothing of the expected value and cannot give it away.

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

    >>> check(None, unit="GB")
    Not answered yet: replace None with your answer (in GB) and run this cell again.
    >>> check("24 GB", unit="GB")
    Answer recorded: 24 GB. It reads in GB and is positive; its value is graded when the notebook is graded.
    >>> check(6.4e10, unit="GB")  # doctest: +ELLIPSIS
    Answer recorded: 6.4e+10 GB. ... Note: 6.4e+10 GB is more than a petabyte; if you typed bytes, convert to GB.
    >>> check(-3, unit="GB", hints=["a nudge", "the method"])
    ✗ Check the form: the answer is a positive amount; check the sign. Hint: a nudge
    """
    steps = tuple(hints) or ((hint,) if hint else ())
    _register(label, steps)
    _REMINDED[0] = answer is None
    if answer is None:
        suffix = f" (in {unit})" if unit else ""
        print(f"Not answered yet: replace None with your answer{suffix} and run this cell again.")  # noqa: T201
        return
    try:
        problem, got = form_problem(answer, unit, sign, whole, between, choices)
    except WrongAnswer as error:
        problem, got = str(error), 0.0
    except Exception as error:  # noqa: BLE001 - an answer nothing can read (an array among choices) is a wrong form
        problem, got = f"could not read your answer ({type(error).__name__})", 0.0
    if problem:  # one line, and the notebook runs on: the hidden test still scores it 0
        print(f"✗ Check the form: {problem}.{_hint_text(label, steps)}")  # noqa: T201
        return
    judged = _self_study_verdict(answer, label, steps)
    if choices is not None:
        graded = f".{judged}" if judged else "; it is graded when the notebook is graded."
        print(f"Answer recorded: {answer!r}, one of the choices{graded}")  # noqa: T201
        return
    said = [f"reads in {unit}" if unit else ("is a whole number" if whole else "is a plain number")]
    said += ["is a whole number"] if whole and unit else []
    said += [f"lies between {between[0]:g} and {between[1]:g}"] if between is not None else []
    said += {"positive": ["is positive"], "negative": ["is negative"]}.get(sign, [])
    listed = ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]
    shown = f"{got:.4g}{f' {unit}' if unit else ''}"
    if judged:
        print(f"Answer recorded: {shown}.{judged}{scale_note(got, unit)}")  # noqa: T201
        return
    graded = "its value is graded when the notebook is graded"
    print(f"Answer recorded: {shown}. It {listed}; {graded}.{scale_note(got, unit)}")  # noqa: T201


def _self_study_verdict(answer: Any, label: str, steps: tuple[str, ...]) -> str:
    """Working alone, with the answer key beside the notebook: within tolerance or not, never how far; else ``""``."""
    from mlsysim_nb.answer_key import lookup

    expectations = lookup(label) if label else None
    if not expectations:
        return ""
    problems = []
    for e in expectations:
        try:
            ok, why = verdict(answer, e.expected, e.accept, e.unit, e.rel)
        except WrongAnswer as error:
            ok, why = False, str(error)
        except Exception as error:  # noqa: BLE001 - the self-study check never stops Run All
            ok, why = False, f"could not compare your answer ({type(error).__name__})"
        if not ok:
            problems.append(why)
    if not problems:
        within = "exactly" if all(e.rel == 0 for e in expectations) else "within the exercise's tolerance"
        return f" ✓ It matches the package's value ({within})."
    said = f"Not quite: {problems[0]}." if problems[0] else NOT_WITHIN_TOLERANCE
    return f" ✗ {said}{_hint_text(label, steps)}"


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
        The package's value (a quantity, number or bool).
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
    mlsysim_nb.exercises.WrongAnswer: Not quite: not within tolerance of the package's value.
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
    ok, why = verdict(answer, expected, tuple(accept), unit, rel)
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


def hint(label: Any) -> None:
    """Show the next hint of exercise ``label`` (run its check cell once first).

    The first call shows the first hint, even when an answer of the wrong form has shown it inline; after the
    last, ``hint()`` shows the last one again. A number or an answer in place of the label is told so.

    >>> check(None, label="0.1", hints=["a nudge", "the method"])
    Not answered yet: replace None with your answer and run this cell again.
    >>> hint("0.1")
    Hint 1 of 2 for 0.1: a nudge
    >>> hint("0.1")
    Hint 2 of 2 for 0.1: the method
    >>> hint("0.1")
    Hint 2 of 2 for 0.1 (the last): the method
    >>> hint(0.1)
    hint() takes the exercise's label as text, in quotes: hint("0.1"), not hint(0.1).
    """
    if not isinstance(label, str):
        shown = repr(label) if isinstance(label, (int, float)) else f"a {type(label).__name__}"
        print(f'hint() takes the exercise\'s label as text, in quotes: hint("{label}"), not hint({shown}).')  # noqa: T201
        return
    if label not in _HINTS:
        if _LABEL.fullmatch(label) or not any(c.isdigit() for c in label):
            print(f"No hints for {label!r} yet: run the exercise's check cell first.")  # noqa: T201
        else:
            print(f'hint() takes the exercise\'s label, such as hint("1.1"), not an answer: got {label[:40]!r}.')  # noqa: T201
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
    try:
        value: float | bool = guess if isinstance(guess, bool) else read_answer(guess, unit, "your guess")
    except WrongAnswer as error:  # one line, and the notebook runs on
        print(f"✗ Not recorded: {error}. Write it as a number{suffix} and run this cell again.")  # noqa: T201
        return
    _GUESSES[name] = (value, unit)
    shown = str(value) if isinstance(value, bool) else f"{value:.4g}{f' {unit}' if unit else ''}"
    print(f"Recorded your guess: {shown}. Now read on.")  # noqa: T201


def reveal(actual: Any, *, name: str = "guess") -> None:
    """Compare the recorded prediction with the package's value.

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
    value = read_answer(actual, unit, "the package's value")
    said = f"The memory model says {value:.4g}{f' {unit}' if unit else ''}"
    if guess is None:
        print(f"{said}. (You made no guess: next time commit to one first.)")  # noqa: T201
        return
    ratio = float(guess) / value if value else math.inf
    judged = "about right" if 0.9 <= ratio <= 1.1 else (f"{ratio:.3g}x high" if ratio > 1 else f"{1 / ratio:.3g}x low")
    print(f"{said}; you guessed {float(guess):.4g}{f' {unit}' if unit else ''} ({judged}).")  # noqa: T201


lock_module(sys.modules[__name__])
