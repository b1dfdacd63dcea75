"""The course notebooks as code: hygiene, and every exercise's self-check catching a wrong answer.

nbval (run by ``make test``) re-executes each notebook and compares every stored
output; these tests add what nbval does not check.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.course import cells as nb
from mlsysim_nb.course.cells import HIDDEN_TESTS, SOLUTION
from mlsysim_nb.course.hygiene import problems
from tests.measured_once import measured_once

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _cells(path: Path) -> list[dict[str, Any]]:
    return [c for c in nb.cells(path) if c["cell_type"] == "code"]


def _source(cell: dict[str, Any]) -> str:
    """A cell's code without IPython magics (``%matplotlib inline``), runnable by exec."""
    return "\n".join(line for line in nb.source(cell).splitlines() if not line.lstrip().startswith("%"))


def test_there_is_a_course() -> None:
    """At least six notebooks, numbered in course order."""
    assert len(NOTEBOOKS) >= 6
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(1, len(NOTEBOOKS) + 1)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_hygiene(path: Path) -> None:
    """Executed top to bottom (counts 1..n), no error outputs, no noisy metadata."""
    assert problems(path) == []


ANSWER = re.compile(r"^(answer_\d+_\d+) = None", flags=re.MULTILINE)


_nbgrader = nb.grading


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_the_course_parts(path: Path) -> None:
    """Learning goals, a prediction first, a live panel, exercises, what the model leaves out, a summary."""
    text = "\n".join(nb.source(c) for c in nb.cells(path))
    for part in ("Learning goals", "Prerequisites", "Time.", "Predict first", "What this model leaves out", "Summary"):
        assert part in text, part
    assert "explore(" in text
    first_code = [_source(c) for c in _cells(path)][1]
    assert "predict(" in first_code, "the first cell after the imports records a prediction"
    kinds = set(re.findall(r"### Exercise \d+\.\d+ \(([^)]*)\)", text))
    assert len(kinds) >= 3, kinds
    assert "explain" in kinds


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_nbgrader_metadata(path: Path) -> None:
    """Each answer cell holds a solution region and is followed by its locked graded check; ids are unique."""
    cells = nb.cells(path)
    ids = [_nbgrader(c)["grade_id"] for c in cells if _nbgrader(c)]
    assert len(ids) == len(set(ids))
    for index, cell in enumerate(cells):
        meta = _nbgrader(cell)
        if not meta:
            continue
        assert meta["schema_version"] == 3
        if meta["solution"] and cell["cell_type"] == "code":
            assert nb.regions(nb.source(cell), SOLUTION)
            test = _nbgrader(cells[index + 1])
            assert (test["grade"], test["locked"], test["points"] > 0) == (True, True, True)
            assert nb.hidden_test(cells[index + 1])
        if meta["solution"] and cell["cell_type"] == "markdown":
            assert (meta["grade"], meta["points"] > 0) == (True, True)


def _shown(cell: dict[str, Any]) -> str:
    """What a reader sees of a code cell's stored output: streams and plain text (not images)."""
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


NUMBER = re.compile(r"-?\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?")


def _significant(text: str) -> int:
    mantissa = text.split("e", maxsplit=1)[0]
    return len(re.sub(r"\D", "", mantissa).lstrip("0"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_answer_printed_above_its_exercise(path: Path) -> None:
    """No output above an exercise shows, to 0.2 %, the solution's answer (values of 3+ significant digits)."""
    seen: list[float] = []
    for cell in _cells(path):
        shown = _shown(cell)
        found = re.search(r"Answer recorded: (\S+?)(?:\.?\s|\.$| [A-Za-z])", shown)
        if found and "exercise" in cell["metadata"].get("tags", []) and _significant(found.group(1)) >= 3:
            value = float(found.group(1))
            assert [v for v in seen if abs(v - value) <= 2e-3 * abs(value)] == [], found.group(1)
        seen += [float(n.replace("_", "")) for n in NUMBER.findall(shown)]


def _wrong(right: Any) -> Any:
    """A wrong answer of the right form: a whole number off by one, a fraction 37 % low, anything else 37 % high."""
    if isinstance(right, int) and not isinstance(right, bool):
        return right - 1 if right > 1 else right + 1
    return right * (0.63 if 0 < right < 1 else 1.37)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_check_grades_only_in_its_hidden_test(path: Path) -> None:
    """Run the notebook's code in order; feed each check a wrong answer of the right form.

    The visible check passes (it never judges the value); the whole test cell, hidden tests included, fails
    with "not within tolerance". Notebook 10's measurements are taken once for its three runs of each check
    (the solution cell, the wrong answer, the right one): ``tests/measured_once.py``.
    """
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    exercises = 0
    with measured_once():
        exercises = _run_checks(path, namespace)
    assert exercises >= 3


def _run_checks(path: Path, namespace: dict[str, Any]) -> int:
    """Run ``path``'s code cells in ``namespace``, each check cell also with a wrong answer; count the checks."""
    exercises = 0
    for cell in _cells(path):
        source = _source(cell)
        if "exercise" in cell["metadata"].get("tags", []):
            names = set(re.findall(r"\b(answer_\d+_\d+)\b", source))
            assert len(names) == 1, "a check cell checks one answer"
            (name,) = names
            right = namespace[name]
            namespace[name] = _wrong(right)
            visible = source.split(HIDDEN_TESTS.begin)[0]
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(visible, f"{path.name} (visible check)", "exec"), namespace)  # noqa: S102
            with pytest.raises(AssertionError, match="not within tolerance"), contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"{path.name} (wrong answer)", "exec"), namespace)  # noqa: S102 - our own notebooks
            namespace[name] = right
            exercises += 1
        elif _nbgrader(cell).get("solution"):
            assert ANSWER.search(source), "an answer cell starts unanswered"
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, path.name, "exec"), namespace)  # noqa: S102
    return exercises
