"""Regrading submissions outside the students' kernels, so that patching the grader inside a kernel gains nothing.

nbgrader runs a submission's cells and the hidden tests in one kernel, so a student's cell can change what the
tests grade with. :func:`regrade` separates the two. The submission runs in a kernel of its own, and only the
values of its answers leave it, as plain data: numbers, text, and quantities as a magnitude and a unit, each
checked here (names like ``answer_1_1``, short text, finite numbers). The hidden tests of the instructor's
notebook, compiled before any kernel starts, then grade those values in this process, against expected values
the submission never saw. A submission that patched the grader in its own kernel gains nothing here: it still
has to give the right values.

A submission is hostile input. Every submitted notebook is read (a regular file under a size limit, of the
right shape) before the first kernel starts, so a submission that rewrites another's file changes nothing; an
unreadable one is reported and skipped. Each runs in a temporary copy of its folder with a time budget, capped
output and its process group ended afterwards (:mod:`mlsysim_nb.course.submission_kernel`), and its points are
appended to the gradebook as soon as it is graded (:mod:`mlsysim_nb.course.gradebook`).

What it does not do is sandbox the kernel: like nbgrader's own autograde, a submission's code runs as the user
who runs the regrade, and could read or write that user's files. Run both in a container that can read only the
submissions (the instructor's guide shows one); the regrade refuses to go on if a file of the package changes
while it runs.

Compare the totals with nbgrader's: a student whose nbgrader score is higher than the regrade's tampered with
the grading, or relied on an answer the regrade cannot carry (a scenario object, for the capstone's run; those
items are reported as not regraded).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells
from mlsysim_nb.course.gradebook import Row
from mlsysim_nb.course.submission_kernel import Limits, run_notebook
from mlsysim_nb.course.submissions import UnreadableSubmissionError, notebooks_under, printable, read_notebook

__all__ = [
    "ItemResult",
    "Limits",
    "PackageChangedError",
    "Regrade",
    "checked_answers",
    "hidden_tests",
    "regrade",
    "submission_answers",
]

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
    """One submission's regrade: its items and their total, who it is, and why it was stopped or not read."""

    path: Path
    items: list[ItemResult] = field(default_factory=list)
    student: str = ""
    note: str = ""

    @property
    def score(self) -> float:
        """The points earned over the regraded items."""
        return sum(i.earned for i in self.items)

    def rows(self, notebook: str) -> list[Row]:
        """The gradebook's rows of this submission, one per item."""
        return [Row(self.student, notebook, i.grade_id, i.earned, i.points, i.note) for i in self.items]

    def __str__(self) -> str:
        skipped = [i.grade_id for i in self.items if i.note.startswith("not regraded")]
        tail = f" (not regraded: {', '.join(skipped)})" if skipped else ""
        tail += f" ({self.note})" if self.note else ""
        regraded = sum(i.points for i in self.items if not i.note.startswith("not regraded"))
        return printable(f"{self.path}: {self.score:g} of {regraded:g}{tail}")


def student_of(path: Path) -> str:
    """The student of a submission: nbgrader's ``submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb``, else the file's name."""
    path = Path(path)
    if path.parent.name == path.stem and path.parent.parent.name:
        return path.parent.parent.name
    return path.stem


def hidden_tests(source: Path) -> list[Hidden]:
    """The hidden test of every check cell of the instructor's notebook ``source``."""
    found = []
    for test in cells.hidden_tests(source):
        names = set(_ANSWER.findall(test.code)) | set(re.findall(r"\bmy_\w+\b", test.code))
        found.append(Hidden(test.grade_id, test.points, test.code, tuple(sorted(names))))
    return found


def submission_answers(
    notebook: dict[str, Any], name: str, folder: Path | None, limits: Limits | None = None
) -> tuple[dict[str, Any], str]:
    """Run the submission in a kernel of its own; its answers as checked plain data, and why it was stopped.

    A kernel that dies, a cell past its time limit, a submission past its budget or its output cap, or output
    that is not the answers' plain form gives no answers (every item then scores 0, with the note), never an
    error that stops the other submissions.
    """
    run = run_notebook(notebook, name, folder, _DUMP, limits or Limits())
    if run.printed is None or _MARK not in run.printed:
        return {}, run.note or "no answers came back"
    try:
        loaded = json.loads(run.printed.split(_MARK, 1)[1].strip().splitlines()[0])
    except (ValueError, IndexError, RecursionError):
        return {}, "its answers could not be read"
    return checked_answers(loaded), ""


_LONGEST_TEXT = 200
#: what pint writes for a unit ("gigabyte", "byte / second", "1 / second", "meter ** 2"), and nothing to evaluate
_UNIT_TEXT = re.compile(r"[A-Za-z0-9_ /*.()-]*")
_POWER_OF_NUMBERS = re.compile(r"\d\s*\*\*|\*\*\s*\d{2,}")


