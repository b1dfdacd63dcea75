"""Recording the answer key of the autograded exercises from the hidden tests themselves.

The hidden tests are the one source of truth for what an exercise expects: each calls
``require(answer, expected, unit=..., rel=..., accept=...)``. :func:`record` runs the hidden tests of an
instructor's notebook in this process with a ``require`` of its own that writes down the expected value, the
unit, the tolerance and the accepted alternatives of each check cell instead of judging an answer. Nothing in
the grading modules changes for it: there is no switch a student's cell could turn on to make ``require``
record instead of grade.

The key serves two readers. ``make rubrics`` prints it on the graders' sheets (:func:`describe`). ``make student``
writes it as ``answer_key.json`` beside the self-study notebooks (:func:`write_key`), where ``check()`` reads it
(:mod:`mlsysim_nb.answer_key`, in the package the notebooks import).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import re
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mlsysim_nb.answer_key import KEY_FILE, Expectation
from mlsysim_nb.course import cells

__all__ = ["describe", "record", "write_key"]


class _Unanswered:
    """What a recorded hidden test gets for the student's answer: it grades nothing, so nothing reads it."""

    def __repr__(self) -> str:
        return "<the answer>"


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
    for test in cells.hidden_tests(source):
        grade_id, code = test.grade_id, test.code
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
    return set(re.findall(r"\banswer_\d+_\d+\w*\b", code))


def write_key(folder: Path, sources: Iterable[Path]) -> Path:
    """Record the key of every notebook in ``sources`` and write it to ``folder/answer_key.json``."""
    notebooks = {
        path.stem: {gid: [e.to_json() for e in found] for gid, found in record(path).items()} for path in sources
    }
    path = Path(folder) / KEY_FILE
    path.write_text(json.dumps({"notebooks": notebooks}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


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
