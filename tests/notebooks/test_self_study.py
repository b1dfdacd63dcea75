"""A reader working alone finds the worked solutions: each notebook's last cell links to its instructor's version.

The link is built from the one place that holds the repository's address (``project.urls`` in
``pyproject.toml``), so moving the repository moves every link with it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from mlsysim_nb.course import cells as nb_cells

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
REPOSITORY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_last_cell_links_to_the_worked_solutions(path: Path) -> None:
    """The last cell says what the checks confirm and links to this notebook in ``notebooks/`` of the repository."""
    last = json.loads(path.read_text(encoding="utf-8"))["cells"][-1]
    text = "".join(last["source"])
    assert last["cell_type"] == "markdown"
    assert text.startswith("**Working alone?**")
    assert f"{REPOSITORY}/blob/main/notebooks/{path.name}" in text
    assert 'hint("N.M")' in text


def _run_first_notebook(folder: Path, answers: dict[str, str], *, key: bool) -> list[dict]:
    """Notebook 1 as a reader working alone runs it: its release in ``folder``, the key beside it or not."""
    import shutil

    import nbformat
    from nbclient import NotebookClient

    from mlsysim_nb.course.key import write_key

    source = ROOT / "notebooks" / "01_where_memory_goes.ipynb"
    notebook = nbformat.read(ROOT / "student" / source.name, as_version=4)
    for cell in notebook.cells:
        grade_id = nb_cells.grade_id(cell)
        if grade_id in answers:
            cell.source = answers[grade_id]
    if key:
        shutil.copy(source, folder / source.name)
        write_key(folder, [folder / source.name])
        (folder / source.name).unlink()
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute(cwd=str(folder))
    return notebook.cells


def _printed(cells: list[dict], grade_id: str) -> str:
    (cell,) = [c for c in cells if nb_cells.grade_id(c) == grade_id]
    return "".join(o.get("text", "") for o in cell.outputs)


def test_working_alone_run_all_says_within_tolerance_and_runs_past_a_malformed_answer(tmp_path: Path) -> None:
    """Working alone, Run All of notebook 1 says within tolerance or not, runs past a malformed answer, never raises."""
    # 1.1: 3.21e9 x (4 + 8) B = 38.52 GB matches; '63 sequences' is told its form; 45 copies is not within tolerance
    # of 3; without the key (a graded class) the same 38.52 gets the form alone
    answers = {
        "answer_1_1": "answer_1_1 = 38.52",
        "answer_1_2": "answer_1_2 = '63 sequences'",
        "answer_1_3": "answer_1_3 = 45",
    }
    cells = _run_first_notebook(tmp_path, answers, key=True)
    assert [o for c in cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"] == []
    assert all(c.execution_count for c in cells if c.cell_type == "code")
    assert "✓ It matches the package's value (within the exercise's tolerance)." in _printed(cells, "check_1_1")
    assert _printed(cells, "check_1_2").startswith("✗ Check the form: could not read your answer '63 sequences'")
    assert "✗ Not quite: not within tolerance of the package's value." in _printed(cells, "check_1_3")
    graded = tmp_path / "graded"
    graded.mkdir()
    alone = _run_first_notebook(graded, {"answer_1_1": "answer_1_1 = 38.52"}, key=False)
    assert _printed(alone, "check_1_1").startswith(
        "Answer recorded: 38.52 GB. It reads in GB and is positive; its value is graded"
    )
