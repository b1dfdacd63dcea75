"""The one reader of the course's notebooks: cells, their source, and nbgrader's marks on them.

nbgrader marks a notebook in two ways, and every tool of the course (the release, the answer key, the rubrics,
the scan, the regrade, the student-version check, the book, the count of runs) and every test reads them here:

* **cell metadata**, ``metadata.nbgrader``: ``grade`` (scored), ``solution`` (the student writes it), ``locked``,
  ``grade_id`` and ``points``. An *answer* cell is a solution; a *check* cell is graded and not a solution (the
  autograder scores it by running it); an *explain* cell is both (graded by hand);
* **regions** inside a cell's source: the instructor's solution between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``, and the autograder's test between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``;
  the release removes both.

The notebooks read here are the instructor's own, or a submission already checked by
:func:`mlsysim_nb.course.submissions.read_notebook` (which reads one as hostile input): a cell without metadata
or source reads as empty, never as an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "HIDDEN_TESTS",
    "MARKERS",
    "SOLUTION",
    "HiddenTest",
    "Region",
    "cells",
    "grade_id",
    "grading",
    "hidden_test",
    "hidden_tests",
    "is_answer",
    "is_check",
    "is_hand_graded",
    "points",
    "read",
    "regions",
    "solution",
    "source",
]

Cell = dict[str, Any]


@dataclass(frozen=True)
class Region:
    """The two marker lines around a region of a cell that the release removes."""

    begin: str
    end: str


SOLUTION = Region("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_TESTS = Region("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
#: every marker line: none is left in what students get
MARKERS = (SOLUTION.begin, SOLUTION.end, HIDDEN_TESTS.begin, HIDDEN_TESTS.end)


def read(path: Path) -> dict[str, Any]:
    """A notebook file as its JSON (the instructor's, or one already read as hostile input)."""
    notebook: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return notebook


def cells(path: Path) -> list[Cell]:
    """The cells of the notebook at ``path``."""
    found: list[Cell] = read(path)["cells"]
    return found


def source(cell: Cell) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def grading(cell: Cell) -> dict[str, Any]:
    """A cell's nbgrader metadata (``grade``, ``solution``, ``locked``, ``grade_id``, ``points``); ``{}`` if none."""
    meta: dict[str, Any] = cell.get("metadata", {}).get("nbgrader", {})
    return meta


def grade_id(cell: Cell) -> str:
    """A cell's nbgrader id (``answer_1_1``, ``check_1_1``, ``explain_1_4``), or ``""``."""
    return str(grading(cell).get("grade_id", ""))


def points(cell: Cell) -> float:
    """The points a graded cell is worth (0 for any other)."""
    return float(grading(cell).get("points", 0)) if grading(cell).get("grade") else 0.0


def is_answer(cell: Cell) -> bool:
    """A cell the student writes (nbgrader's ``solution``): an answer cell, or an explain answer."""
    return bool(grading(cell).get("solution"))


def is_check(cell: Cell) -> bool:
    """A check cell: graded and not written by the student, scored by running it (its hidden test inside)."""
    meta = grading(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def is_hand_graded(cell: Cell) -> bool:
    """An answer graded by hand (an explain answer): graded, and written by the student."""
    meta = grading(cell)
    return bool(meta.get("grade")) and bool(meta.get("solution"))


def regions(text: str, region: Region) -> list[str]:
    """The body of each ``region`` in ``text``, between its marker lines (a region with no end is not one)."""
    found = []
    start = text.find(region.begin)
    while start >= 0:
        body = start + len(region.begin)
        body += text.startswith("\n", body)
        end = text.find(region.end, body)
        if end < 0:
            break
        found.append(text[body:end])
        start = text.find(region.begin, end + len(region.end))
    return found


def solution(cell: Cell) -> str:
    """The instructor's solution in a cell: its solution region, or the whole cell when it has none, stripped."""
    text = source(cell)
    found = regions(text, SOLUTION)
    return (found[0] if found else text).strip()


def hidden_test(cell: Cell) -> str | None:
    """The hidden test of a check cell (its code between the markers), or ``None`` when it has none."""
    if cell.get("cell_type") != "code" or not is_check(cell):
        return None
    found = regions(source(cell), HIDDEN_TESTS)
    return found[0] if found else None


@dataclass(frozen=True)
class HiddenTest:
    """One check cell's hidden test: its grade id, its points and its code."""

    grade_id: str
    points: float
    code: str


def hidden_tests(path: Path) -> list[HiddenTest]:
    """The hidden test of every check cell of the instructor's notebook at ``path``, in order."""
    found = []
    for cell in cells(path):
        code = hidden_test(cell)
        if code is not None:
            found.append(HiddenTest(grade_id(cell), points(cell), code))
    return found