def checked_answers(loaded: Any) -> dict[str, Any]:
    """The answers a kernel printed, kept only where each is the plain data the dump writes (hostile input)."""
    if not isinstance(loaded, dict):
        return {}
    kept: dict[str, Any] = {}
    for name, value in loaded.items():
        if not (isinstance(name, str) and _ANSWER.fullmatch(name)):
            continue
        if value is None or isinstance(value, bool):
            kept[name] = value
        elif type(value) in (int, float) and math.isfinite(value):
            kept[name] = float(value)
        elif (isinstance(value, str) and len(value) <= _LONGEST_TEXT) or (
            isinstance(value, dict)
            and set(value) == {"magnitude", "unit"}
            and type(value["magnitude"]) in (int, float)
            and math.isfinite(value["magnitude"])
            and isinstance(value["unit"], str)
            and len(value["unit"]) <= _LONGEST_TEXT
            and _UNIT_TEXT.fullmatch(value["unit"])
            and not _POWER_OF_NUMBERS.search(value["unit"])
        ):
            kept[name] = value
    return kept


def _value(plain: Any) -> Any:
    """An answer rebuilt in this process from its checked plain form (a unit pint cannot read becomes text)."""
    if isinstance(plain, dict):
        from mlsysim_nb.units import Q_, unit

        try:
            return Q_(plain["magnitude"], unit(plain["unit"]) if plain["unit"] else "")
        except Exception:  # noqa: BLE001 - an unreadable unit is an answer that cannot be graded
            return f"{plain['magnitude']} {plain['unit']}"
    return plain


def grade(tests: list[Hidden], answers: dict[str, Any]) -> list[ItemResult]:
    """Each hidden test run here on the rebuilt answers: its points, or none."""
    from mlsysim_nb.answers import WrongAnswer

    results = []
    for test in tests:
        if any(not name.startswith("answer_") for name in test.answers):
            results.append(ItemResult(test.grade_id, test.points, 0.0, "not regraded: reads an object, not a value"))
            continue
        namespace = {name: _value(answers.get(name)) for name in test.answers}
        try:
            exec(_compiled(test), namespace)  # noqa: S102 - the instructor's own code, compiled before any kernel ran
        except (WrongAnswer, AssertionError):
            results.append(ItemResult(test.grade_id, test.points, 0.0))
            continue
        except Exception as error:  # noqa: BLE001 - an answer the hidden test cannot take scores 0, with a note
            results.append(ItemResult(test.grade_id, test.points, 0.0, f"could not be graded ({type(error).__name__})"))
            continue
        results.append(ItemResult(test.grade_id, test.points, test.points))
    return results


@functools.cache
def _compiled_code(code: str, grade_id: str) -> Any:
    return compile(code, f"<hidden test {grade_id}>", "exec")


def _compiled(test: Hidden) -> Any:
    return _compiled_code(test.code, test.grade_id)


def _package_digest() -> str:
    """A digest of every file of the installed package, to notice a submission that rewrote one."""
    import hashlib

    import mlsysim_nb

    digest = hashlib.sha256()
    for path in sorted(Path(mlsysim_nb.__file__).parent.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".txt", ".json", ".toml"):
            digest.update(path.read_bytes())
    return digest.hexdigest()


class PackageChangedError(RuntimeError):
    """A file of the package changed while the submissions ran: a submission rewrote the grader."""


def regrade(
    source: Path,
    submissions: Iterable[Path],
    *,
    limits: Limits | None = None,
    on_graded: Callable[[Regrade], None] | None = None,
) -> list[Regrade]:
    """Regrade each submission of the notebook whose instructor's version is ``source``.

    ``submissions`` are notebooks, or folders searched for notebooks named as ``source`` is (nbgrader's
    ``submitted/``). Every one is read before the first kernel starts; one that cannot be read is reported
    (its items score 0 with the reason) and the others go on. ``on_graded`` is called with each result as soon
    as it is graded (the command line appends it to the gradebook there).

    The grading modules are imported and the hidden tests compiled before the first kernel starts; the package's
    files are compared with their digest after each submission, and a change stops the regrade
    (:class:`PackageChangedError`), naming the submission that ran last.
    """
    import mlsysim_nb.exercises
    import mlsysim_nb.model.text
    import mlsysim_nb.units  # noqa: F401

    tests = hidden_tests(source)
    for test in tests:
        _compiled(test)
    before = _package_digest()
    results = []
    for path, notebook, problem in _read_all(Path(source).name, submissions):
        if notebook is None:
            items = [ItemResult(t.grade_id, t.points, 0.0, f"not read: {problem}") for t in tests]
            result = Regrade(path, items, student_of(path), f"not read: {problem}")
        else:
            answers, note = submission_answers(notebook, path.name, path.parent, limits)
            if _package_digest() != before:
                msg = (
                    f"a file of the package changed while {printable(path)} ran: "
                    "stop, restore the package, and read that submission"
                )
                raise PackageChangedError(msg)
            items = [
                i if i.note or not note else ItemResult(i.grade_id, i.points, i.earned, note)
                for i in grade(tests, answers)
            ]
            result = Regrade(path, items, student_of(path), note)
        results.append(result)
        if on_graded is not None:
            on_graded(result)
    return results


def _read_all(name: str, submissions: Iterable[Path]) -> Iterator[tuple[Path, dict[str, Any] | None, str]]:
    """Every submission read now, before any runs: ``(path, notebook or None, why it could not be read)``."""
    read: list[tuple[Path, dict[str, Any] | None, str]] = []
    for given in map(Path, submissions):
        files = [p for p in notebooks_under(given) if p.name == name] if given.is_dir() else [given]
        for path in files:
            try:
                read.append((path, read_notebook(path), ""))
            except UnreadableSubmissionError as err:
                read.append((path, None, str(err)))
    yield from read
