"""hint() and check()/require() as a student and a grader see them: each message once, hints from the first."""

from __future__ import annotations

import pytest

from mlsysim_nb import Q_
from mlsysim_nb.exercises import WrongAnswer, check, hint, require


def test_hint_starts_at_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    """After an unanswered check, hint() shows hint 1 of 2, then 2 of 2."""
    check(None, 1, label="h.1", hints=["a nudge", "the method"])
    hint("h.1")
    hint("h.1")
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["Hint 1 of 2 for h.1: a nudge", "Hint 2 of 2 for h.1: the method"]


def test_hint_after_a_wrong_answer_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong answer shows hint 1 inline; hint() then shows hint 2, and repeats the last, saying so."""
    with pytest.raises(WrongAnswer, match="Hint: a nudge"):
        check(2, 1, label="h.2", hints=["a nudge", "the method"])
    hint("h.2")
    hint("h.2")
    assert capsys.readouterr().out.splitlines() == [
        "Hint 2 of 2 for h.2: the method",
        "Hint 2 of 2 for h.2 (the last): the method",
    ]


def test_unanswered_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    """A grader's copy of the cell (check, then require) says "not answered" once, and still fails."""
    check(None, Q_(24, "GB"), unit="GB", label="h.3", hints=["a nudge"])
    with pytest.raises(WrongAnswer) as raised:
        require(None, Q_(24, "GB"), unit="GB")
    said = capsys.readouterr().out + str(raised.value)
    assert said.lower().count("not answered") == 1
    assert str(raised.value) == "No points: there is no answer to grade."
    with pytest.raises(WrongAnswer, match="Not answered"):  # alone, require() says it
        require(None, 3)
