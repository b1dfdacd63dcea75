"""``make rubrics``: one grader's sheet per notebook, with every hand-graded answer's rubric and model answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from make_rubrics import hand_graded, main  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The graders' sheets, written once (the answer key runs every hidden test)."""
    folder = tmp_path_factory.mktemp("rubrics")
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
        assert "### BEGIN SOLUTION" not in text


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
        checks = [c for c in __import__("json").loads(path.read_text(encoding="utf-8"))["cells"]
                  if c["metadata"].get("nbgrader", {}).get("grade") and not c["metadata"]["nbgrader"].get("solution")]  # fmt: skip
        assert checks
        for cell in checks:
            assert f"| `{cell['metadata']['nbgrader']['grade_id']}` |" in text


def test_every_autograded_item_but_the_capstones_run_has_a_value_in_the_key(sheets: Path) -> None:
    """Only the capstone's run and its time (the student's own scenarios) are left out of the key; the rest is recorded."""
    unkeyed = [
        line.split("`")[1]
        for path in NOTEBOOKS
        for line in (sheets / f"{path.stem}.md").read_text(encoding="utf-8").splitlines()
        if "no fixed value" in line
    ]
    assert unkeyed == ["check_12_4", "check_12_5"]
