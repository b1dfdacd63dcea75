"""Self-check cells for the course notebooks: ``check(answer, expected)``.

A student replaces ``None`` with an answer and runs the check. An unanswered
exercise prints a reminder (so the notebook still runs top to bottom); a
wrong answer raises ``AssertionError`` with a hint; a right one says so.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["check"]


def _magnitude(value: Any, unit: str | None) -> float:
    if hasattr(value, "units"):
        if unit is None and value.dimensionless:
            return float(value.m_as(""))
        if unit is None:
            msg = "this answer is a plain number: give it without a unit"
            raise AssertionError(msg)
        return float(value.m_as(unit))
    return float(value)


def check(answer: Any, expected: Any, *, unit: str | None = None, rel: float = 0.02, hint: str = "") -> None:
    """Compare a student's ``answer`` with the model's ``expected`` value.

    Parameters
    ----------
    answer
        The student's answer: ``None`` (not answered yet), a number in
        ``unit``, a quantity, or a bool.
    expected
        The model's value (a quantity, number or bool).
    unit
        The unit a plain-number answer is read in, e.g. ``"GB"``.
    rel
        Relative tolerance (2 % by default: answers worked by hand round).
    hint
        Shown with a wrong answer.

    Raises
    ------
    AssertionError
        When the answer is wrong.

    >>> from mlsysim_nb import Q_
    >>> check(None, Q_(24, "GB"), unit="GB")
    Not answered yet: replace None with your answer (in GB) and run this cell again.
    >>> check(24, Q_(24e9, "byte"), unit="GB")
    Correct: 24 GB.
    >>> check(12, Q_(24e9, "byte"), unit="GB", hint="count the gradients too")
    Traceback (most recent call last):
    ...
    AssertionError: Not quite: 12 GB is 50 % below the model's value. Hint: count the gradients too
    """
    suffix = f" (in {unit})" if unit else ""
    if answer is None:
        print(f"Not answered yet: replace None with your answer{suffix} and run this cell again.")  # noqa: T201
        return
    if isinstance(expected, bool) or isinstance(answer, bool):
        ok = bool(answer) == bool(expected) and isinstance(answer, bool)
        shown_expected, off = str(bool(expected)), f"{answer} is not the model's answer"
    else:
        want = _magnitude(expected, unit)
        got = _magnitude(answer, unit)
        ok = math.isclose(got, want, rel_tol=rel, abs_tol=1e-12)
        unit_text = f" {unit}" if unit else ""
        shown_expected = f"{want:.4g}{unit_text}"
        # say how far off, not the value itself: the student should find it
        side = "above" if got > want else "below"
        percent = abs(got - want) / abs(want) * 100 if want else math.inf
        off = f"{got:.4g}{unit_text} is {percent:.3g} % {side} the model's value"
    if not ok:
        message = f"Not quite: {off}."
        if hint:
            message += f" Hint: {hint}"
        raise AssertionError(message)
    print(f"Correct: {shown_expected}.")  # noqa: T201
