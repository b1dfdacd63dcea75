"""Notebook 10: nbgrader metadata as the course uses it, and a run without PyTorch that shows the recording."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mlsysim_nb.measure import INSTALL_HINT
from mlsysim_nb.measure.recorded import HF_LAYERS, HF_RECORDED_LABEL, RECORDED_LABEL, recorded_hf_layer

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
    assert len(ids) == len(set(ids)) == 10


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
    """The explain exercise and the explanation of prediction 10.2 are markdown answer cells, 1 point each, by hand."""
    cells = [c for c in _graded(_cells()) if c["cell_type"] == "markdown"]
    found = [(c["metadata"]["nbgrader"]["grade_id"], c["metadata"]["nbgrader"]["points"]) for c in cells]
    assert found == [("explain_10_2_why", 1), ("explain_10_5", 1)]
    assert all(c["metadata"]["nbgrader"]["solution"] and c["metadata"]["nbgrader"]["grade"] for c in cells)


def _run_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Execute notebook 10 in a fresh kernel in which ``import torch`` fails, as in ``make lab`` without the extra."""
    import nbformat
    from nbclient import NotebookClient

    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None  # import torch fails\n")
    paths = [str(tmp_path), str(NOTEBOOK.parents[1]), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    return nb.cells


def _joined(outputs) -> str:
    """A cell's outputs as one text, however the kernel happened to split its printed stream.

    A stream counts as it was printed (timing may split it into several outputs); anything else is its
    text/plain on a line of its own.
    """
    parts = []
    for o in outputs:
        if o.get("output_type") == "stream":
            parts.append("".join(o.get("text", "")))
        else:
            parts.append("".join(o.get("data", {}).get("text/plain", "")) + "\n")
    return "".join(parts)


def _text(cell) -> str:
    return _joined(cell.outputs)


def test_without_torch_a_student_reads_the_recorded_measurements(tmp_path, monkeypatch):
    """Without PyTorch every cell runs, says how to install it, and shows the stored measurements, labelled recorded."""
    cells = _run_without_torch(tmp_path, monkeypatch)
    code = [c for c in cells if c.cell_type == "code"]
    assert [o for c in code for o in c.outputs if o.output_type == "error"] == []
    first = _text(code[0]).splitlines()
    assert first == [INSTALL_HINT, f"Until then, the cells below show measurements {RECORDED_LABEL}."]
    by_source = {c.source.split(" = ")[0]: _text(c) for c in code}
    layer = by_source["layer"]
    assert layer.startswith(
        "<LayerMeasurement: one GPT layer, s=256, b=2, h=512, a=8, bfloat16, explicit attention, scaled dropout masks, "
        f"{RECORDED_LABEL}: measured 15.73 MB"
    )
    assert "Saved tensors, in forward order:" in layer  # what the text above asks the student to open
    assert by_source["fused"].startswith("<LayerMeasurement: one GPT layer") and RECORDED_LABEL in by_source["fused"]
    assert _text(next(c for c in code if c.source.startswith("states = "))).count(RECORDED_LABEL) == 3
    checks = [_text(c) for c in code if "exercise" in c.metadata.get("tags", [])]
    assert len(checks) == 4
    # the solutions pass: the visible checks record them, the hidden tests grade them against the recording
    assert all(t.startswith("Answer recorded: ") for t in checks)
    stored = {c["id"]: _texts(c) for c in _cells() if c["cell_type"] == "code"}
    hf = _text(next(c for c in code if c.source.startswith("hf_eager = ")))
    assert hf.count(f", {HF_RECORDED_LABEL}>") == 2  # both Hugging Face layers, labelled as recorded
    for cell in code[1:]:  # apart from the labels, the student reads what the measuring run stored
        shown = _text(cell).replace(f", {HF_RECORDED_LABEL}", "").replace(f", {RECORDED_LABEL}", "")
        assert shown == stored[cell.id], cell.source[:60]
    intro = "".join(_cells()[0]["source"])
    assert "**recorded**" in intro
    assert "outputs stored here are real" not in intro


def _texts(cell) -> str:
    return _joined(cell.get("outputs", []))


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


def test_every_hugging_face_layer_notebook_10_measures_is_recorded_and_measured_in_the_stored_outputs():
    """Each measure_hf(...) call asks for a recorded layer; the stored outputs are measurements, not the recording."""
    import re

    cells = [c for c in _cells() if c["cell_type"] == "code"]
    calls = re.findall(r'measure_hf\("(\w+)", dtype="(\w+)", attention="(\w+)"\)', "\n".join(map(_source, cells)))
    assert sorted((m, d, a, False) for m, d, a in calls) == sorted(HF_LAYERS)
    shown = _texts(next(c for c in cells if _source(c).startswith("hf_eager = ")))
    assert shown.count("<HFMeasurement LlamaDecoderLayer (bfloat16, ") == 2
    assert "recorded on" not in shown
    assert shown.count("(within 1 %: True)") == 2


def test_what_notebook_10_says_of_the_llama_layer():
    """The ratios the prose states are those of the measurement, and every differing row is named in the prose."""
    eager, sdpa = (recorded_hf_layer("llama", attention=a) for a in ("eager", "sdpa"))
    assert (f"{eager.measured / eager.paper:.2f}", f"{sdpa.measured / sdpa.paper:.2f}") == ("1.67", "1.49")
    assert eager.ratio == sdpa.ratio == 1
    prose = "\n".join(_source(c) for c in _cells() if c["cell_type"] == "markdown")
    assert "1.67 times with eager attention, 1.49 times with SDPA" in prose
    for named in ("RMSNorm's FP32 copies", "repeat_kv", "The FP32 softmax", "SiLU's output", "The rotary tables"):
        assert f"**{named}.**" in prose
    differing = {r.row.key for r in eager.rows if r.row.note}
    assert differing == {
        "ln1_input", "ln1_rsqrt", "ln1_normalized", "ln2_input", "ln2_rsqrt", "ln2_normalized", "rotary", "k", "v",
        "softmax_output", "softmax_cast", "silu_output",
    }  # fmt: skip
