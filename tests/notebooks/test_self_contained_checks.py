"""Every check cell depends on nothing but its exercise's answer, so a student's own cells cannot change a grade.

Answer cells and lesson cells are not locked: a student may rebind ``s``, ``state``, ``require`` or
``check`` in a cell of their own, as an exercise may even invite. A check cell that read any of them
would grade a right answer wrong (or a pasted ``require = lambda *a, **k: None`` right). So each check
cell imports what it uses: the visible part ``check``, the hidden part ``grading`` and ``require`` and
whatever it computes the expected value from, inside ``with grading():`` (which turns any error into one
short line, so the feedback never shows the hidden test's code). The names a hidden test binds start
with ``_``, so that running it never changes a name the lesson's later cells read.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.course import cells as nb
from mlsysim_nb.course.cells import HIDDEN_TESTS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BEGIN, END = HIDDEN_TESTS.begin, HIDDEN_TESTS.end
#: the names a check may read without binding them: its exercise's answers (``answer_N_M``, ``my_*``)
ANSWER = re.compile(r"answer_\d+_\d+\w*|my_\w+")


_source = nb.source


def _check_cells() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in NOTEBOOKS:
        for cell in nb.cells(path):
            if cell["cell_type"] == "code" and nb.is_check(cell):
                found.append((f"{path.name[:2]}-{nb.grade_id(cell)}", cell))
    return found


CELLS = _check_cells()


def _bound_and_read(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``tree`` binds (assignments, imports, loop and comprehension targets, arguments) and reads."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, read


def _parts(cell: dict[str, Any]) -> tuple[str, str]:
    visible, _, rest = _source(cell).partition(BEGIN)
    hidden, _, _ = rest.partition(END)
    return visible, hidden


def test_there_are_check_cells() -> None:
    """The rules below have cells to hold to (every notebook grades something)."""
    assert {name[:2] for name, _ in CELLS} == {p.name[:2] for p in NOTEBOOKS}


@pytest.mark.parametrize(("name", "cell"), CELLS, ids=[n for n, _ in CELLS])
def test_a_check_cell_reads_only_its_answer_and_what_it_imports(name: str, cell: dict[str, Any]) -> None:
    """Every name the cell reads is its exercise's answer, a builtin, or bound in the cell itself."""
    bound, read = _bound_and_read(ast.parse(_source(cell).replace(BEGIN, "").replace(END, "")))
    outside = {n for n in read - bound - set(dir(builtins)) if not ANSWER.fullmatch(n)}
    assert outside == set(), f"{name} reads names a student's cell can rebind: {sorted(outside)}"


@pytest.mark.parametrize(("name", "cell"), CELLS, ids=[n for n, _ in CELLS])
def test_a_hidden_test_grades_inside_grading_with_names_of_its_own(name: str, cell: dict[str, Any]) -> None:
    """The hidden part imports ``grading`` and ``require`` itself, runs in ``with grading():``, binds only ``_`` names."""
    _, hidden = _parts(cell)
    body = ast.parse(hidden).body
    assert body, f"{name} has no hidden test"
    first, *rest = body
    assert isinstance(first, ast.ImportFrom)
    assert first.module == "mlsysim_nb.exercises"
    assert {a.name for a in first.names} >= {"grading", "require"}
    assert all(a.asname is None for a in first.names)
    assert len(rest) == 1, f"{name}: everything after the import is one `with grading():`"
    (block,) = rest
    assert isinstance(block, ast.With)
    assert ast.unparse(block.items[0].context_expr) == "grading()"
    bound, _ = _bound_and_read(block)
    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(block) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}  # fmt: skip
    own = {n for n in bound - imported if not n.startswith("_")}
    assert own == set(), f"{name} binds names a later lesson cell may read: {sorted(own)}"
