"""The answer key of the autograded exercises, recorded from the hidden tests themselves.

The hidden tests are the one source of truth for what an exercise expects: each calls
``require(answer, expected, unit=..., rel=..., accept=...)``. :func:`record` runs the hidden tests of an
instructor's notebook in this process with a ``require`` of its own that writes down the expected value, the
unit, the tolerance and the accepted alternatives of each check cell instead of judging an answer. Nothing in
the grading modules changes for it: there is no switch a student's cell could turn on to make ``require``
record instead of grade.

The key serves two readers. ``make rubrics`` prints it on the graders' sheets. ``make student`` writes it as
``answer_key.json`` beside the self-study notebooks (``student/``, which Binder opens), where ``check()`` reads
it to tell a reader working alone whether an answer is within tolerance (never how far, or in which
direction). The graded release gets no key, so ``check()`` there confirms the form alone.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import math
import types
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsysim_nb.files import UnreadableFileError, read_bytes

__all__ = ["KEY_FILE", "Expectation", "describe", "hidden_tests", "lookup", "record", "write_key"]

#: the key's file name, beside the self-study notebooks (``check()`` looks in the folder its kernel runs in)
KEY_FILE = "answer_key.json"
BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
#: a key larger than this is not one this package wrote: ``check()`` does not read it
_LARGEST_KEY = 1_000_000


@dataclass(frozen=True)
class Expectation:
    """One ``require`` of a hidden test: the expected value, its unit, tolerance and accepted alternatives."""

    expected: Any
    unit: str | None
    rel: float
    accept: tuple[Any, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The expectation as plain data (a quantity as its magnitude and unit)."""
        return {
            "expected": _plain(self.expected),
            "unit": self.unit,
            "rel": self.rel,
            "accept": [_plain(v) for v in self.accept],
        }

    @classmethod
    def from_json(cls, data: Any) -> Expectation:
        """An expectation read back from :meth:`to_json`'s form; ``ValueError`` for anything else."""
        if not (isinstance(data, dict) and {"expected", "unit", "rel", "accept"} <= set(data)):
            raise ValueError("not an expectation")
        unit, rel, accept = data["unit"], data["rel"], data["accept"]
        if not (unit is None or isinstance(unit, str)) or type(rel) not in (int, float) or not isinstance(accept, list):
            raise ValueError("not an expectation")
        return cls(_rebuilt(data["expected"]), unit, float(rel), tuple(_rebuilt(v) for v in accept))


def _plain(value: Any) -> Any:
    """A value of a hidden test as JSON data: a bool, a number, or a quantity's magnitude and unit."""
    if isinstance(value, bool):
        return value
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return {"magnitude": float(value.magnitude), "unit": f"{value.units}"}
    return float(value)


def _rebuilt(data: Any) -> Any:
    """A value read back from :func:`_plain`'s form."""
    if isinstance(data, bool):
        return data
    if type(data) in (int, float) and math.isfinite(data):
        return float(data)
    if isinstance(data, dict) and set(data) == {"magnitude", "unit"} and type(data["magnitude"]) in (int, float):
        from mlsysim_nb.units import Q_, unit

        return Q_(float(data["magnitude"]), unit(str(data["unit"])) if data["unit"] else "")
    raise ValueError("not a value of the key")


class _Unanswered:
    """What a recorded hidden test gets for the student's answer: it grades nothing, so nothing reads it."""

    def __repr__(self) -> str:
        return "<the answer>"


