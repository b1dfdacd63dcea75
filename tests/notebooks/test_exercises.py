"""The course's self-checks in a notebook: one-line failures, graded hints, answers with units, predictions."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from mlsysim_nb import Q_
from mlsysim_nb.exercises import NOT_WITHIN_TOLERANCE, WrongAnswer, check, hint, predict, require, reveal


def test_a_wrong_answer_is_an_assertion_error_that_gives_nothing_away() -> None:
    """12 GB against 24 GB fails as an AssertionError and says only that it is not within tolerance."""
    with pytest.raises(AssertionError) as caught:
        require(12, Q_(24, "GB"), unit="GB")
    assert str(caught.value) == NOT_WITHIN_TOLERANCE == "Not quite: not within tolerance of the package's value."


def test_the_notebook_shows_one_styled_line() -> None:
    """IPython's traceback hook gives one red line: the message, no frames."""
    lines = WrongAnswer(NOT_WITHIN_TOLERANCE)._render_traceback_()
    assert len(lines) == 1
    assert re.sub(r"\x1b\[[0-9;]*m", "", lines[0]) == f"✗ {NOT_WITHIN_TOLERANCE}"


def test_a_kernel_prints_no_traceback_for_a_wrong_answer() -> None:
    """In a real kernel, a wrong form is one printed line and Run All goes on; a wrong value is a one-line error."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from mlsysim_nb.exercises import check\ncheck(-3, unit='GB', hint='more')"),
        nbformat.v4.new_code_cell("from mlsysim_nb.exercises import require\nrequire(3, 4)"),
        nbformat.v4.new_code_cell("print('ran on')"),
    ]
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    client.execute()
    (form,) = nb.cells[0].outputs
    assert (form.output_type, form.text) == (
        "stream",
        "✗ Check the form: the answer is a positive amount; check the sign. Hint: more\n",
    )
    (error,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert (error.ename, len(error.traceback)) == ("WrongAnswer", 1)
    assert "not within tolerance" in error.traceback[0]
    assert nb.cells[2].outputs[0].text == "ran on\n"


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
    """Numbers, quantities and strings with units are read in the expected unit; the graded check is silent."""
    require(answer, expected, unit=unit)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("6 s", "your answer has the wrong dimension: s is a [time], and the answer is a [information] (asked in GB)"),
        ("six", "could not read your answer 'six' as a number with a unit (UndefinedUnitError)"),
        ([6], "your answer should be a number in GB, a quantity or text, got a list"),
    ],
)
def test_unreadable_answers_say_why(answer, message, capsys) -> None:
    """An answer in the wrong dimension or not a number is told by the check and fails the graded check."""
    check(answer, unit="GB")
    assert capsys.readouterr().out == f"✗ Check the form: {message}.\n"
    with pytest.raises(WrongAnswer) as caught:
        require(answer, Q_(6, "GB"), unit="GB")
    assert str(caught.value) == message


def test_hints_go_from_nudge_to_method(capsys) -> None:
    """hint() starts at the nudge (none was shown yet), then the method, and stays on the last hint."""
    check(None, label="t.2", hints=["nudge", "method"])
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


def test_an_unanswered_exercise_runs_and_fails_only_when_graded(capsys) -> None:
    """The visible check of None prints a reminder; the graded check of None fails."""
    check(None, unit="GB")
    assert (
        capsys.readouterr().out == "Not answered yet: replace None with your answer (in GB) and run this cell again.\n"
    )
    with pytest.raises(WrongAnswer, match="No points"):
        require(None, Q_(24, "GB"), unit="GB")


def test_predict_records_and_reveal_compares(capsys) -> None:
    """A guess of 8 GB against the model's 24 GB is 3x low."""
    predict(8, unit="GB", name="t.3")
    reveal(Q_(24e9, "byte"), name="t.3")
    assert capsys.readouterr().out.splitlines() == [
        "Recorded your guess: 8 GB. Now read on.",
        "The memory model says 24 GB; you guessed 8 GB (3x low).",
    ]
