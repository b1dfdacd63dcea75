"""Reading submitted notebooks for code that tampers with the grading, before or after autograding.

The autograder runs a student's cells in the same kernel as the hidden tests, so no in-notebook grading
is proof against a student set on fooling it. The course's check cells import what they grade with
and the grading names cannot be replaced on their module, which defeats the one-line tricks
(``require = lambda *a, **k: None``); :func:`scan` flags what remains for an instructor to read: any
cell a student could edit that binds or patches a grading name, assigns an attribute of anything (a module's
``math.isclose`` included), reaches a namespace (``vars()``, ``globals()``, ``__dict__``, ``sys.modules``),
swaps a function's code or reloads modules.

A submission is hostile input to the tools that read it, too. :func:`read_notebook` reads only a regular file
under a size limit (a FIFO, a device or a 1 GB file is refused, never waited on or loaded) and only a notebook
whose cells and metadata are objects; :func:`printable` escapes what a student wrote (terminal escape
sequences, bidirectional overrides) before a terminal shows it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells
from mlsysim_nb.files import UnreadableFileError, read_bytes

__all__ = [
    "GRADING_NAMES",
    "LARGEST_NOTEBOOK",
    "Finding",
    "UnreadableSubmissionError",
    "notebooks_under",
    "printable",
    "read_notebook",
    "scan",
    "scan_notebook",
]

#: the largest submitted notebook read (bytes): a course notebook with its outputs is a few MB
LARGEST_NOTEBOOK = 32 * 2**20

#: names the check cells grade with: a student's cell that binds one is flagged
GRADING_NAMES = frozenset({"check", "require", "grading", "WrongAnswer", "NOT_WITHIN_TOLERANCE", "NOT_GRADED"})
#: attribute and call names that replace code or modules at run time, or read the grader's own frames
_SUSPECT_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals", "_getframe", "currentframe", "stack"})
#: names of the modules and helpers that reach into other code's namespaces or frames
_SUSPECT_NAMES = frozenset(
    {"sys", "builtins", "get_ipython", "getattr", "importlib", "inspect", "types", "ctypes", "gc"}
)
#: the grading modules, which no answer needs as a module object
_GRADING_MODULES = frozenset({"mlsysim_nb.exercises", "mlsysim_nb.answers"})
#: the one magic the course's own cells use
_ALLOWED_MAGICS = frozenset({"%matplotlib inline"})
_SUSPECT_CALLS = frozenset(
    {"reload", "setattr", "delattr", "exec", "eval", "compile", "__import__", "vars", "globals", "locals"}
)
_SUSPECT_TEXT = re.compile(r"mlsysim_nb\.exercises|sys\.modules|builtins")


@dataclass(frozen=True)
class Finding:
    """One suspicious line: the notebook, the cell's index and nbgrader id (if any), and what was seen."""

    path: Path
    cell: int
    grade_id: str
    line: int
    what: str

    def __str__(self) -> str:
        where = f"cell {self.cell}" + (f" ({self.grade_id})" if self.grade_id else "")
        if self.cell < 0:
            return printable(f"{self.path}: {self.what}")
        return printable(f"{self.path}: {where}, line {self.line}: {self.what}")


class UnreadableSubmissionError(ValueError):
    """A submitted file that is not a notebook this course can read (not a regular file, too large, malformed)."""


def printable(text: object) -> str:
    r"""``text`` safe for a terminal: control and format characters (``\x1b``, ``\u202e``, newlines) escaped.

    >>> printable("ok \x1b]0;pwned\x07 \u202eevil")
    'ok \\x1b]0;pwned\\x07 \\u202eevil'
    """
    out = []
    for char in str(text):
        if unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"}:
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)


def read_notebook(path: Path, *, limit: int = LARGEST_NOTEBOOK) -> dict[str, Any]:
    """A submitted notebook read as hostile input: a regular file of at most ``limit`` bytes, JSON, of objects.

    Raises :class:`UnreadableSubmissionError` with the reason (a FIFO or device is refused without waiting on it,
    a file over the limit without loading it, JSON nested too deeply to parse, cells or metadata that are not
    objects, a source that is not text).
    """
    try:
        data = read_bytes(path, limit=limit, what="a submitted notebook")
    except UnreadableFileError as err:
        raise UnreadableSubmissionError(err.reason) from None
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError, MemoryError) as err:
        raise UnreadableSubmissionError(f"not a notebook's JSON ({type(err).__name__})") from None
    _check_shape(notebook)
    return notebook  # type: ignore[no-any-return]


def _check_shape(notebook: Any) -> None:
    """The parts of a notebook the grading tools read are of the types nbformat writes."""
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise UnreadableSubmissionError("not a notebook: no list of cells")
    for index, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict):
            raise UnreadableSubmissionError(f"cell {index} is not an object")
        if not isinstance(cell.get("metadata", {}), dict) or not isinstance(cells.grading(cell), dict):
            raise UnreadableSubmissionError(f"the metadata of cell {index} is not an object")
        if not isinstance(cells.grading(cell).get("grade_id", ""), str):
            raise UnreadableSubmissionError(f"the grade id of cell {index} is not text")
        source = cell.get("source", "")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise UnreadableSubmissionError(f"the source of cell {index} is not text")
        if not isinstance(cell.get("cell_type", ""), str):
            raise UnreadableSubmissionError(f"the type of cell {index} is not text")


