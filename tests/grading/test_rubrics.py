"""``make rubrics`` (:mod:`mlsysim_nb.course.rubrics`): one grader's sheet per notebook, with every hand-graded answer's rubric and model answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsysim_nb.course import cells
from mlsysim_nb.course.cells import SOLUTION
from mlsysim_nb.course.repository import course_notebooks
from mlsysim_nb.course.rubrics import hand_graded, main
from tests.measured_once import measured_once

NOTEBOOKS = course_notebooks()


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The graders' sheets, written once (the answer key runs every hidden test, measuring notebook 10's once)."""
    folder = tmp_path_factory.mktemp("rubrics")
    with measured_once():
        assert main([str(folder)]) == 0
    return folder


def test_every_hand_graded_answer_is_on_its_notebooks_sheet(sheets: Path) -> None:
    """Each sheet names every hand-graded answer with its points, the rubric students read and the model answer."""
    tmp_path = sheets
    assert sorted(p.stem for p in tmp_path.glob("*.md")) == [p.stem for p in NOTEBOOKS]
    for path in NOTEBOOKS:
        text = (tmp_path / f"{path.stem}.md").read_text(encoding="utf-8")
        items = hand_graded(path)
        assert items, f"{path.name} has no answer graded by hand"
        for item in items:
            assert f"`{item['id']}`" in text
            assert "**Rubric.**" in item["prompt"], f"{item['id']}: the rubric is not above the answer"
            assert item["answer"].startswith(("**Model answer.**", "**Worked example.**")), item["id"]
            assert item["prompt"] in text
            assert item["answer"] in text
        assert SOLUTION.begin not in text


def test_each_sheet_opens_with_the_answer_key_of_the_autograded_items(sheets: Path) -> None:
    """Each sheet lists every autograded item with the value its hidden test compares against, computed by the package."""
    # notebook 1's 1.1: GPT-2's gradients and Adam state, 3.21e9 x (4 + 8) B = 38.52 GB, within 2 %;
    # 1.3: the copies of SGD with momentum, (4 + 4 + 4) B over the 4 B weight = 3; the capstone's run has no fixed value
    tmp_path = sheets
    first = (tmp_path / "01_where_memory_goes.md").read_text(encoding="utf-8")
    assert "## Answer key of the autograded items" in first
    assert "| `check_1_1` | 1 | 38.52 GB within 2 % |" in first
    assert "| `check_1_3` | 1 | 3 within 2 % |" in first
    capstone = (tmp_path / "12_capstone_plan_a_run.md").read_text(encoding="utf-8")
    assert "| `check_12_4` | 1 | no fixed value" in capstone
    for path in NOTEBOOKS:
        text = (tmp_path / f"{path.stem}.md").read_text(encoding="utf-8")
        checks = [c for c in cells.cells(path) if cells.is_check(c)]
        assert checks
        for cell in checks:
            assert f"| `{cells.grade_id(cell)}` |" in text


def test_every_autograded_item_but_the_capstones_run_has_a_value_in_the_key(sheets: Path) -> None:
    """Only the capstone's run and its time (the student's own scenarios) are left out of the key; the rest is recorded."""
    unkeyed = [
        line.split("`")[1]
        for path in NOTEBOOKS
        for line in (sheets / f"{path.stem}.md").read_text(encoding="utf-8").splitlines()
        if "no fixed value" in line
    ]
    assert unkeyed == ["check_12_4", "check_12_5"]
