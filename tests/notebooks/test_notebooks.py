"""The course notebooks as code: hygiene, and every exercise's self-check catching a wrong answer.

nbval (run by ``make test``) re-executes each notebook and compares every stored
output; these tests add what nbval does not check.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "scripts"))

from check_notebooks import problems  # noqa: E402


def _cells(path: Path) -> list[dict[str, Any]]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def _source(cell: dict[str, Any]) -> str:
    """A cell's code without IPython magics (``%matplotlib inline``), runnable by exec."""
    src = cell["source"]
    text = "".join(src) if isinstance(src, list) else src
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))


def test_there_is_a_course() -> None:
    """At least six notebooks, numbered in course order."""
    assert len(NOTEBOOKS) >= 6
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(1, len(NOTEBOOKS) + 1)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_hygiene(path: Path) -> None:
    """Executed top to bottom (counts 1..n), no error outputs, no noisy metadata."""
    assert problems(path) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_the_course_parts(path: Path) -> None:
    """Learning goals, a static repr before a live panel, exercises, and what the model leaves out."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"])
    assert "Learning goals" in text
    assert "What this model leaves out" in text
    assert "explore(" in text
    assert any("exercise" in c["metadata"].get("tags", []) for c in nb["cells"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_self_check_fails_on_a_wrong_answer(path: Path) -> None:
    """Run the notebook's code in order; each exercise, fed a wrong answer, raises AssertionError."""
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    exercises = 0
    for cell in _cells(path):
        source = _source(cell)
        if "exercise" in cell["metadata"].get("tags", []):
            assert re.search(r"^answer = None", source, flags=re.MULTILINE), "an exercise starts unanswered"
            wrong = re.sub(r"^answer = None", "answer = -12345", source, flags=re.MULTILINE)
            with pytest.raises(AssertionError, match="Not quite"), contextlib.redirect_stdout(io.StringIO()):
                exec(compile(wrong, f"{path.name} (wrong answer)", "exec"), namespace)  # noqa: S102 - our own notebooks
            exercises += 1
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, path.name, "exec"), namespace)  # noqa: S102
    assert exercises >= 2