def _bound_names(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            if alias.asname is not None or isinstance(node, ast.ImportFrom):
                yield alias.asname or alias.name


def _magic_lines(code: str) -> tuple[str, list[tuple[int, str]]]:
    """The cell's code with its magic and shell lines replaced by the code they run, and a finding for each.

    ``%time <code>`` runs ``<code>``: it is scanned as the line's code, and the magic itself is a finding.
    """
    lines, found = [], []
    for number, line in enumerate(code.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("%", "!")) and stripped not in _ALLOWED_MAGICS:
            found.append((number, f"runs an IPython magic or shell command: {stripped[:80]}"))
            _, _, rest = stripped.lstrip("%!").partition(" ")
            lines.append(rest)
        else:
            lines.append("" if stripped in _ALLOWED_MAGICS else line)
    return "\n".join(lines), found


def _findings_in_code(code: str) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for each suspicious construct of one cell's code."""
    code, magics = _magic_lines(code)
    yield from magics
    try:
        tree = ast.parse(code)
    except SyntaxError:
        for number, line in enumerate(code.splitlines(), 1):
            if _SUSPECT_TEXT.search(line) or any(name in line for name in GRADING_NAMES):
                yield number, f"unparsable cell mentions grading code: {line.strip()[:80]}"
        return
    for node in ast.walk(tree):
        for what in _node_findings(node):
            yield int(getattr(node, "lineno", 0)), what


def _node_findings(node: ast.AST) -> Iterator[str]:
    """What is suspicious about one syntax node: a grading name bound, an attribute assigned, code swapped."""
    from_exercises = isinstance(node, ast.ImportFrom) and node.module == "mlsysim_nb.exercises"
    for name in _bound_names(node):
        if name in GRADING_NAMES and not (from_exercises and name == _original(node, name)):
            yield f"binds the grading name {name!r}"
    yield from _import_findings(node)
    if isinstance(node, ast.Attribute):
        yield from _attribute_findings(node)
    elif isinstance(node, ast.Call):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if called in _SUSPECT_CALLS:
            yield f"calls {called}()"
    elif isinstance(node, ast.Name) and node.id in _SUSPECT_NAMES and isinstance(node.ctx, ast.Load):
        yield f"uses {node.id}"
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _dunder(node.value):
        yield f"names {node.value!r} in a string"


def _attribute_findings(node: ast.Attribute) -> Iterator[str]:
    """An attribute assigned, a dunder or frame attribute read, or a grading module reached through its package."""
    if not isinstance(node.ctx, ast.Load):
        yield f"assigns the attribute {ast.unparse(node)!r}"
    elif node.attr in _SUSPECT_ATTRIBUTES or _dunder(node.attr):
        yield f"reaches {node.attr}"
    elif isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in _GRADING_MODULES:
        yield f"reaches the grading module {node.value.id}.{node.attr}"


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _import_findings(node: ast.AST) -> Iterator[str]:
    """An import of a grading module as a module object (``import mlsysim_nb.exercises as e``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in _GRADING_MODULES:
                yield f"imports the grading module {alias.name}"
    elif isinstance(node, ast.ImportFrom) and node.module == "mlsysim_nb":
        for alias in node.names:
            if f"mlsysim_nb.{alias.name}" in _GRADING_MODULES:
                yield f"imports the grading module mlsysim_nb.{alias.name}"


def _original(node: ast.AST, name: str) -> str:
    """The imported name behind ``name`` in an import (``from m import a as b`` gives ``a`` for ``b``)."""
    for alias in getattr(node, "names", ()):
        if (alias.asname or alias.name) == name:
            return str(alias.name)
    return name


def scan_notebook(path: Path) -> list[Finding]:
    """The findings of one submitted notebook, in every code cell but the released check cells as they stand.

    A file that cannot be read as a notebook is one finding naming why; a cell too deeply nested to parse is one
    finding naming that cell.
    """
    try:
        notebook_cells = read_notebook(Path(path))["cells"]
    except UnreadableSubmissionError as err:
        return [Finding(Path(path), -1, "", 0, f"cannot read the notebook: {err}")]
    found = []
    for index, cell in enumerate(notebook_cells):
        grade_id = cells.grade_id(cell)
        code = cells.source(cell)
        try:
            if cell.get("cell_type") != "code" or _is_visible_check(code):
                continue
            found += [Finding(Path(path), index, grade_id, line, what) for line, what in _findings_in_code(code)]
        except (RecursionError, MemoryError) as err:
            found.append(
                Finding(Path(path), index, grade_id, 0, f"cannot be read: nested too deeply ({type(err).__name__})")
            )
    return found


def _is_visible_check(code: str) -> bool:
    """A released check cell as it stands: its import of ``check`` and one ``check(...)`` call, nothing else.

    Only such a cell is left unread. Its nbgrader metadata says "locked", but a submission's metadata is the
    student's to edit, so the scan goes by the cell's code, not by the flag.
    """
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    return (
        len(body) == 2
        and ast.unparse(body[0]) == "from mlsysim_nb.exercises import check"
        and isinstance(body[1], ast.Expr)
        and isinstance(body[1].value, ast.Call)
        and ast.unparse(body[1].value.func) == "check"
        and all(isinstance(a, ast.Name) for a in body[1].value.args)
        and all(isinstance(k.value, (ast.Constant, ast.List, ast.Tuple)) for k in body[1].value.keywords)
    )


def notebooks_under(path: Path) -> Iterator[Path]:
    """``path`` itself, or every ``*.ipynb`` under the folder ``path`` (no symbolic link to a folder followed)."""
    if not path.is_dir():
        yield path
        return
    for folder, subfolders, files in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if d != ".ipynb_checkpoints")
        yield from (Path(folder) / name for name in sorted(files) if name.endswith(".ipynb"))


def scan(paths: Iterable[Path]) -> list[Finding]:
    """The findings of every ``.ipynb`` under ``paths`` (files or folders, e.g. nbgrader's ``submitted/``)."""
    found: list[Finding] = []
    for path in map(Path, paths):
        for file in notebooks_under(path):
            found += scan_notebook(file)
    return found
