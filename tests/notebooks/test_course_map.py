"""The README's course table and the instructor's guide list exactly the notebooks, with their titles, times and points."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
README_ROW = re.compile(r"^\| \[(\d+\. [^\]]+)\]\(notebooks/([^)]+)\) \| .+ \| (\d+) min \|$", flags=re.MULTILINE)
GUIDE_ROW = re.compile(
    r"^\| \[(\d+\. [^\]]+)\]\(\.\./notebooks/([^)]+)\) \| [^|]+ \| (\d+) min \| (\d+) \+ (\d+) \|$", flags=re.MULTILINE
)


def _facts(path: Path) -> dict[str, Any]:
    """A notebook's heading, its stated time, and its autograded and hand-graded points."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    first = "".join(cells[0]["source"])
    heading = re.search(r"^# (\d+\. .+)$", first, flags=re.MULTILINE)
    minutes = re.search(r"\*\*Time\.\*\* About (\d+) minutes", first)
    assert heading and minutes, f"{path.name}: the first cell needs '# N. Title' and '**Time.** About N minutes'"
    auto = manual = 0
    for cell in cells:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade"):
            if meta.get("solution"):
                manual += meta["points"]
            else:
                auto += meta["points"]
    return {"title": heading.group(1), "file": path.name, "minutes": int(minutes.group(1)), "points": (auto, manual)}


def test_readme_course_table_matches_the_notebooks() -> None:
    """One README row per notebook, in order, with the notebook's own title and time."""
    rows = README_ROW.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    expected = [(f["title"], f["file"], f["minutes"]) for f in map(_facts, NOTEBOOKS)]
    assert [(title, file, int(minutes)) for title, file, minutes in rows] == expected


def test_guide_table_matches_the_notebooks() -> None:
    """One guide row per notebook, in order, with its title, time and nbgrader points."""
    rows = GUIDE_ROW.findall((ROOT / "docs" / "instructors.md").read_text(encoding="utf-8"))
    expected = [(f["title"], f["file"], f["minutes"], f["points"]) for f in map(_facts, NOTEBOOKS)]
    assert [(t, f, int(m), (int(a), int(b))) for t, f, m, a, b in rows] == expected


@pytest.mark.parametrize("page", ["README.md", "docs/instructors.md"])
def test_course_pages_link_only_existing_notebooks(page: str) -> None:
    """Every notebook link on the course pages resolves to a file."""
    text = (ROOT / page).read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:\.\./)?notebooks/[^)]+\.ipynb)\)", text)
    base = (ROOT / page).parent
    assert [link for link in links if not (base / link).exists()] == []
