"""``python -m mlsysim_nb scan-submissions``: cells that tamper with the grading are flagged, honest work is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlsysim_nb.__main__ import main
from mlsysim_nb.course.submissions import scan

ROOT = Path(__file__).resolve().parents[2]


def _submission(tmp_path: Path, answer_cell: str, name: str = "01_x.ipynb") -> Path:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": "from mlsysim_nb import Scenarios\ns = Scenarios.Gpt2Fp32AdamOnH100"},
        {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "answer_1_1"}}, "source": answer_cell},
        {"cell_type": "code", "metadata": {"nbgrader": {"locked": True, "grade": True, "grade_id": "check_1_1"}},
         "source": "from mlsysim_nb.exercises import check, require\ncheck(answer_1_1, unit='GB')"},
    ]  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("code", "seen"),
    [
        ("answer_1_1 = 1\nrequire = lambda *a, **k: None", "binds the grading name 'require'"),
        ("def check(*a, **k):\n    pass", "binds the grading name 'check'"),
        ("from mlsysim_nb.exercises import check as require", "binds the grading name 'require'"),
        ("import mlsysim_nb.exercises as ex\nex.require = print", "assigns the attribute 'ex.require'"),
        ("from mlsysim_nb.exercises import require\nrequire.__code__ = (lambda *a, **k: None).__code__", "__code__"),
        ("import importlib, mlsysim_nb.exercises\nimportlib.reload(mlsysim_nb.exercises)", "calls reload()"),
        ("import sys\nsys.modules['mlsysim_nb.exercises'] = None", "uses sys"),
        ("setattr(__import__('mlsysim_nb.exercises'), 'require', print)", "calls setattr()"),
        ("answer_1_1 = (  # not Python\nrequire = 1", "unparsable cell mentions grading code"),
        ("import mlsysim_nb.exercises as e\nvars(e)['require'] = lambda *a, **k: None", "calls vars()"),
        ("import mlsysim_nb.exercises as e\nvars(e).update(require=print)", "calls vars()"),
        ("import math\nmath.isclose = lambda *a, **k: True", "assigns the attribute 'math.isclose'"),
        ("globals()['require'] = print", "calls globals()"),
        ("import mlsysim_nb.exercises as e\ne.__dict__['require'] = print", "reaches __dict__"),
    ],
)
def test_tampering_is_flagged(tmp_path: Path, code: str, seen: str) -> None:
    """Each way of replacing or bypassing the grading names in a student's cell gives a finding naming it."""
    findings = scan([_submission(tmp_path, code)])
    assert any(seen in f.what for f in findings), [str(f) for f in findings]
    assert all(f.grade_id == "answer_1_1" and f.cell == 1 for f in findings)


def test_the_instructors_own_notebooks_give_no_finding() -> None:
    """Every lesson and solution cell of the course (what an honest, complete submission holds) is clean."""
    assert [str(f) for f in scan([ROOT / "notebooks"])] == []


def test_honest_work_and_locked_cells_give_no_finding(tmp_path: Path) -> None:
    """Arithmetic, the package and its imports in an answer cell are fine; the locked check cell is not read."""
    code = "from mlsysim_nb import Q_\nstate = s.variant(batch_size=2)\nanswer_1_1 = state.total.to('GB').m * 2"
    assert scan([_submission(tmp_path, code)]) == []


def test_the_command_reports_and_sets_its_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 with one line per finding, 0 with "no findings", 2 for a path that does not exist."""
    folder = tmp_path / "submitted" / "mallory" / "01_x"
    folder.mkdir(parents=True)
    _submission(folder, "require = print")
    assert main(["scan-submissions", str(tmp_path / "submitted")]) == 1
    out = capsys.readouterr().out
    assert "mallory" in out
    assert "binds the grading name 'require'" in out
    assert "1 finding(s)" in out
    clean = tmp_path / "clean"
    clean.mkdir()
    _submission(clean, "answer_1_1 = 64")
    assert main(["scan-submissions", str(clean)]) == 0
    assert capsys.readouterr().out.strip() == "no findings"
    assert main(["scan-submissions", str(tmp_path / "missing")]) == 2


def test_an_unreadable_notebook_is_a_finding(tmp_path: Path) -> None:
    """A file that is not a notebook is reported, not skipped."""
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    (finding,) = scan([bad])
    assert "cannot read the notebook" in finding.what


@pytest.mark.parametrize(
    ("code", "seen"),
    [
        (
            "import mlsysim_nb.exercises as e\ntypes.ModuleType.__setattr__(e, 'require', print)",
            "imports the grading module",
        ),
        ("from mlsysim_nb import exercises\ngetattr(exercises, '__dict__')['require'] = print", "uses getattr"),
        ("%time import mlsysim_nb.exercises as e; vars(e)['require'] = print", "runs an IPython magic"),
        ("%time import mlsysim_nb.exercises as e; vars(e)['require'] = print", "calls vars()"),
        ("get_ipython().run_cell('import math; math.isclose = lambda *a, **k: True')", "uses get_ipython"),
        ("importlib.import_module('sys').modules['mlsysim_nb.exercises'] = None", "uses importlib"),
        ("import inspect\nf = inspect.currentframe().f_back", "reaches f_back"),
        ("x = object.__getattribute__", "reaches __getattribute__"),
        ("name = '__dict__'", "names '__dict__' in a string"),
        ("import mlsysim_nb\nmlsysim_nb.exercises", "reaches the grading module mlsysim_nb.exercises"),
        ("!cat notebooks/01.ipynb", "runs an IPython magic or shell command"),
    ],
)
def test_reaching_around_the_lock_is_flagged(tmp_path: Path, code: str, seen: str) -> None:
    """What gets past the modules' lock (a namespace, a frame, a magic, the module object) is flagged too."""
    findings = scan([_submission(tmp_path, code)])
    assert any(seen in f.what for f in findings), [str(f) for f in findings]


