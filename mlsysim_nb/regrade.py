"""Regrading submissions outside the student's kernel, which no cell of a submission can tamper with.

nbgrader runs a submission's cells and the hidden tests in one kernel, so a student's cell can change what the
tests grade with. :func:`regrade` separates the two. The submission runs in a kernel of its own, and only the
values of its answers leave it, as plain data: numbers, text, and quantities as a magnitude and a unit. The
hidden tests of the instructor's notebook then grade those values in this process, which the submission never
touched, against expected values it never saw. A submission that patched the grader in its own kernel gains
nothing here: it still has to give the right values.

Compare the totals with nbgrader's: a student whose nbgrader score is higher than the regrade's tampered with
the grading, or relied on an answer the regrade cannot carry (a scenario object, for the capstone's run; those
items are reported as not regraded).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ItemResult", "Regrade", "hidden_tests", "regrade", "submission_answers"]

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
_MARK = "<<answers>>"
#: the cell appended to a submission: it prints its answers as plain data (its output is all that is read)
_DUMP = f"""
def _plain_answer(value):
    import numbers
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "magnitude") and hasattr(value, "units"):
        try:
            return {{"magnitude": float(value.magnitude), "unit": str(value.units)}}
        except Exception:
            return None
    if isinstance(value, numbers.Real):
        return float(value)
    return None
import json as _json_for_regrade
print("{_MARK}" + _json_for_regrade.dumps({{k: _plain_answer(v) for k, v in dict(globals()).items()
                                            if k.startswith("answer_")}}))
"""
_ANSWER = re.compile(r"\banswer_\d+_\d+\w*\b")


@dataclass(frozen=True)
class Hidden:
    """One check cell's hidden test: its grade id, points, code, and the answer names it reads."""

    grade_id: str
    points: float
    code: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class ItemResult:
    """One item's regrade: the points it earned, or why it was not regraded."""

    grade_id: str
    points: float
    earned: float
    note: str = ""


@dataclass
class Regrade:
    """One submission's regrade: its items and their total."""

    path: Path
    items: list[ItemResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        """The points earned over the regraded items."""
        return sum(i.earned for i in self.items)

    def __str__(self) -> str:
        skipped = [i.grade_id for i in self.items if i.note]
        tail = f" (not regraded: {', '.join(skipped)})" if skipped else ""
        return f"{self.path}: {self.score:g} of {sum(i.points for i in self.items if not i.note):g}{tail}"


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def hidden_tests(source: Path) -> list[Hidden]:
    """The hidden test of every check cell of the instructor's notebook ``source``."""
    found = []
    for cell in json.loads(Path(source).read_text(encoding="utf-8"))["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        text = _source(cell)
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution") and BEGIN in text:
            code = text.split(BEGIN, 1)[1].split(END, 1)[0]
            names = tuple(sorted(set(_ANSWER.findall(code)) | set(re.findall(r"\bmy_\w+\b", code))))
            found.append(Hidden(meta["grade_id"], float(meta.get("points", 0)), code, names))
    return found


def submission_answers(path: Path, *, timeout: int = 600) -> dict[str, Any]:
    """Run the submission in a kernel of its own and return its answers as plain data (None where not plain)."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(str(path), as_version=4)  # type: ignore[no-untyped-call]
    notebook.cells.append(nbformat.v4.new_code_cell(_DUMP))  # type: ignore[no-untyped-call]
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True)
    client.execute(cwd=str(Path(path).parent))
    for output in notebook.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if _MARK in text:
            loaded: dict[str, Any] = json.loads(text.split(_MARK, 1)[1].strip().splitlines()[0])
            return loaded
    return {}


def _value(plain: Any) -> Any:
    """An answer rebuilt in this process from its plain form."""
    if isinstance(plain, dict) and set(plain) == {"magnitude", "unit"}:
        from mlsysim_nb.units import Q_

        if not math.isfinite(plain["magnitude"]):
            return plain["magnitude"]
        return Q_(plain["magnitude"], plain["unit"] or "")
    return plain


def grade(tests: list[Hidden], answers: dict[str, Any]) -> list[ItemResult]:
    """Each hidden test run here on the rebuilt answers: its points, or none."""
    from mlsysim_nb.answers import WrongAnswer

    results = []
    for test in tests:
        if any(not name.startswith("answer_") for name in test.answers):
            results.append(ItemResult(test.grade_id, test.points, 0.0, "reads an object, not a value"))
            continue
        namespace = {name: _value(answers.get(name)) for name in test.answers}
        try:
            exec(compile(test.code, f"<hidden test {test.grade_id}>", "exec"), namespace)  # noqa: S102 - the instructor's own code
        except (WrongAnswer, AssertionError):
            results.append(ItemResult(test.grade_id, test.points, 0.0))
            continue
        results.append(ItemResult(test.grade_id, test.points, test.points))
    return results


def regrade(source: Path, submissions: list[Path], *, timeout: int = 600) -> list[Regrade]:
    """Regrade each submission of the notebook whose instructor's version is ``source``."""
    tests = hidden_tests(source)
    return [Regrade(Path(p), grade(tests, submission_answers(Path(p), timeout=timeout))) for p in submissions]
