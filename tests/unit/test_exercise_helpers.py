"""hint(), check() and require() as a student and a grader see them.

The visible ``check()`` confirms the form of an answer and never its value; the graded
``require()`` says "not within tolerance" whatever the distance or sign, and names a slip
of unit or scale as such.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mlsysim_nb import Q_
from mlsysim_nb.exercises import NOT_WITHIN_TOLERANCE, WrongAnswer, check, hint, require

INFORMATION_UNITS = ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")


def _said(answer: object, expected: object, **options: object) -> str:
    with pytest.raises(WrongAnswer) as raised:
        require(answer, expected, **options)
    return str(raised.value)


def test_hint_starts_at_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    """After an unanswered check, hint() shows hint 1 of 2, then 2 of 2."""
    check(None, label="h.1", hints=["a nudge", "the method"])
    hint("h.1")
    hint("h.1")
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["Hint 1 of 2 for h.1: a nudge", "Hint 2 of 2 for h.1: the method"]


def test_hint_after_a_wrong_form_starts_at_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    """An answer of the wrong form shows hint 1 inline; the first hint() still shows hint 1, then 2, then repeats."""
    check(-2, label="h.2", hints=["a nudge", "the method"])
    hint("h.2")
    hint("h.2")
    hint("h.2")
    assert capsys.readouterr().out.splitlines() == [
        "✗ Check the form: the answer is a positive amount; check the sign. Hint: a nudge (still stuck? run hint('h.2'))",
        "Hint 1 of 2 for h.2: a nudge",
        "Hint 2 of 2 for h.2: the method",
        "Hint 2 of 2 for h.2 (the last): the method",
    ]


@pytest.mark.parametrize(
    ("label", "said"),
    [
        (5.1, 'hint() takes the exercise\'s label as text, in quotes: hint("5.1"), not hint(5.1).'),
        (63, 'hint() takes the exercise\'s label as text, in quotes: hint("63"), not hint(63).'),
        (
            "63 sequences",
            "hint() takes the exercise's label, such as hint(\"1.1\"), not an answer: got '63 sequences'.",
        ),
        ("45", "hint() takes the exercise's label, such as hint(\"1.1\"), not an answer: got '45'."),
        ("9.9", "No hints for '9.9' yet: run the exercise's check cell first."),
    ],
)
def test_hint_with_a_number_or_an_answer_says_so(label: object, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """hint(5.1) or hint("63 sequences") is told to pass the label as text; an unseen label is told to run its check."""
    hint(label)
    assert capsys.readouterr().out == said + "\n"


def test_unanswered_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    """A grader's copy of the cell (check, then require) says "not answered" once, and still fails."""
    check(None, unit="GB", label="h.3", hints=["a nudge"])
    with pytest.raises(WrongAnswer) as raised:
        require(None, Q_(24, "GB"), unit="GB")
    said = capsys.readouterr().out + str(raised.value)
    assert said.lower().count("not answered") == 1
    assert str(raised.value) == "No points: there is no answer to grade."
    with pytest.raises(WrongAnswer, match="Not answered"):  # alone, require() says it
        require(None, 3)


def test_the_visible_check_does_not_judge_the_value(capsys: pytest.CaptureFixture[str]) -> None:
    """Any positive amount in GB passes the visible check, the right one and a wrong one alike, with the same words."""
    check(64.24, unit="GB")
    check(1.5, unit="GB")
    right, wrong = capsys.readouterr().out.splitlines()
    assert right.replace("64.24", "X") == wrong.replace("1.5", "X")
    assert (
        right
        == "Answer recorded: 64.24 GB. It reads in GB and is positive; its value is graded when the notebook is graded."
    )
    assert "Correct" not in right