def test_a_cell_marked_locked_is_still_read(tmp_path: Path) -> None:
    """A submission's metadata is the student's: a cell that claims to be locked is read unless it is a bare check."""
    path = _submission(tmp_path, "answer_1_1 = 1")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"][1]["metadata"]["nbgrader"]["locked"] = True
    notebook["cells"][1]["source"] = "answer_1_1 = 1\nrequire = print"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert [f.cell for f in scan([path])] == [1]


def test_the_student_version_gives_no_finding() -> None:
    """Every released notebook as a student receives it (a blank submission) is clean."""
    assert [str(f) for f in scan([ROOT / "student"])] == []


def _notebook_text(cells: object) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (_notebook_text([1, 2]), "cell 0 is not an object"),
        (
            _notebook_text([{"cell_type": "code", "metadata": [], "source": "x = 1"}]),
            "metadata of cell 0 is not an object",
        ),
        (_notebook_text([{"cell_type": "code", "metadata": {"nbgrader": "x"}, "source": ""}]), "metadata of cell 0"),
        (_notebook_text([{"cell_type": "code", "metadata": {}, "source": [1]}]), "source of cell 0 is not text"),
        (_notebook_text({"a": 1}), "no list of cells"),
        ("[" * 200_000 + "]" * 200_000, "not a notebook's JSON (RecursionError)"),
    ],
)
def test_a_malformed_notebook_is_reported_and_the_scan_goes_on(tmp_path: Path, content: str, why: str) -> None:
    """Cells or metadata that are not objects, or JSON nested too deeply, give one finding; the next file is read."""
    (tmp_path / "a_bad.ipynb").write_text(content, encoding="utf-8")
    _submission(tmp_path, "require = print", name="b_tampered.ipynb")
    bad, *rest = scan([tmp_path])
    assert bad.path.name == "a_bad.ipynb"
    assert why in bad.what
    assert any("binds the grading name 'require'" in f.what for f in rest)


def test_code_nested_too_deeply_is_reported_for_its_cell(tmp_path: Path) -> None:
    """A cell of 100,000 nested operators (RecursionError in the parser) is one finding; the other cells are read."""
    path = _submission(tmp_path, "answer_1_1 = " + "-" * 100_000 + "1")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "source": "require = print"})
    path.write_text(json.dumps(notebook), encoding="utf-8")
    findings = scan([path])
    assert any(f.cell == 1 and "nested too deeply" in f.what for f in findings), findings
    assert any(f.cell == 3 and "binds the grading name" in f.what for f in findings)


def test_a_fifo_is_reported_not_waited_on(tmp_path: Path) -> None:
    """A FIFO named like a notebook (opening it would wait for a writer forever) is refused at once."""
    import os

    os.mkfifo(tmp_path / "pipe.ipynb")
    (finding,) = scan([tmp_path])
    assert finding.what == (
        "cannot read the notebook: is a named pipe (FIFO); a submitted notebook must be a regular file (or a link to one)"
    )


def test_a_huge_file_is_refused_unread(tmp_path: Path) -> None:
    """A notebook over the size limit is reported with its size, not loaded."""
    from mlsysim_nb.course.submissions import LARGEST_NOTEBOOK

    big = tmp_path / "big.ipynb"
    with big.open("wb") as stream:
        stream.truncate(LARGEST_NOTEBOOK + 1)  # sparse: no disk used
    (finding,) = scan([big])
    assert "a submitted notebook may hold at most" in finding.what


def test_a_students_text_is_escaped_before_the_terminal_sees_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Escape sequences in a cell, a grade id or a file name (clear screen, retitle) are printed escaped."""
    folder = tmp_path / "sub\x1b[2J"
    folder.mkdir()
    path = _submission(folder, "answer_1_1 = (\nrequire = 1  # \x1b]0;pwned\x07")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"][1]["metadata"]["nbgrader"]["grade_id"] = "answer_1_1\x1b[2J\u202e"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert main(["scan-submissions", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "\\x1b[2J" in out
    assert "\\x1b]0;pwned\\x07" in out


def test_a_missing_path_does_not_stop_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One path that does not exist is reported (exit status 2); the paths beside it are still scanned."""
    _submission(tmp_path, "require = print")
    assert main(["scan-submissions", str(tmp_path / "missing"), str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "no such file or folder" in captured.err
    assert "binds the grading name 'require'" in captured.out
