"""Check that a folder (or files) hold nothing of the instructor's solutions: what students may be shown.

Usage: ``python -m mlsysim_nb.course.student_version student/ [more folders or files]``. Reads the
instructor's notebooks in ``notebooks/`` and looks, in every text file given (notebooks, HTML
feedback, anything), for what only the instructor's version holds: the bodies of the solution regions
(``### BEGIN SOLUTION`` ... ``### END SOLUTION``), the hidden autograder tests (``### BEGIN HIDDEN
TESTS`` ... ``### END HIDDEN TESTS``), the model answers of the explain exercises, and the markers
themselves inside a notebook's cells. In a notebook it also refuses any stored output (the reveals and
the "Correct" lines live there). Exits 1 listing each finding.
"""

from __future__ import annotations

import argparse
import ast
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from mlsysim_nb.course import cells
from mlsysim_nb.course.cells import HIDDEN_TESTS, MARKERS, SOLUTION
from mlsysim_nb.course.repository import NOTEBOOKS, course_notebooks

__all__ = ["MARKERS", "Secret", "instructor_secrets", "main", "normal", "problems", "secrets"]

#: a line shorter than this (``else:``, ``)``) is not evidence of anything
MIN_LINE = 12
#: formatting that Markdown, HTML export or syntax highlighting may add or drop
FORMATTING = re.compile(r"[*`$_\\]")


@dataclass(frozen=True)
class Secret:
    """One line only the instructor's version holds, and where it comes from."""

    text: str
    origin: str


def normal(text: str) -> str:
    """Text as compared: without Markdown's and HTML's formatting characters, whitespace collapsed."""
    return " ".join(FORMATTING.sub("", text).split())


def secrets(notebook: Path) -> list[Secret]:
    """Every line of one instructor notebook's solutions, hidden tests and model answers.

    A line the notebook also shows outside those regions (a hidden test repeating its visible check's
    ``hints=[...]``) is public, not a secret.
    """
    out: list[Secret] = []
    public: set[str] = set()
    for cell in cells.cells(notebook):
        text = cells.source(cell)
        grade_id = cells.grade_id(cell) or "?"
        bodies = [(b, "solution") for b in cells.regions(text, SOLUTION)]
        bodies += [(b, "hidden test") for b in cells.regions(text, HIDDEN_TESTS)]
        if cell["cell_type"] == "markdown" and cells.is_answer(cell):
            bodies.append((text, "model answer"))
        else:
            shown = text
            for body, _ in bodies:
                shown = shown.replace(body, "")
            public |= {normal(line) for line in shown.splitlines()}
        for body, kind in bodies:
            out += [
                Secret(normal(line), f"{notebook.stem} {grade_id} ({kind})")
                for line in body.splitlines()
                if len(normal(line)) >= MIN_LINE and not _reveals_nothing(line)
            ]
    return [s for s in out if s.text not in public]


def _reveals_nothing(line: str) -> bool:
    """An import of the package's own names, or the ``with grading():`` a hidden test runs in: no answer in it.

    The package's source and its API reference hold such lines too, so they are no evidence of a leak.
    """
    stripped = line.strip()
    if stripped == "with grading():":
        return True
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return False
    return bool(tree.body) and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in tree.body)


def instructor_secrets(folder: Path = NOTEBOOKS) -> list[Secret]:
    """The secrets of every course notebook."""
    return [s for path in course_notebooks(folder) for s in secrets(path)]


def _notebook_problems(path: Path) -> tuple[list[str], str]:
    """A notebook's stored outputs and markers, and its cells' text (where secrets are looked for)."""
    problems, parts = [], []
    for index, cell in enumerate(cells.cells(path)):
        text = cells.source(cell)
        parts.append(text)
        problems += [f"{path}: cell {index} holds the marker {m!r}" for m in MARKERS if m in text]
        if cell.get("outputs"):
            problems.append(f"{path}: cell {index} has stored outputs (a reveal or a check's verdict)")
    return problems, "\n".join(parts)


def problems(paths: list[Path], known: list[Secret] | None = None) -> list[str]:
    """Everything in the given files or folders that only the instructor's version may hold."""
    known = instructor_secrets() if known is None else known
    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
    out: list[str] = []
    for path in files:
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text: nothing a reader could copy
        if path.suffix == ".ipynb":
            found, text = _notebook_problems(path)
            out += found
        else:
            text = html.unescape(re.sub(r"<[^>]+>", "", raw)) if path.suffix in (".html", ".htm") else raw
        text = normal(text)
        out += [f"{path}: holds {s.origin}: {s.text!r}" for s in known if s.text in text]
    return out


_SUMMARY = "Check that folders (or files) hold nothing of the instructor's solutions: what students may be shown."


def main(argv: list[str] | None = None) -> int:
    """Check the given folders and files; return 1 if any holds a solution."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.student_version", description=_SUMMARY)
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    found = problems(args.paths)
    for problem in found:
        print(problem)
    print(f"checked {', '.join(map(str, args.paths))}: {'solutions found' if found else 'no solution'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
