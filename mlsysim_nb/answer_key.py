"""The answer key of the autograded exercises, as ``check()`` reads it beside the self-study notebooks.

The key is recorded from the hidden tests themselves (:mod:`mlsysim_nb.course.key`, with the ``course`` extra):
``make student`` writes it as ``answer_key.json`` beside the self-study notebooks (``student/``, which Binder
opens), and ``make rubrics`` prints it on the graders' sheets. Here is its form (:class:`Expectation`: the expected
value, its unit, the tolerance and the accepted alternatives of one ``require``) and :func:`lookup`, with which
``check()`` tells a reader working alone whether an answer is within tolerance (never how far, or in which
direction). The graded release gets no key, so ``check()`` there confirms the form alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsysim_nb.files import UnreadableFileError, read_bytes

__all__ = ["KEY_FILE", "Expectation", "lookup"]

#: the key's file name, beside the self-study notebooks (``check()`` looks in the folder its kernel runs in)
KEY_FILE = "answer_key.json"
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
