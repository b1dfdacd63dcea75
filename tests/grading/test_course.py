"""The course's tools in their own package, :mod:`mlsysim_nb.course`, behind the ``course`` extra.

The package the notebooks import (``mlsysim_nb`` and every module outside ``mlsysim_nb.course``) imports none of
the notebook and grading libraries; ``mlsysim_nb.course`` without them says which extra to install; the Makefile
runs the course's tools as modules; and one module reads nbgrader's marks.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mlsysim_nb.course import EXTRA_MODULES, cells
from mlsysim_nb.course.cells import HIDDEN_TESTS, SOLUTION

ROOT = Path(__file__).resolve().parents[2]
#: the libraries only the course's tools may import (nbconvert comes with nbgrader)
COURSE_ONLY = ("nbformat", "nbclient", "nbgrader", "nbconvert", "jupyter_client", "zmq")

#: a subprocess's first lines: importing any of ``blocked`` (or a submodule of one) raises ImportError
BLOCKER = """
import importlib.abc, sys
BLOCKED = {blocked!r}

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked by the test: {{name}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""

IMPORT_EVERY_MODULE = """
import pkgutil
import mlsysim_nb

names = sorted(
    m.name for m in pkgutil.walk_packages(mlsysim_nb.__path__, "mlsysim_nb.")
    if m.name != "mlsysim_nb.course" and not m.name.startswith("mlsysim_nb.course.")
)
for name in names:
    __import__(name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print(len(names), "modules")
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter on this checkout."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_package_proper_imports_no_notebook_or_grading_library() -> None:
    """``mlsysim_nb`` and each module outside ``course/`` import with nbformat, nbclient, nbgrader (...) blocked."""
    done = _python(BLOCKER.format(blocked=COURSE_ONLY) + IMPORT_EVERY_MODULE)
    assert done.returncode == 0, done.stderr[-3000:]
    count = int(done.stdout.split()[0])
    assert count >= 60  # the whole package was walked: the kinds, the model, the renderers, the exercises


def test_no_module_outside_the_course_imports_them_even_on_use() -> None:
    """No import statement of those libraries anywhere outside ``course/``, not even one inside a function."""
    found = []
    for path in sorted((ROOT / "mlsysim_nb").rglob("*.py")):
        if "course" in path.relative_to(ROOT / "mlsysim_nb").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in COURSE_ONLY]
    assert found == []


def test_the_blocker_would_catch_a_leak() -> None:
    """The same subprocess fails when a module it imports needs a blocked library (here the course's release)."""
    done = _python(BLOCKER.format(blocked=("nbgrader",)) + "import mlsysim_nb.course.release")
    assert done.returncode != 0
    assert "the 'course' extra" in done.stderr


@pytest.mark.parametrize("missing", ["nbformat", "nbclient", "nbgrader", "jupyter_client", "zmq"])
def test_without_the_extra_the_course_names_it(missing: str) -> None:
    """Importing ``mlsysim_nb.course`` without one of its libraries raises an ImportError naming the extra and it."""
    code = BLOCKER.format(blocked=(missing,)) + (
        "import json\ntry:\n    import mlsysim_nb.course.regrade\nexcept ImportError as error:\n"
        "    print(json.dumps([type(error).__name__, error.name, str(error)]))\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr[-3000:]
    kind, name, message = json.loads(done.stdout)
    assert (kind, name) == ("CourseExtraError", "mlsysim_nb.course")
    assert "pip install -e '.[course]'" in message
    assert f"missing here: {missing}" in message


def test_the_grading_commands_without_the_extra_say_what_to_install() -> None:
    """``python -m mlsysim_nb regrade`` without nbgrader: exit 2 and one line naming the extra, no traceback."""
    code = BLOCKER.format(blocked=("nbgrader",)) + (
        "from mlsysim_nb.__main__ import main\nraise SystemExit(main(['regrade', '--source', 'x.ipynb', 'y.ipynb']))\n"
    )
    done = _python(code)
    assert done.returncode == 2
    assert done.stderr.startswith("regrade: the course's tools")
    assert "'course' extra" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_course_extra_declares_what_the_tools_import() -> None:
    """The ``course`` extra (pyproject.toml) names nbformat and nbclient (imported only by the course's tools) and nbgrader."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    course = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0] for r in extras["course"]}
    assert {"nbformat", "nbclient", "nbgrader", "jupyter_client", "pyzmq"} <= course
    assert "mlsysim_nb[course]" in extras["book"]  # the book's build is a course tool
    assert "mlsysim_nb[course]" in extras["test"]  # so is what tests/grading, tests/notebooks and tests/book import
    assert set(EXTRA_MODULES) == {"nbformat", "nbclient", "nbgrader", "jupyter_client", "zmq", "traitlets"}


@pytest.mark.parametrize(
    ("target", "module"),
    [
        ("assignments", "release"),
        ("student", "release"),
        ("rubrics", "rubrics"),
        ("book", "book"),
        ("count-runs", "count_runs"),
        ("notebooks", "execute"),
        ("lint", "hygiene"),
    ],
)
def test_the_makefile_runs_the_course_tools_as_modules(target: str, module: str) -> None:
    """Each target's recipe runs ``python -m mlsysim_nb.course.<module>``, a module with a ``main``; no scripts/."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    (recipe,) = re.findall(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", make, flags=re.MULTILINE)
    assert f"python -m mlsysim_nb.course.{module}" in recipe
    assert "scripts/" not in make
    assert not (ROOT / "scripts").exists()
    imported = __import__(f"mlsysim_nb.course.{module}", fromlist=["main"])
    assert callable(imported.main)


def test_the_regions_are_read_between_their_markers() -> None:
    """A solution and a hidden test are the text between their marker lines; a region without its end is none."""
    text = "a = None\n### BEGIN SOLUTION\na = 2\n### END SOLUTION\nx\n### BEGIN SOLUTION\nb = 3\n"
    assert cells.regions(text, SOLUTION) == ["a = 2\n"]
    check = {
        "cell_type": "code",
        "metadata": {"nbgrader": {"grade": True, "solution": False, "grade_id": "check_1_1", "points": 2}},
        "source": [
            "check(answer_1_1)\n",
            "### BEGIN HIDDEN TESTS\n",
            "require(answer_1_1, 3)\n",
            "### END HIDDEN TESTS",
        ],
    }
    assert cells.hidden_test(check) == "require(answer_1_1, 3)\n"
    assert (cells.is_check(check), cells.is_answer(check), cells.points(check)) == (True, False, 2.0)
    answer = {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade": False}}, "source": text}
    assert (cells.hidden_test(answer), cells.solution(answer), cells.points(answer)) == (None, "a = 2", 0.0)
    assert cells.regions("### BEGIN HIDDEN TESTS\nx\n### END HIDDEN TESTS", HIDDEN_TESTS) == ["x\n"]


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            found.add(id(body[0].value))
    return found


def _reads_nbgrader(node: ast.AST) -> bool:
    """``...["nbgrader"]`` read, or ``....get("nbgrader", ...)``."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "nbgrader"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "nbgrader"
    )


def _own_readings(path: Path) -> list[str]:
    """Where ``path``'s code spells a marker, or reads a cell's nbgrader metadata, itself (docstrings aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if any(marker in node.value for marker in ("### BEGIN", "### END")):
                found.append(f"{path.name}:{node.lineno} spells a marker")
        elif _reads_nbgrader(node):
            found.append(f"{path.name}:{getattr(node, 'lineno', 0)} reads nbgrader's metadata")
    return found


def test_one_module_reads_nbgraders_marks() -> None:
    """Outside ``course/cells.py`` no module of the package spells a marker or reads nbgrader's metadata; no test of the course spells a marker."""
    package = [p for p in sorted((ROOT / "mlsysim_nb").rglob("*.py")) if p.name != "cells.py"]
    assert [f for p in package for f in _own_readings(p)] == []
    tests = [
        *sorted((ROOT / "tests" / "grading").glob("test_*.py")),
        ROOT / "tests" / "notebooks" / "test_notebooks.py",
    ]
    spelt = [f for p in tests if p.name != "test_course.py" for f in _own_readings(p) if "marker" in f]
    assert spelt == []
