"""Notebook 10: nbgrader metadata as the course uses it, and a clean run without PyTorch."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import mlsysim_nb.measure
from mlsysim_nb.measure import INSTALL_HINT

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10_measuring_what_the_model_predicts.ipynb"


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _source(cell):
    return "".join(cell["source"])


def _graded(cells):
    return [c for c in cells if "nbgrader" in c["metadata"]]


def test_nbgrader_cells_follow_the_course_schema():
    """Every nbgrader cell has schema 3 and the four flags; grade_ids are unique."""
    graded = _graded(_cells())
    assert all(
        {"schema_version", "grade", "solution", "locked", "grade_id"} <= set(c["metadata"]["nbgrader"]) for c in graded
    )
    assert {c["metadata"]["nbgrader"]["schema_version"] for c in graded} == {3}
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in graded]
    assert len(ids) == len(set(ids)) == 9


def test_answer_cells_hold_a_solution_and_start_unanswered():
    """Answer cells: solution, not graded, tagged exercise, `answer = None` then a solution block."""
    answers = [c for c in _graded(_cells()) if c["metadata"]["nbgrader"]["grade_id"].startswith("answer_")]
    assert len(answers) == 4
    for cell in answers:
        meta = cell["metadata"]["nbgrader"]
        assert (meta["solution"], meta["grade"], meta["locked"]) == (True, False, False)
        assert "exercise" in cell["metadata"]["tags"]
        text = _source(cell)
        assert text.index("\nanswer = None") < text.index("### BEGIN SOLUTION") < text.index("### END SOLUTION")


def test_test_cells_are_locked_with_points_and_fail_unanswered():
    """Autograder cells: graded, locked, with points; their hidden tests refuse an unanswered exercise."""
    tests = [c for c in _graded(_cells()) if c["metadata"]["nbgrader"]["grade_id"].startswith("check_")]
    assert len(tests) == 4
    for cell in tests:
        meta = cell["metadata"]["nbgrader"]
        assert (meta["solution"], meta["grade"], meta["locked"], meta["points"]) == (False, True, True, 1)
        text = _source(cell)
        assert "### BEGIN HIDDEN TESTS" in text
        assert "assert answer is not None" in text


def test_explain_cell_is_graded_by_hand():
    """The explain exercise is a markdown answer cell worth 2 points, graded by hand."""
    (cell,) = [c for c in _graded(_cells()) if c["cell_type"] == "markdown"]
    meta = cell["metadata"]["nbgrader"]
    assert (meta["grade_id"], meta["solution"], meta["grade"], meta["points"]) == ("explain_10_5", True, True, 2)


def test_without_torch_the_notebook_says_how_to_install(monkeypatch):
    """With PyTorch reported missing, every code cell runs and the first prints the install command."""
    monkeypatch.setattr(mlsysim_nb.measure, "torch_available", lambda: False)
    namespace = {"__name__": "__notebook__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in _cells():
            if cell["cell_type"] == "code":
                source = "\n".join(line for line in _source(cell).splitlines() if not line.lstrip().startswith("%"))
                exec(compile(source, NOTEBOOK.name, "exec"), namespace)  # noqa: S102 - our own notebook
    assert out.getvalue().splitlines()[0] == INSTALL_HINT
    assert namespace["layer"] is None
    assert "measured" not in out.getvalue()


@pytest.mark.parametrize("name", ["layer", "fused"])
def test_stored_outputs_are_measurements(name):
    """The stored outputs are real measurements: the layer cells show a LayerMeasurement with its numbers."""
    shown = [
        "".join(o["data"]["text/plain"])
        for c in _cells()
        if c["cell_type"] == "code" and _source(c).startswith(f"{name} = measure_layer(")
        for o in c["outputs"]
        if "data" in o
    ]
    assert len(shown) == 1
    assert shown[0].startswith("<LayerMeasurement: one GPT layer, s=256, b=2, h=512, a=8, bfloat16")
