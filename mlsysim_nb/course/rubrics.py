"""Write the graders' sheets: the answer key of the autograded items, and every answer graded by hand.

Usage: ``python -m mlsysim_nb.course.rubrics [OUT_DIR]`` (``make rubrics``; default ``build/rubrics``): one
Markdown file per notebook, ``NN_name.md``. It opens with the answer key of the autograded items: the values
the hidden tests compare against, with their tolerance, computed by the package when the sheet is written (the
hidden tests are run once with a ``require`` that records, :mod:`mlsysim_nb.course.key`). Then each answer
graded by hand: nbgrader's Formgrader shows the student's notebook, where the rubric is printed above each
answer; the model answer sits in the instructor's notebook's solution region, which the release removes. The
sheet puts the two side by side, to keep open while grading.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells
from mlsysim_nb.course.key import describe, record
from mlsysim_nb.course.repository import ROOT, course_notebooks

__all__ = ["answer_key", "autograded", "hand_graded", "main", "sheet"]


def hand_graded(path: Path) -> list[dict[str, Any]]:
    """Each answer of ``path`` graded by hand: its id, points, exercise heading, prompt and model answer."""
    found = cells.cells(path)
    items, heading = [], ""
    for index, cell in enumerate(found):
        text = cells.source(cell)
        if cell["cell_type"] == "markdown" and text.startswith("### Exercise"):
            heading = text.splitlines()[0].removeprefix("### ").strip()
        if not cells.is_hand_graded(cell):
            continue
        items.append({
            "id": cells.grade_id(cell), "points": cells.points(cell), "exercise": heading,
            "prompt": cells.source(found[index - 1]).strip(), "answer": cells.solution(cell),
        })  # fmt: skip
    return items


def autograded(path: Path) -> list[tuple[str, float]]:
    """``(grade_id, points)`` of each autograded check cell of ``path``."""
    return [(cells.grade_id(c), cells.points(c)) for c in cells.cells(path) if cells.is_check(c)]


def answer_key(path: Path) -> list[str]:
    """The sheet's answer key: each autograded item's expected value and tolerance, as the hidden test has them."""
    key = record(path)
    lines = [
        "## Answer key of the autograded items\n",
        "The values the hidden tests compare against, computed by the package from the hidden tests themselves.\n",
        "| item | points | the hidden test accepts |",
        "|---|---|---|",
    ]
    for grade_id, points in autograded(path):
        accepted = (
            describe(key[grade_id])
            if grade_id in key
            else "no fixed value: it reads the student's own objects (see its hidden test)"
        )
        lines.append(f"| `{grade_id}` | {points:g} | {accepted} |")
    return [*lines, ""]


def sheet(path: Path) -> str:
    """The grader's sheet of one notebook, as Markdown."""
    title = cells.source(cells.cells(path)[0]).splitlines()[0].removeprefix("# ").strip()
    items = hand_graded(path)
    total = sum(item["points"] for item in items)
    parts = [f"# Grader's sheet: {title}\n", *answer_key(path)]
    parts += [
        "## Graded by hand\n",
        f"{len(items)} answer(s), {total:g} point(s), from `notebooks/{path.name}`.\n",
    ]
    for item in items:
        parts += [
            f"### {item['exercise']}: `{item['id']}` ({item['points']:g} point{'s' if item['points'] != 1 else ''})\n",
            "#### What the student reads\n", item["prompt"] + "\n",
            "#### Model answer\n", item["answer"] + "\n",
        ]  # fmt: skip
    return "\n".join(parts)


_SUMMARY = "Write the graders' sheets: the answer key of the autograded items, and every answer graded by hand."


def main(argv: list[str] | None = None) -> int:
    """Write one sheet per notebook into the output folder."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.rubrics", description=_SUMMARY)
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "build" / "rubrics")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in course_notebooks():
        (args.out / f"{path.stem}.md").write_text(sheet(path), encoding="utf-8")
    print(f"wrote the graders' sheets to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