def hidden_tests(source: Path) -> list[tuple[str, str]]:
    """``(grade_id, code)`` of each check cell's hidden test in the instructor's notebook ``source``."""
    from mlsysim_nb.submissions import cell_source

    found = []
    for cell in json.loads(Path(source).read_text(encoding="utf-8"))["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        text = cell_source(cell)
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution") and BEGIN in text:
            found.append((str(meta["grade_id"]), text.split(BEGIN, 1)[1].split(END, 1)[0]))
    return found


def _recording_exercises(into: list[Expectation]) -> types.SimpleNamespace:
    """``mlsysim_nb.exercises`` as a recorded hidden test sees it: its ``require`` writes down, never judges.

    A hidden test imports ``grading``, ``require`` and ``WrongAnswer``; ``grading`` here lets any error through,
    so a test that cannot be recorded is left out of the key.
    """
    from mlsysim_nb.answers import WrongAnswer

    def require(
        answer: Any,
        expected: Any,
        *,
        unit: str | None = None,
        rel: float = 0.02,
        accept: Iterable[Any] = (),
        **_ignored: Any,
    ) -> None:
        into.append(Expectation(expected, unit, float(rel), tuple(accept)))

    return types.SimpleNamespace(require=require, grading=contextlib.nullcontext, WrongAnswer=WrongAnswer)


def record(source: Path) -> dict[str, list[Expectation]]:
    """Run the hidden tests of ``source`` (an instructor's notebook) and record each check cell's expectations.

    Each test runs in a namespace of its own whose answer names hold a placeholder; its import of
    ``mlsysim_nb.exercises`` gives it a ``require`` that records. A test that needs more than its answers (the
    capstone's run, a scenario the student builds) records nothing and is left out of the key.
    """
    key: dict[str, list[Expectation]] = {}
    for grade_id, code in hidden_tests(source):
        seen: list[Expectation] = []
        recorder = _recording_exercises(seen)

        def importer(name: str, *args: Any, _recorder: Any = recorder, **kwargs: Any) -> Any:
            if name == "mlsysim_nb.exercises":
                return _recorder
            return builtins.__import__(name, *args, **kwargs)

        namespace: dict[str, Any] = {"__builtins__": {**vars(builtins), "__import__": importer}}
        from mlsysim_nb.answers import WrongAnswer

        answers = {name: _Unanswered() for name in _answer_names(code)}
        try:
            exec(compile(code, f"<hidden test {grade_id}>", "exec"), {**namespace, **answers})  # noqa: S102 - the instructor's own tests
        except (WrongAnswer, NameError, TypeError, AttributeError, ImportError):
            continue  # the test needs an object the key cannot hold (the capstone's my_run): not in the key
        if seen:
            key[grade_id] = seen
    return key


def _answer_names(code: str) -> set[str]:
    import re

    return set(re.findall(r"\banswer_\d+_\d+\w*\b", code))


def write_key(folder: Path, sources: Iterable[Path]) -> Path:
    """Record the key of every notebook in ``sources`` and write it to ``folder/answer_key.json``."""
    notebooks = {
        path.stem: {gid: [e.to_json() for e in found] for gid, found in record(path).items()} for path in sources
    }
    path = Path(folder) / KEY_FILE
    path.write_text(json.dumps({"notebooks": notebooks}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def lookup(label: str, folder: Path | None = None) -> list[Expectation] | None:
    """The expectations of exercise ``label`` (``"5.1"``, check cell ``check_5_1``) in the key of ``folder``.

    ``folder`` defaults to the folder the kernel runs in, the notebook's own. ``None`` when there is no key
    there (the graded release, the instructor's notebooks), or it has no entry for the exercise, or it is not a
    key this package wrote.
    """
    path = Path.cwd() / KEY_FILE if folder is None else Path(folder) / KEY_FILE
    try:
        data = json.loads(read_bytes(path, limit=_LARGEST_KEY, what="an answer key"))
        entries = [
            found.get(f"check_{label.replace('.', '_')}")
            for found in data["notebooks"].values()
            if isinstance(found, dict)
        ]
        entry = next((e for e in entries if e is not None), None)
        return None if not isinstance(entry, list) or not entry else [Expectation.from_json(e) for e in entry]
    except (UnreadableFileError, ValueError, KeyError, TypeError, AttributeError, RecursionError, OSError):
        return None


def describe(expectations: list[Expectation]) -> str:
    """One line of the graders' sheet: the expected value, its tolerance and any accepted alternative."""
    parts = []
    for e in expectations:
        shown = _shown(e.expected, e.unit)
        also = "".join(f" (also accepted: {_shown(v, e.unit)})" for v in e.accept)
        if isinstance(e.expected, bool):
            parts.append(f"{shown}{also}")
        elif e.rel == 0:
            parts.append(f"{shown} exactly{also}")
        else:
            parts.append(f"{shown} within {e.rel * 100:g} %{also}")
    return "; ".join(parts)


def _shown(value: Any, unit: str | None) -> str:
    if isinstance(value, bool):
        return str(value)
    if hasattr(value, "units"):
        if unit is not None:
            return f"{value.m_as(unit):.6g} {unit}"
        return f"{value:.6g~P}"
    return f"{value:.6g}" + (f" {unit}" if unit else "")
