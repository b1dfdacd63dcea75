"""Write the graders' sheets: the answer key of the autograded items, and every answer graded by hand.

Usage: ``python scripts/make_rubrics.py [OUT_DIR]`` (``make rubrics``; default ``build/rubrics``): one
Markdown file per notebook, ``NN_name.md``. It opens with the answer key of the autograded items: the values
the hidden tests compare against, with their tolerance, computed by the package when the sheet is written (the
hidden tests are run once with a ``require`` that records, :mod:`mlsysim_nb.answer_key`). Then each answer
graded by hand: nbgrader's Formgrader shows the student's notebook, where the rubric is printed above each
answer; the model answer sits in the instructor's notebook's solution region, which the release removes. The
sheet puts the two side by side, to keep open while grading.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _source(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def hand_graded(path: Path) -> list[dict[str, Any]]:
    """Each answer of ``path`` graded by hand: its id, points, exercise heading, prompt and model answer."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    items, heading = [], ""
    for index, cell in enumerate(cells):
        text = _source(cell)
        if cell["cell_type"] == "markdown" and text.startswith("### Exercise"):
            heading = text.splitlines()[0].removeprefix("### ").strip()
        meta = cell["metadata"].get("nbgrader", {})
        if not (meta.get("grade") and meta.get("solution")):
            continue
        _, _, rest = text.partition(BEGIN)
        answer = rest.partition(END)[0].strip() if rest else text.strip()
        items.append({
            "id": meta["grade_id"], "points": meta["points"], "exercise": heading,
            "prompt": _source(cells[index - 1]).strip(), "answer": answer,
        })  # fmt: skip
    return items


def autograded(path: Path) -> list[tuple[str, float]]:
    """``(grade_id, points)`` of each autograded check cell of ``path``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (c["metadata"]["nbgrader"]["grade_id"], float(c["metadata"]["nbgrader"].get("points", 0)))
        for c in cells
        if c["metadata"].get("nbgrader", {}).get("grade") and not c["metadata"]["nbgrader"].get("solution")
    ]


def answer_key(path: Path) -> list[str]:
    """The sheet's answer key: each autograded item's expected value and tolerance, as the hidden test has them."""
    from mlsysim_nb.answer_key import describe, record

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
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    title = _source(cells[0]).splitlines()[0].removeprefix("# ").strip()
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


def main(argv: list[str] | None = None) -> int:
    """Write one sheet per notebook into the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "build" / "rubrics")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        (args.out / f"{path.stem}.md").write_text(sheet(path), encoding="utf-8")
    print(f"wrote the graders' sheets to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
