"""Grading measures the student: no visible check gives its answer away, and pasting the visible checks earns nothing.

Every autograded item is a locked test cell with two parts. The visible part, which a student
reads in the release, is one ``check(answer_N_M, ...)`` call whose other arguments are literals (the
unit, the form, the hints); it cannot hold the expected value or the expression that computes it.
The hidden part (``### BEGIN HIDDEN TESTS``), which the release strips and the autograder puts back,
grades the value with ``require()`` against an expression over the package. The last test runs
nbgrader itself: a submission built from the visible checks scores no more than a blank release,
while the same construction from the hidden tests (which a student never sees) scores full marks.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.course import cells as nb
from mlsysim_nb.course.cells import HIDDEN_TESTS, SOLUTION
from tests.nbgrader_sandbox import jupyter_home, require_nbgrader

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BEGIN, END = HIDDEN_TESTS.begin, HIDDEN_TESTS.end
# a number, an operator and another number: arithmetic written out (2**30, a unit's size, and "Eq. 8" aside)
ARITHMETIC = re.compile(r"\d[\d.,]*(?:e[+-]?\d+)?\s*(?:[+\-*/×^]|\bx\b)\s*\(?\s*\d[\d.,]*(?:e[+-]?\d+)?(?![\w.])")


_source = nb.source


def _graded_cells(path: Path) -> list[dict[str, Any]]:
    return [c for c in nb.cells(path) if c["cell_type"] == "code" and nb.is_check(c)]


def _parts(cell: dict[str, Any]) -> tuple[str, str]:
    """The visible part of a test cell and its hidden tests."""
    text = _source(cell)
    visible, _, rest = text.partition(BEGIN)
    hidden, _, after = rest.partition(END)
    assert after.strip() == "", "nothing follows the hidden tests"
    return visible, hidden


def _visible_call(visible: str) -> ast.Call:
    tree = ast.parse(visible)
    body = tree.body
    if body and ast.unparse(body[0]) == "from mlsysim_nb.exercises import check":
        body = body[1:]  # the cell's own import: a student's cell that rebinds `check` cannot break it
    assert len(body) == 1, "the visible part is one check() call (after its import) and nothing else"
    (statement,) = body
    assert isinstance(statement, ast.Expr)
    assert isinstance(statement.value, ast.Call)
    assert isinstance(statement.value.func, ast.Name)
    assert statement.value.func.id == "check"
    return statement.value


ITEMS = [(path, cell) for path in NOTEBOOKS for cell in _graded_cells(path)]


def _item_id(item: tuple[Path, dict[str, Any]]) -> str:
    return f"{item[0].name[:2]}-{item[1]['metadata']['nbgrader']['grade_id']}"


def test_every_notebook_has_graded_items() -> None:
    """The course has autograded items to hold to these rules (at least three per notebook)."""
    assert len(NOTEBOOKS) >= 10
    for path in NOTEBOOKS:
        assert len(_graded_cells(path)) >= 3, path.name


@pytest.mark.parametrize("item", ITEMS, ids=_item_id)
def test_the_visible_check_holds_no_expression_but_the_answer(item: tuple[Path, dict[str, Any]]) -> None:
    """The visible part passes the answer and literals only: no name, attribute or call that could compute a value."""
    _, cell = item
    visible, _ = _parts(cell)
    call = _visible_call(visible)
    (answer, *others) = call.args
    assert isinstance(answer, ast.Name)
    assert re.fullmatch(r"answer_\d+_\d+", answer.id)
    assert others == [], "the expected value is never an argument of the visible check"
    for keyword in call.keywords:
        assert keyword.arg in {"unit", "sign", "whole", "between", "choices", "hint", "hints", "label"}, keyword.arg
        ast.literal_eval(keyword.value)  # raises for anything but a literal
    assert "require(" not in visible


@pytest.mark.parametrize("item", ITEMS, ids=_item_id)
def test_the_hidden_test_grades_the_value_from_the_package(item: tuple[Path, dict[str, Any]]) -> None:
    """The hidden part calls require() on the same answer with an expected value that is computed, not a literal."""
    _, cell = item
    visible, hidden = _parts(cell)
    answer = _visible_call(visible).args[0].id  # type: ignore[attr-defined]
    calls = [
        node
        for node in ast.walk(ast.parse(hidden))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "require"
    ]
    assert len(calls) == 1
    (call,) = calls
    assert isinstance(call.args[0], ast.Name)
    assert call.args[0].id == answer
    expected = call.args[1]
    with pytest.raises(ValueError, match="malformed"):
        ast.literal_eval(expected)  # a hard-coded result would be a literal
    names = {n.id for n in ast.walk(expected) if isinstance(n, ast.Name)}
    assert answer not in names


@pytest.mark.parametrize("item", ITEMS, ids=_item_id)
def test_the_hints_give_the_method_not_the_arithmetic(item: tuple[Path, dict[str, Any]]) -> None:
    """No hint writes out the arithmetic that gives the answer (number, operator, number)."""
    _, cell = item
    visible, _ = _parts(cell)
    call = _visible_call(visible)
    for keyword in call.keywords:
        if keyword.arg in {"hint", "hints"}:
            value = ast.literal_eval(keyword.value)
            for text in [value] if isinstance(value, str) else value:
                plain = re.sub(r"2\*\*\d+|Eq\. \d+", "", text)
                assert ARITHMETIC.search(plain) is None, text


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?", text)]


def _question(path: Path, cell: dict[str, Any]) -> str:
    """The exercise's question: the markdown cell above its answer cell (above the prediction cell, if there is one)."""
    cells = nb.cells(path)
    (index,) = [i for i, c in enumerate(cells) if c.get("id") == cell.get("id")]
    question = cells[index - 2]
    if question["cell_type"] == "code" and "predict(" in _source(question):
        question = cells[index - 3]
    assert question["cell_type"] == "markdown"
    assert _source(question).startswith("### Exercise")
    return _source(question)


