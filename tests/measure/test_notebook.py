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
    """Answer cells: solution, not graded, `answer_10_N = None` first, then a solution block."""
    answers = [c for c in _graded(_cells()) if c["metadata"]["nbgrader"]["grade_id"].startswith("answer_")]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in answers] == [f"answer_10_{n}" for n in range(1, 5)]
    for n, cell in enumerate(answers, start=1):
        meta = cell["metadata"]["nbgrader"]
        assert (meta["solution"], meta["grade"], meta["locked"]) == (True, False, False)
        text = _source(cell)
        assert text.startswith(f"answer_10_{n} = None")
        assert text.index("### BEGIN SOLUTION") < text.index("### END SOLUTION")


def test_test_cells_are_locked_with_points_and_require_their_answer():
    """Check cells: tagged exercise, graded, locked, 1 point; self-check with hints, hidden `require` of their answer."""
    tests = [c for c in _graded(_cells()) if c["metadata"]["nbgrader"]["grade_id"].startswith("check_")]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in tests] == [f"check_10_{n}" for n in range(1, 5)]
    for n, cell in enumerate(tests, start=1):
        meta = cell["metadata"]["nbgrader"]
        assert (meta["solution"], meta["grade"], meta["locked"], meta["points"]) == (False, True, True, 1)
        assert "exercise" in cell["metadata"]["tags"]
        text = _source(cell)
        hidden = text[text.index("### BEGIN HIDDEN TESTS") : text.index("### END HIDDEN TESTS")]
        found = (f"check(answer_10_{n}," in text, f'label="10.{n}"' in text, "hints=[" in text)
        assert (found, f"require(answer_10_{n}," in hidden) == ((True, True, True), True)


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