@pytest.mark.parametrize(
    ("answer", "options", "message"),
    [
        (-3, {"unit": "GB"}, "the answer is a positive amount; check the sign"),
        (
            "6 s",
            {"unit": "GB"},
            "your answer has the wrong dimension: s is a [time], and the answer is a [information] (asked in GB)",
        ),
        ("six", {"unit": "GB"}, "could not read your answer 'six' as a number with a unit (UndefinedUnitError)"),
        ([6], {"unit": "GB"}, "your answer should be a number in GB, a quantity or text, got a list"),
        (12.5, {"whole": True}, "the answer is a whole number; got 12.5"),
        (1.2, {"between": (0, 1)}, "the answer lies between 0 and 1; got 1.2"),
        (5, {"choices": (0, 1, 2, 3)}, "the answer is one of 0, 1, 2, 3; got 5"),
        (True, {"choices": (0, 1, 2, 3)}, "the answer is one of 0, 1, 2, 3; got True"),
        (float("nan"), {"unit": "GB"}, "nan is not a finite number"),
    ],
)
def test_the_visible_check_names_a_wrong_form(
    answer: object, options: dict, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong sign, dimension, range or choice, or no number at all, is told in one line and raises nothing."""
    check(answer, **options)
    assert capsys.readouterr().out == f"✗ Check the form: {message}.\n"


@pytest.mark.parametrize(
    ("answer", "options", "expected", "graded"),
    [
        ("63 sequences", {"whole": True}, 63, {"rel": 0}),
        (45, {"between": (0, 1)}, 0.45, {}),
    ],
)
def test_a_malformed_answer_is_told_but_still_scores_nothing(
    answer: object, options: dict, expected: object, graded: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    """'63 sequences' or 45 for a share prints what is wrong (Run All goes on); the hidden test still fails it."""
    check(answer, **options)
    assert capsys.readouterr().out.startswith("✗ Check the form: ")
    with pytest.raises(WrongAnswer):
        require(answer, expected, **graded)


def test_a_choice_is_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    """One of the choices is recorded without saying whether it is the right one."""
    check(2, choices=(0, 1, 2, 3))
    assert (
        capsys.readouterr().out == "Answer recorded: 2, one of the choices; it is graded when the notebook is graded.\n"
    )


@pytest.mark.parametrize(
    ("answer", "expected", "options", "slip"),
    [
        (6.4e10, Q_(64, "GB"), {"unit": "GB"}, "the number reads as the answer in bytes, but it is asked in GB"),
        ("6.4e10 GB", Q_(64, "GB"), {"unit": "GB"}, "the number reads as the answer in bytes, but it is asked in GB"),
        (64000, Q_(64, "GB"), {"unit": "GB"}, "the number reads as the answer in MB, but it is asked in GB"),
        (59.6, Q_(64, "GB"), {"unit": "GB"}, "the number reads as the answer in GiB, but it is asked in GB"),
        (68.72, Q_(64, "GiB"), {"unit": "GiB"}, "the number reads as the answer in GB, but it is asked in GiB"),
        (1200, Q_(20, "min"), {"unit": "min"}, "the number reads as the answer in seconds, but it is asked in min"),
        (27.94, 0.2794, {}, "it looks like a percentage where a fraction was asked"),
        (8.03e9, 8.03, {}, "it looks like a count where billions were asked"),
        (6_815_744_000, 6_815_744, {"rel": 0}, "off by a factor of exactly 10^3"),
        (1024 * 3, 3, {"rel": 0}, "off by a factor of exactly 2^10"),
    ],
)
def test_a_slip_of_unit_or_scale_is_named(answer: object, expected: object, options: dict, slip: str) -> None:
    """A right value in the wrong unit, or off by exactly 10^3k or 2^10k, is told the slip, not a distance."""
    said = _said(answer, expected, **options)
    assert said.startswith("Not quite: a slip of ")
    assert slip in said
    assert "%" not in said
    assert "above" not in said
    assert "below" not in said


def test_a_plain_number_where_a_quantity_is_asked() -> None:
    """Without a unit to read it in, a plain number against a quantity is told to carry its unit; with one, it passes."""
    assert (
        _said(64, Q_(64, "GB"))
        == 'Not quite: a plain number, but the answer is a quantity: give it with its unit, e.g. "12 GB".'
    )
    require("64 GB", Q_(64, "GB"))
    require(Q_(59.6, "GiB"), Q_(64, "GB"))
    assert _said("64 GB/s", Q_(64, "GB")).startswith("your answer has the wrong dimension: GB/s")


def test_a_wrong_dimension_is_named() -> None:
    """A bandwidth where an amount of memory was asked names the two dimensions."""
    said = _said("5 GB/s", Q_(64, "GB"), unit="GB")
    assert (
        said
        == "your answer has the wrong dimension: GB/s is a [information] / [time], and the answer is a [information] (asked in GB)"
    )


def test_accept_takes_the_exact_count_too() -> None:
    """An exercise that accepts the nominal and the exact parameter count takes an answer from either."""
    nominal, exact = Q_(7.0e9 * 12, "byte"), Q_(6_738_415_616 * 12, "byte")
    require(84, nominal, unit="GB", accept=[exact])
    require(80.86, nominal, unit="GB", accept=[exact])
    assert _said(70, nominal, unit="GB", accept=[exact]) == NOT_WITHIN_TOLERANCE


def test_a_bool_exercise_wants_a_bool() -> None:
    """1 is not True for a yes/no exercise."""
    assert _said(1, True) == "Not quite: 1 is not the model's answer."


def test_require_is_silent_when_right(capsys: pytest.CaptureFixture[str]) -> None:
    """The autograder's check prints nothing for a right answer."""
    require(24.1, Q_(24, "GB"), unit="GB")
    require(13, 13, rel=0)
    assert capsys.readouterr().out == ""


@given(
    value=st.floats(min_value=1e-3, max_value=1e6),
    unit=st.sampled_from(INFORMATION_UNITS),
    asked=st.sampled_from(INFORMATION_UNITS),
    wobble=st.floats(min_value=-0.019, max_value=0.019),
)
def test_a_right_answer_passes_in_any_equivalent_unit(value: float, unit: str, asked: str, wobble: float) -> None:
    """The model's value, written in any unit of memory (as a quantity or a string), within 2 %, passes."""
    expected = Q_(value, "GB")
    answer = expected.to(unit) * (1 + wobble)
    require(answer, expected, unit=asked)
    require(f"{answer.m!r} {unit}", expected, unit=asked)
    require(float(answer.m_as(asked)), expected, unit=asked)


# ratios to the right value that are no slip of unit or scale (10^3k, 2^10k, GB/GiB, %)
FAR = (
    st.floats(min_value=1.1, max_value=9)
    | st.floats(min_value=11, max_value=90)
    | st.floats(min_value=1 / 9, max_value=1 / 1.1)
    | st.floats(min_value=1 / 90, max_value=1 / 11)
    | st.floats(min_value=-1e9, max_value=-1e-9)
    | st.just(0.0)
)


@given(
    value=st.floats(min_value=1e-3, max_value=1e6),
    ratio=FAR,
    unit=st.sampled_from((None, "GB", "GiB", "MB", "min", "ms")),
)
def test_a_wrong_answer_is_told_the_same_words_whatever_its_distance(
    value: float, ratio: float, unit: str | None
) -> None:
    """Outside the tolerance, near or far, above or below or of the wrong sign: one message, with no number in it."""
    if unit == "min":  # 60 (or 1/60) times the value in minutes is a named slip: the answer in seconds (or hours)
        assume(abs(ratio / 60 - 1) > 0.05 and abs(ratio * 60 - 1) > 0.05)
    expected = value if unit is None else Q_(value, unit)
    assert _said(value * ratio, expected, unit=unit) == NOT_WITHIN_TOLERANCE


@given(value=st.integers(min_value=1, max_value=10**6), off=st.integers(min_value=1, max_value=998))
def test_a_whole_number_off_by_any_amount_gets_the_same_words(value: int, off: int) -> None:
    """A whole-number answer off by 1 or by 998, up or down, is told "not within tolerance" and nothing else."""
    assert _said(value + off, value, rel=0) == NOT_WITHIN_TOLERANCE
    assert _said(value - off, value, rel=0) == NOT_WITHIN_TOLERANCE


def test_ten_times_off_is_not_called_a_slip() -> None:
    """Only the factors of units (10^3k, 2^10k, GB/GiB, 100 for a percentage) are named; 10x is just wrong."""
    assert _said(130, 13, rel=0) == NOT_WITHIN_TOLERANCE
    assert _said(1.3, 13, rel=0) == NOT_WITHIN_TOLERANCE


@pytest.mark.parametrize(
    ("answer", "expected", "slip"),
    [
        (64e9, Q_(64.24, "GB"), "the number reads as the answer in bytes"),  # rounded as students round: 0.4 % off
        (128, Q_(128.48, "GiB"), None),  # within tolerance: right
        (137, Q_(128.48, "GiB"), "the number reads as the answer in GB, but it is asked in GiB"),  # 137.95 GB, rounded
        (5.4e9, Q_(5.369, "GB"), "the number reads as the answer in bytes"),
    ],
)
def test_a_slip_is_named_at_the_exercises_tolerance(answer: object, expected: object, slip: str | None) -> None:
    """A slip is named when the answer, rescaled by the slip's factor, is within the exercise's tolerance."""
    unit = f"{expected.units:~P}"  # type: ignore[attr-defined]
    if slip is None:
        require(answer, expected, unit=unit)
        return
    said = _said(answer, expected, unit=unit)
    assert slip in said


def test_a_hidden_test_that_fails_in_any_way_shows_one_line_and_no_code() -> None:
    """Inside ``grading()``, any error becomes a WrongAnswer naming only its type; a WrongAnswer passes unchanged."""
    from mlsysim_nb.exercises import NOT_GRADED, grading

    with pytest.raises(WrongAnswer) as caught, grading():
        _room = Q_(80, "GiB") - 24e9  # a student's `state = 24e9` reaching a key: a pint error
    assert str(caught.value) == f"{NOT_GRADED} (DimensionalityError)."
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    assert caught.value._render_traceback_() == [f"\x1b[31m\x1b[1m✗\x1b[0m\x1b[31m {caught.value}\x1b[0m"]
    with pytest.raises(WrongAnswer, match="not within tolerance"), grading():
        require(1, 2)


def test_the_grading_names_cannot_be_replaced_on_the_module() -> None:
    """No name of ``mlsysim_nb.exercises`` or ``mlsysim_nb.answers`` can be replaced or removed; new ones can be added.

    ``require`` grades with the modules' other names too (``verdict``, ``read_answer``): replacing any of them
    would change every later hidden test, so all are locked, not only the public ones.
    """
    from mlsysim_nb import answers, exercises

    original = exercises.require
    for module, name in ((exercises, "require"), (exercises, "grading"), (exercises, "WrongAnswer"),
                         (exercises, "verdict"), (answers, "read_answer"), (answers, "slip")):  # fmt: skip
        with pytest.raises(AttributeError, match=f"{module.__name__}.{name} is what the grader uses"):
            setattr(module, name, print)
        with pytest.raises(AttributeError, match="cannot be removed"):
            delattr(module, name)
    assert exercises.require is original
    exercises.a_note_of_this_test = 1  # type: ignore[attr-defined]
    assert exercises.a_note_of_this_test == 1  # type: ignore[attr-defined]


def test_check_notes_an_answer_of_more_than_a_petabyte(capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes typed where GB are asked (6.4e10 "GB") get a note that depends on the answer alone, not the key."""
    check(6.4e10, unit="GB")
    assert "more than a petabyte; if you typed bytes, convert to GB" in capsys.readouterr().out
    check(640, unit="GB")
    assert "petabyte" not in capsys.readouterr().out
    check(6.4e10, unit="B")
    assert "petabyte" not in capsys.readouterr().out


def test_a_plain_number_in_text_reads_in_the_unit_asked_and_a_bool_is_no_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``"38.52"`` reads as 38.52 GB when GB are asked, as 38.52 does; ``True`` is refused, not read as 1 GB."""
    require("38.52", Q_(38.52, "GB"), unit="GB")
    require("3852e-2", Q_(38.52, "GB"), unit="GB")
    with pytest.raises(WrongAnswer, match="is True, not a number in GB"):
        require(True, Q_(1, "GB"), unit="GB")
    check(False, unit="GB")
    assert "is False, not a number in GB" in capsys.readouterr().out


def test_a_malformed_guess_is_told_and_the_notebook_runs_on(capsys: pytest.CaptureFixture[str]) -> None:
    """predict("thirty") prints why it is not recorded, and raises nothing."""
    from mlsysim_nb.exercises import predict

    predict("thirty GB", unit="GB", name="h.guess")
    assert capsys.readouterr().out.startswith("✗ Not recorded: could not read your guess 'thirty GB'")


def test_an_answer_nothing_can_read_is_a_wrong_form_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An array among choices (its truth is ambiguous) is told its form in one line; nothing raises."""
    import numpy as np

    check(np.array([1, 2]), choices=(0, 1, 2, 3))
    assert capsys.readouterr().out == "✗ Check the form: could not read your answer (ValueError).\n"