RECORDED = re.compile(r"Answer recorded: (-?[\d.e+-]+)")


@pytest.mark.parametrize("item", ITEMS, ids=_item_id)
def test_the_visible_check_does_not_print_or_contain_the_answer(item: tuple[Path, dict[str, Any]]) -> None:
    """Run on the solution, the visible check echoes the answer it was given; its source holds no number near it."""
    _, cell = item
    shown = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
    assert "Correct" not in shown
    found = RECORDED.search(shown)
    if found is None:  # a choice, recorded as such
        assert "one of the choices" in shown
        return
    answer = float(found.group(1).rstrip("."))
    visible, _ = _parts(cell)
    given = _numbers(_question(*item))  # the exercise's own data may recur in its hints
    numbers = [n for n in _numbers(re.sub(r"\d+-bit", "", visible)) if n not in given]
    if answer == round(answer) and abs(answer) <= 12:
        return  # small whole numbers (bytes of a value, a ZeRO stage) occur in any hint
    assert [n for n in numbers if math.isclose(n, answer, rel_tol=5e-3)] == []


# -- nbgrader: a submission pasted from the visible checks, and one from the hidden tests ---------------------


def _literals(visible: str) -> list[Any]:
    """What a student could paste from a visible check: its literal arguments and every number in its hints."""
    call = _visible_call(visible)
    found: list[Any] = []
    for keyword in call.keywords:
        value = ast.literal_eval(keyword.value)
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for text in texts:
            found += [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?", text)]
        if keyword.arg in {"unit", "between", "choices"}:
            found.append(value)
    return found


def _pasted(release: dict[str, Any], source: dict[str, Any], pick: int | None) -> dict[str, Any]:
    """The release with each answer set to the ``pick``-th pasteable literal of its visible check.

    With ``pick=None``, each answer is the hidden test's expected expression instead, after the hidden lines
    that define it.
    """
    hidden_by_id = {nb.grade_id(c): _parts(c)[1] for c in source["cells"] if nb.hidden_test(c) is not None}
    notebook = json.loads(json.dumps(release))
    cells = notebook["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code" or not nb.is_answer(cell):
            continue
        test = cells[index + 1]
        name = nb.grade_id(cell)
        if pick is None:
            tree = ast.parse(hidden_by_id[nb.grade_id(test)])
            imports, block = tree.body  # the import of grading and require, then `with grading():`
            *setup, last = block.body  # type: ignore[attr-defined]
            call = last.value
            lines = [ast.unparse(imports)] + [ast.unparse(s) for s in setup] + [f"{name} = {ast.unparse(call.args[1])}"]
        else:
            options = _literals(_parts(test)[0])
            lines = [f"{name} = {options[pick % len(options)]!r}"]
        cell["source"] = "\n".join(lines)
    return notebook


def _grader(root: Path) -> Any:
    """The nbgrader API on a course directory of its own, configured in code (no config file, no exchange)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.course_id = "fairness"
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    config.ClearSolutions.code_stub = {"python": "# your work here: set the answer variable above"}
    config.ClearSolutions.text_stub = "YOUR ANSWER HERE"
    config.ExecutePreprocessor.timeout = 300
    config.Exchange.root = str(root / "exchange")
    return NbGraderAPI(config=config)


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A temporary nbgrader course holding notebook 02, with its own HOME, Jupyter folders and gradebook."""
    require_nbgrader()
    with jupyter_home(tmp_path_factory.mktemp("fairness-home"), package_on_path=True) as home:
        root = home / "course"
        (source,) = [p for p in NOTEBOOKS if p.name.startswith("02_")]
        folder = root / "source" / source.stem
        folder.mkdir(parents=True)
        (folder / source.name).write_bytes(source.read_bytes())
        grader = _grader(root)
        result = grader.generate_assignment(source.stem, force=True)
        assert result["success"], result.get("log", "") + str(result.get("error", ""))
        yield root, grader, source


def _score(course: Any, student: str, notebook: dict[str, Any]) -> float:
    root, grader, source = course
    target = root / "submitted" / student / source.stem
    target.mkdir(parents=True, exist_ok=True)
    (target / source.name).write_text(json.dumps(notebook), encoding="utf-8")
    result = grader.autograde(source.stem, student, force=True)
    assert result["success"], result.get("log", "") + str(result.get("error", ""))
    with grader.gradebook as gradebook:
        return float(gradebook.find_submission(source.stem, student).score)


@pytest.mark.filterwarnings("ignore:Object of type:Warning")
def test_pasting_the_visible_checks_scores_no_more_than_a_blank_release(course: Any) -> None:
    """Autograded by nbgrader, pasted visible checks score no more than the blank release (0).

    Pasted hidden tests (which the release does not show) score every point, so the pasting itself works.
    """
    root, _, source = course
    release = json.loads((root / "release" / source.stem / source.name).read_text(encoding="utf-8"))
    instructor = json.loads(source.read_text(encoding="utf-8"))
    released_checks = [_source(c) for c in release["cells"] if nb.grading(c).get("locked")]
    released_checks = [t for t in released_checks if "check(answer_" in t]
    assert released_checks == [_parts(c)[0].rstrip("\n") for c in _graded_cells(source)]  # what students read
    blank = _score(course, "blank", release)
    assert blank == 0.0
    for pick in range(3):
        assert _score(course, f"pasted{pick}", _pasted(release, instructor, pick)) <= blank
    points = sum(nb.points(c) for c in _graded_cells(source))
    assert _score(course, "hidden", _pasted(release, instructor, None)) == points


# -- predictions are committed, then explained; model answers live in solution regions ------------------------


_all_cells = nb.cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_prediction_is_committed_then_explained(path: Path) -> None:
    """Each "predict the change" item: the prediction recorded, the graded value, then a hand-graded explanation.

    The prompt of the explanation shows its rubric (students see what they are graded on, a grader sees it
    in the Formgrader, which shows the student's notebook) and gives no expression to paste: finding the
    model's value is part of the work. The model answer sits inside a solution region, which the release
    replaces.
    """
    cells = _all_cells(path)
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and re.match(r"### Exercise [\d.]+ \(predict the change", _source(cell)):
            assert _source(cell).splitlines()[0].endswith("(predict the change, then explain)")
            after = index + 1
            if cells[after]["cell_type"] == "code" and "predict(" in _source(cells[after]):
                assert not nb.grading(cells[after]), "the recorded prediction is not graded"
                after += 1
            answer, check, prompt, explanation = cells[after : after + 4]
            assert nb.is_answer(answer)
            assert nb.is_check(check)
            assert "Commit to your prediction above first" in _source(prompt)
            assert "**Rubric.**" in _source(prompt)
            assert "variant(" not in _source(prompt), "the prompt gives no expression that computes the value"
            assert (nb.is_hand_graded(explanation), nb.points(explanation)) == (True, 1)
            text = _source(explanation)
            assert text.startswith(f"{SOLUTION.begin}\n**Model answer.**")
            assert "**Rubric.**" not in text, "the rubric is in the prompt, where students and graders read it"
            assert text.endswith(SOLUTION.end)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_hand_graded_answer_shows_its_rubric_above_it(path: Path) -> None:
    """Every answer graded by hand has its rubric in the visible cell above it, not in the stripped solution."""
    cells = _all_cells(path)
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and nb.is_hand_graded(cell):
            above = _source(cells[index - 1])
            assert "**Rubric.**" in above, f"{nb.grade_id(cell)}: no rubric above the answer"
            assert "**Rubric.**" not in _source(cell), f"{nb.grade_id(cell)}: the rubric is inside the solution"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_model_answers_sit_inside_solution_regions(path: Path) -> None:
    """No model answer shows as plain text outside a solution region of an nbgrader solution cell."""
    for cell in _all_cells(path):
        text = _source(cell)
        if "Model answer" not in text:
            continue
        assert nb.is_answer(cell), text[:80]
        before, _, rest = text.partition(SOLUTION.begin)
        inside, _, after = rest.partition(SOLUTION.end)
        assert "Model answer" in inside
        assert "Model answer" not in before + after


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_visible_rubric_holds_an_autograded_answer(path: Path) -> None:
    """A rubric is shown to students, so it names criteria, never the value an autograded check grades.

    The values are those the solutions' check cells record ("Answer recorded: 216"); small whole numbers
    (a ZeRO stage, bytes of a value) occur in any text and are left out.
    """
    cells = _all_cells(path)
    answers = []
    for cell in _graded_cells(path):
        shown = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        found = RECORDED.search(shown)
        if found is not None:
            answers.append(float(found.group(1).rstrip(".")))
    answers = [a for a in answers if not (a == round(a) and abs(a) <= 12)]
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] != "markdown" or "**Rubric.**" not in text or SOLUTION.begin in text:
            continue
        rubric = text[text.index("**Rubric.**") :]
        leaked = [n for n in _numbers(rubric) for a in answers if math.isclose(n, a, rel_tol=5e-3)]
        assert leaked == [], f"{path.name}: the rubric shows {leaked}: {rubric[:120]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_prompt_shows_one_rubric(path: Path) -> None:
    """A prompt holds one rubric: a second one left behind could be the detailed notes students must not see."""
    assert [i for i, c in enumerate(_all_cells(path)) if _source(c).count("**Rubric.**") > 1] == []
