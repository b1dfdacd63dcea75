"""The nbgrader release of every course notebook, read rather than run: nbval is the one execution.

nbval (``make test``) executes each instructor notebook once and compares every stored output. These
tests generate the release in a temporary course (nbgrader executes nothing to generate) and show,
from the stored outputs and the cells' code, what executing again would: the instructor's notebook
scores full marks (every graded check ran without an error in the run nbval reproduces), the untouched
release scores zero (every answer is ``None`` there, and every check's hidden test requires its
answer), and the release runs top to bottom (removing the solutions removes nothing another cell
reads). The committed ``student/`` folder is that release; ``tests/grading/test_round_trip.py``
autogrades real submissions through nbgrader's exchange.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.course import cells
from mlsysim_nb.course.cells import HIDDEN_TESTS
from mlsysim_nb.course.release import SELF_STUDY, for_a_graded_class, generate, main, notebooks, write_student
from mlsysim_nb.course.repository import STUDENT
from mlsysim_nb.course.student_version import problems
from tests.measured_once import measured_once
from tests.nbgrader_sandbox import jupyter_home, require_nbgrader

SOURCES = notebooks()
ANSWER_LINE = re.compile(r"^(answer_\d+_\d+) = None  # your answer[^\n]*$")
# nbgrader 0.9.6 triggers SQLAlchemy autoflush warnings inside its own gradebook code
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:Warning")


_cells, _meta, _source = cells.cells, cells.grading, cells.source


def _python(cell: dict[str, Any]) -> ast.Module:
    """A code cell as Python, IPython's magics translated the way the kernel translates them."""
    from IPython.core.inputtransformer2 import TransformerManager

    return ast.parse(TransformerManager().transform_cell(_source(cell)))


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a piece of code binds and the names it reads."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound, read


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated course: its own HOME, Jupyter folders and gradebook; the venv's bin on PATH (alembic)."""
    require_nbgrader()
    with jupyter_home(tmp_path_factory.mktemp("nbgrader-home")) as home:
        root = home / "course"
        generate(root, SOURCES)
        yield root


def _release(course: Path, source: Path) -> Path:
    return course / "release" / source.stem / source.name


def test_there_are_graded_notebooks() -> None:
    """Every course notebook carries autograded checks worth points."""
    assert len(SOURCES) >= 8
    auto = {p.stem: sum(cells.points(c) for c in _cells(p) if cells.is_check(c)) for p in SOURCES}
    assert [name for name, points in auto.items() if points <= 0] == []


def test_the_student_folder_is_the_release(course: Path, tmp_path: Path) -> None:
    """``student/`` (what ``make lab`` and Binder open) is byte for byte today's release: run ``make student``."""
    fresh = tmp_path / "student"
    with measured_once():  # the answer key runs every hidden test: notebook 10's measured once per process
        write_student(course, [p.stem for p in SOURCES], fresh)
    committed = {p.name: p.read_bytes() for p in STUDENT.iterdir() if p.is_file()}
    generated = {p.name: p.read_bytes() for p in fresh.iterdir()}
    assert sorted(committed) == sorted(generated), (
        "run `make student` after adding or renaming a notebook (it also writes student/answer_key.json)"
    )
    assert [name for name in generated if committed[name] != generated[name]] == [], (
        "student/ (or its answer key) is older than notebooks/: run `make student` and commit the result"
    )


