"""The course's self-checks: one-line wrong answers, graded hints, answers with units, predictions."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from mlsysim_nb import Q_
from mlsysim_nb.exercises import WrongAnswer, check, hint, predict, require, reveal


def test_a_wrong_answer_is_an_assertion_error_with_the_nudge() -> None:
    """12 GB against 24 GB fails as an AssertionError, says how far off, and gives the first hint only."""
    with pytest.raises(AssertionError) as caught:
        check(12, Q_(24, "GB"), unit="GB", label="t.1", hints=["a nudge", "the method"])
    assert str(caught.value) == (
        "Not quite: 12 GB is 50 % below the model's value. Hint: a nudge (still stuck? run hint('t.1'))"
    )


def test_the_notebook_shows_one_styled_line() -> None:
    """IPython's traceback hook gives one red line: the message, no frames."""
    lines = WrongAnswer("Not quite: 1 is 50 % below the model's value.")._render_traceback_()
    assert len(lines) == 1
    assert re.sub(r"\x1b\[[0-9;]*m", "", lines[0]) == "✗ Not quite: 1 is 50 % below the model's value."


def test_a_kernel_prints_no_traceback_for_a_wrong_answer() -> None:
    """Run in a real kernel, a wrong answer's error output is one line long, and it is still an error."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from mlsysim_nb.exercises import check\ncheck(3, 4, hint='more')")]
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    client.execute()
    (error,) = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert (error.ename, len(error.traceback)) == ("WrongAnswer", 1)
    assert "Hint: more" in error.traceback[0]


@pytest.mark.parametrize(
    ("answer", "expected", "unit"),
    [
        ("6 GB", Q_(6e9, "byte"), "GB"),
        ("6000 MB", Q_(6, "GB"), "GB"),
        (Q_(5.588, "GiB"), Q_(6, "GB"), "GB"),
        (6, Q_(6e9, "byte"), "GB"),
        (True, True, None),
        (0.2794, 0.28, None),
    ],
)
def test_right_answers_in_any_form(answer, expected, unit, capsys) -> None:
    """Numbers, quantities and strings with units are read in the expected unit."""
    check(answer, expected, unit=unit)
    assert capsys.readouterr().out.startswith("Correct: ")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("6 s", "your answer has unit s, which cannot be read in GB"),
        ("six", "could not read your answer 'six' as a number with a unit (UndefinedUnitError)"),
        ([6], "your answer should be a number in GB, got [6]"),
    ],
)
def test_unreadable_answers_say_why(answer, message) -> None:
    """An answer in the wrong dimension or not a number fails, naming the problem."""
    with pytest.raises(WrongAnswer) as caught:
        check(answer, Q_(6, "GB"), unit="GB")
    assert str(caught.value) == message


def test_accept_takes_the_exact_count_too(capsys) -> None:
    """An exercise that accepts the nominal and the exact parameter count takes an answer from either."""
    nominal, exact = Q_(7.0e9 * 12, "byte"), Q_(6_738_415_616 * 12, "byte")
    check(80.86, nominal, unit="GB", accept=[exact])
    assert capsys.readouterr().out == "Correct: 84 GB.\n"
    with pytest.raises(WrongAnswer):
        check(70, nominal, unit="GB", accept=[exact])


def test_a_bool_exercise_wants_a_bool() -> None:
    """1 is not True for a yes/no exercise."""
    with pytest.raises(WrongAnswer, match="Not quite: 1 is not the model's answer"):
        check(1, True)


def test_hints_go_from_nudge_to_method(capsys) -> None:
    """hint() starts at the nudge (none was shown yet), then the method, and stays on the last hint."""
    check(None, 1, label="t.2", hints=["nudge", "method"])
    hint("t.2")
    hint("t.2")
    hint("t.2")
    hint("unknown")
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "Hint 1 of 2 for t.2: nudge",
        "Hint 2 of 2 for t.2: method",
        "Hint 2 of 2 for t.2 (the last): method",
        "No hints for 'unknown' yet: run the exercise's check cell first.",
    ]


def test_require_fails_an_unanswered_exercise_and_is_silent_when_right(capsys) -> None:
    """The autograder's check: None fails, a right answer prints nothing, a wrong one fails."""
    require(24.1, Q_(24, "GB"), unit="GB")
    assert capsys.readouterr().out == ""
    with pytest.raises(WrongAnswer, match="Not answered"):
        require(None, Q_(24, "GB"), unit="GB")
    with pytest.raises(WrongAnswer, match="Not quite"):
        require(12, Q_(24, "GB"), unit="GB")


def test_predict_records_and_reveal_compares(capsys) -> None:
    """A guess of 8 GB against the model's 24 GB is 3x low."""
    predict(8, unit="GB", name="t.3")
    reveal(Q_(24e9, "byte"), name="t.3")
    assert capsys.readouterr().out.splitlines() == [
        "Recorded your guess: 8 GB. Now read on.",
        "The memory model says 24 GB; you guessed 8 GB (3x low).",
    ]
