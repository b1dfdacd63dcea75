"""The README's course table and the instructor's guide list exactly the notebooks, with their titles, times and points."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
README_ROW = re.compile(
    r"^\| \[(\d+\. [^\]]+)\]\(notebooks/([^)]+)\) \| .+ \| (\d+) to (\d+) min \|$", flags=re.MULTILINE
)
GUIDE_ROW = re.compile(
    r"^\| \[(\d+\. [^\]]+)\]\(\.\./notebooks/([^)]+)\) \| [^|]+ \| (\d+) to (\d+) min \| (\d+) \+ (\d+) \|$",
    flags=re.MULTILINE,
)
STATED_TIME = re.compile(r"\*\*Time\.\*\* (\d+) to (\d+) minutes")

#: The instructor's guide's rule for a notebook's time, in minutes (low, high) per item: each markdown cell of
#: the lesson (read it, most hold a derivation or a table), each code cell of the lesson (run it, read its
#: output), each graded answer (a numeric exercise and its check, or an explained answer), each graded answer
#: of a design exercise (a search over layouts or settings, often several tries), each open-ended answer (a cell
#: tagged "open-ended": the capstone's plan), and the live panel's task once. The lesson is every cell after the
#: title cell and before "## Exercises".
RULE = {
    "markdown": (1.5, 3.0),
    "code": (0.5, 1.0),
    "answer": (3.0, 6.0),
    "design": (5.0, 12.0),
    "open": (45.0, 90.0),
    "panel": (3.0, 8.0),
}


def _open(cell: dict[str, Any]) -> bool:
    return "open-ended" in cell["metadata"].get("tags", [])


def _graded_kinds(cells: list[dict[str, Any]]) -> list[str]:
    """For each graded cell, "open", "design" (its exercise's heading says so) or "answer"."""
    kinds, heading = [], ""
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and text.startswith("### Exercise"):
            heading = text.splitlines()[0]
        if cell["metadata"].get("nbgrader", {}).get("grade"):
            kinds.append("open" if _open(cell) else "design" if "(design" in heading else "answer")
    return kinds


def estimated_minutes(cells: list[dict[str, Any]]) -> tuple[int, int]:
    """The rule applied to a notebook's cells: (low rounded down, high rounded up) to 5 minutes."""
    end = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## Exercises"))
    lesson = cells[1:end]
    graded = _graded_kinds(cells)
    counts = {
        "markdown": sum(c["cell_type"] == "markdown" for c in lesson),
        "code": sum(c["cell_type"] == "code" for c in lesson),
        **{kind: graded.count(kind) for kind in ("answer", "design", "open")},
        "panel": 1,
    }
    low = sum(RULE[k][0] * n for k, n in counts.items())
    high = sum(RULE[k][1] * n for k, n in counts.items())
    return 5 * math.floor(low / 5), 5 * math.ceil(high / 5)


def _facts(path: Path) -> dict[str, Any]:
    """A notebook's heading, its stated time, and its autograded and hand-graded points."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    first = "".join(cells[0]["source"])
    heading = re.search(r"^# (\d+\. .+)$", first, flags=re.MULTILINE)
    minutes = STATED_TIME.search(first)
    assert heading and minutes, f"{path.name}: the first cell needs '# N. Title' and '**Time.** N to M minutes'"
    auto = manual = 0
    for cell in cells:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade"):
            if meta.get("solution"):
                manual += meta["points"]
            else:
                auto += meta["points"]
    stated = (int(minutes.group(1)), int(minutes.group(2)))
    return {"title": heading.group(1), "file": path.name, "minutes": stated, "points": (auto, manual), "cells": cells}


def test_readme_course_table_matches_the_notebooks() -> None:
    """One README row per notebook, in order, with the notebook's own title and time."""
    rows = README_ROW.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    expected = [(f["title"], f["file"], f["minutes"]) for f in map(_facts, NOTEBOOKS)]
    assert [(title, file, (int(low), int(high))) for title, file, low, high in rows] == expected


def test_guide_table_matches_the_notebooks() -> None:
    """One guide row per notebook, in order, with its title, time and nbgrader points."""
    rows = GUIDE_ROW.findall((ROOT / "docs" / "instructors.md").read_text(encoding="utf-8"))
    expected = [(f["title"], f["file"], f["minutes"], f["points"]) for f in map(_facts, NOTEBOOKS)]
    assert [(t, f, (int(lo), int(hi)), (int(a), int(b))) for t, f, lo, hi, a, b in rows] == expected


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stated_time_is_the_guides_rule(path: Path) -> None:
    """Each notebook states the range the guide's rule gives for its cells and graded answers."""
    facts = _facts(path)
    assert facts["minutes"] == estimated_minutes(facts["cells"])


def test_guide_states_the_rule() -> None:
    """The guide gives the rule's per-item minutes, so an instructor can redo the estimate."""
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    for low, high in RULE.values():
        assert f"{low:g} to {high:g} min" in guide


@pytest.mark.parametrize("page", ["README.md", "docs/instructors.md"])
def test_course_pages_link_only_existing_notebooks(page: str) -> None:
    """Every notebook link on the course pages resolves to a file."""
    text = (ROOT / page).read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:\.\./)?notebooks/[^)]+\.ipynb)\)", text)
    base = (ROOT / page).parent
    assert [link for link in links if not (base / link).exists()] == []


SESSION = re.compile(r"(\d+) and (\d+) \((\d+) to (\d+)(?: minutes)?\)|(\d+)\s+alone \((\d+) to (\d+)")


def test_guide_sessions_add_up_the_ranges() -> None:
    """The guide's session plan quotes each session's range as the sum of its notebooks' ranges."""
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    plan = guide[guide.index("three-hour lab sessions cover") :].split("\n\n", 1)[0]
    ranges = {int(f["title"].split(".")[0]): f["minutes"] for f in map(_facts, NOTEBOOKS)}
    sessions = SESSION.findall(plan)
    covered = sorted(int(n) for s in sessions for n in (s[0], s[1], s[4]) if n)
    assert covered == list(range(1, 10)), "the plan covers notebooks 1 to 9, each once"
    for a, b, low, high, alone, alone_low, alone_high in sessions:
        if alone:
            assert ranges[int(alone)] == (int(alone_low), int(alone_high))
            assert int(alone_high) <= 180
        else:
            assert ranges[int(a)][0] + ranges[int(b)][0] == int(low)
            assert ranges[int(a)][1] + ranges[int(b)][1] == int(high)
            assert int(high) <= 180  # each session fits three hours at the slow end
