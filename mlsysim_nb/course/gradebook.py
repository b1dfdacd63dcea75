"""Where the regrade's points go: a CSV gradebook written as each submission is graded, and nbgrader's database.

The CSV has one row per autograded item: ``student, notebook, item, points, max points, note``. Each
submission's rows are appended and flushed to disk as soon as it is graded, so a submission that kills the
grader loses nothing graded before it. With nbgrader's gradebook (``gradebook.db`` in the course directory),
each item's points are written as the grade's manual score through nbgrader's own :class:`nbgrader.api.Gradebook`:
the Formgrader then shows the regrade's points as the score of each autograded cell, beside nbgrader's own
automatic score.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COLUMNS", "Row", "append_rows", "write_nbgrader"]

COLUMNS = ("student", "notebook", "item", "points", "max points", "note")
#: the course's id in nbgrader (``c.CourseDirectory.course_id`` in ``notebooks/nbgrader_config.py``)
COURSE_ID = "mlsysim_nb"
#: what a spreadsheet would read as a formula at the start of a cell
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Row:
    """One item of one submission: who, which notebook and item, the points earned of the most, and a note."""

    student: str
    notebook: str
    item: str
    points: float
    max_points: float
    note: str = ""


def _cell(text: str) -> str:
    """Text safe in a spreadsheet: a leading ``=``, ``+``, ``-`` or ``@`` (a formula) is quoted."""
    return f"'{text}" if text.startswith(_FORMULA) else text


def append_rows(path: Path, rows: Iterable[Row]) -> None:
    """Append ``rows`` to the CSV gradebook at ``path`` (its header first if it is new), flushed to disk."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        if new:
            writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(
                [_cell(row.student), _cell(row.notebook), _cell(row.item), f"{row.points:g}", f"{row.max_points:g}",
                 _cell(row.note)]
            )  # fmt: skip
        stream.flush()
        os.fsync(stream.fileno())


def write_nbgrader(database: Path, assignment: str, rows: Iterable[Row]) -> None:
    """Write each row's points as the manual score of its grade in nbgrader's gradebook ``database``.

    The assignment must be in the gradebook (``nbgrader generate_assignment`` puts it there); a student or a
    submission it does not hold yet is added, as ``nbgrader autograde`` would. A row with a note that it was not
    regraded (the capstone's run) is left to nbgrader's own score.
    """
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{Path(database).resolve()}", course_id=COURSE_ID) as book:
        try:
            book.find_assignment(assignment)
        except MissingEntry:
            msg = f"{database} has no assignment {assignment!r}: run nbgrader generate_assignment {assignment} first"
            raise ValueError(msg) from None
        for row in rows:
            if row.note.startswith("not regraded"):
                continue
            book.update_or_create_student(row.student)
            try:
                book.find_submission(assignment, row.student)
            except MissingEntry:
                book.add_submission(assignment, row.student)
            grade = book.find_grade(row.item, row.notebook, assignment, row.student)
            grade.manual_score = row.points
        book.db.commit()