def test_the_graded_release_has_no_answer_key(
    course: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make assignments``' release holds no key, so its check() confirms the form alone, never the value."""
    from mlsysim_nb.answer_key import KEY_FILE
    from mlsysim_nb.exercises import check

    assert list(course.rglob(KEY_FILE)) == []
    monkeypatch.chdir(course / "release" / SOURCES[0].stem)
    check(38.52, unit="GB", label="1.1")
    assert capsys.readouterr().out == (
        "Answer recorded: 38.52 GB. It reads in GB and is positive; its value is graded when the notebook is graded.\n"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_release_holds_no_solution(course: Path, source: Path) -> None:
    """No solution, hidden test, model answer or stored output; the check cells stay."""
    release = _release(course, source)
    assert problems([release]) == []
    assert "check(answer_" in release.read_text(encoding="utf-8")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_instructors_notebook_scores_full_marks(source: Path) -> None:
    """Every graded check ran, in order, without an error, in the stored run that nbval reproduces.

    nbgrader's autograder gives a check cell its points when it runs without an error; nbval fails a
    notebook whose run differs from its stored outputs, so these outputs are the autograder's verdict.
    """
    graded = [c for c in _cells(source) if _meta(c).get("grade") and c["cell_type"] == "code"]
    assert graded
    failed = [_meta(c)["grade_id"] for c in graded if c["execution_count"] is None or any(o["output_type"] == "error" for o in c["outputs"])]  # fmt: skip
    assert failed == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_untouched_release_scores_zero(course: Path, source: Path) -> None:
    """In the release every answer is ``None`` and nothing else; every check's hidden test requires that answer.

    ``require(None, ...)`` raises (``tests/notebooks/test_exercises.py``), so each check fails on a blank
    answer; the explain answers are the text stub, which nbgrader scores zero when unchanged.
    """
    release = _cells(_release(course, source))
    answers = {}
    for cell in release:
        meta = _meta(cell)
        if meta.get("solution") and cell["cell_type"] == "code":
            first, stub = _source(cell).split("\n", 1)
            match = ANSWER_LINE.match(first)
            assert match, f"{meta['grade_id']}: {first!r}"
            assert stub == "# your work here: set the answer variable above"
            answers[meta["grade_id"]] = match.group(1)
        elif meta.get("solution"):
            assert _source(cell) == "YOUR ANSWER HERE"
    hidden = {}
    for cell in _cells(source):
        meta = _meta(cell)
        if meta.get("grade") and not meta.get("solution"):
            (body,) = cells.regions(_source(cell), HIDDEN_TESTS)
            hidden[meta["grade_id"]] = set(re.findall(r"require\((answer_\d+_\d+)", body))
    assert {name.replace("answer_", "check_"): {var} for name, var in answers.items()} == hidden


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_release_runs_top_to_bottom(course: Path, source: Path) -> None:
    """Removing the solutions removes nothing another cell reads; the answers are read by checks alone.

    With nbval's run of the instructor's notebook (no error in any cell), this is the release's run:
    its answers are ``None``, which the checks answer with a reminder and never an error.
    """
    release = [c for c in _cells(_release(course, source)) if c["cell_type"] == "code"]
    instructor = [c for c in _cells(source) if c["cell_type"] == "code"]
    assert [c.get("id") for c in release] == [c.get("id") for c in instructor]
    bound_in_release: set[str] = set()
    for cell in release:
        bound_in_release |= _names(_python(cell))[0]
    only_in_solutions = set()
    for cell in instructor:
        if _meta(cell).get("solution"):
            only_in_solutions |= _names(_python(cell))[0] - bound_in_release
    readers = {}
    for cell in release:
        meta = _meta(cell)
        if meta.get("solution"):
            continue
        read = _names(_python(cell))[1]
        lost = read & only_in_solutions
        answers = {n for n in read if n.startswith("answer_")}
        if lost or (answers and not meta.get("grade")):
            readers[cell.get("id")] = sorted(lost | answers)
    assert readers == {}


def test_a_graded_release_holds_no_link_to_the_solutions(course: Path, tmp_path: Path) -> None:
    """The release for a class drops the self-study cell, which links to the public solutions; student/ keeps it."""
    import shutil

    graded = tmp_path / "graded"
    shutil.copytree(course / "release", graded / "release")
    names = [p.stem for p in SOURCES]
    for_a_graded_class(graded, names)
    for name in names:
        released = _cells(graded / "release" / name / f"{name}.ipynb")
        assert not any(SELF_STUDY in _source(c) for c in released), name
        assert not any("/blob/main/notebooks/" in _source(c) for c in released), name
        assert len(released) == len(_cells(course / "release" / name / f"{name}.ipynb")) - 1
        assert _source(_cells(STUDENT / f"{name}.ipynb")[-1]).startswith(SELF_STUDY)


def test_a_class_copy_of_the_student_folder_holds_no_link_to_the_solutions(
    course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m mlsysim_nb.course.release COURSE --student DIR --graded`` (the guide's class copy): no link.

    The command's nbgrader generation of every notebook is the ``course`` fixture's, copied (the same call on the
    same notebooks): the rest of the command runs on that copy.
    """
    import shutil

    from mlsysim_nb.course import release

    def generated(root: Path, sources: list[Path]) -> list[str]:
        assert sources == SOURCES
        shutil.copytree(course, root)
        return [p.stem for p in sources]

    monkeypatch.setattr(release, "generate", generated)
    with jupyter_home(tmp_path / "home"):
        assert main([str(tmp_path / "course"), "--student", str(tmp_path / "class"), "--graded"]) == 0
    for path in sorted((tmp_path / "class").glob("*.ipynb")):
        assert SELF_STUDY not in path.read_text(encoding="utf-8"), path.name
    assert not (tmp_path / "class" / "answer_key.json").exists()  # its checks confirm the form alone
    assert len(list((tmp_path / "class").glob("*.ipynb"))) == len(SOURCES)
