"""``make rubrics``: one grader's sheet per notebook, with every hand-graded answer's rubric and model answer."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from make_rubrics import hand_graded, main  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_every_hand_graded_answer_is_on_its_notebooks_sheet(tmp_path: Path) -> None:
    """Each sheet names every hand-graded answer with its points, the rubric students read and the model answer."""
    assert main([str(tmp_path)]) == 0
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
