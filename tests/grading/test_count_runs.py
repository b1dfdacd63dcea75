"""``make count-runs`` (:mod:`mlsysim_nb.course.count_runs`): a kernel's cells are counted against the right notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from mlsysim_nb.course.count_runs import STARTUP, count


def _notebook(path: Path, sources: list[str], graded: int | None = None) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if graded is not None:
        nb.cells[graded].metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "g", "locked": True}
    nbformat.write(nb, path)


def test_a_kernel_counts_for_the_notebook_whose_own_cells_it_ran(tmp_path, monkeypatch) -> None:
    """A kernel that ran 01's cells (with a changed graded cell, as a submission) counts once for 01, never for 02."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shared = "x = 1"  # in both notebooks: evidence of neither
    _notebook(folder / "01_a.ipynb", [shared, "y = x + 1", "answer = None", "z = y * 3"], graded=2)
    _notebook(folder / "02_b.ipynb", [shared, "w = x - 1"])
    ipython_dir, log_dir = tmp_path / "ipython", tmp_path / "log"
    (ipython_dir / "profile_default" / "startup").mkdir(parents=True)
    (ipython_dir / "profile_default" / "startup" / "00-count-runs.py").write_text(STARTUP, encoding="utf-8")
    log_dir.mkdir()
    monkeypatch.setenv("IPYTHONDIR", str(ipython_dir))
    monkeypatch.setenv("MLSYSIM_NB_RUN_LOG", str(log_dir))
    submission = nbformat.read(folder / "01_a.ipynb", as_version=4)
    submission.cells[2].source = "answer = 42"
    NotebookClient(submission, timeout=60, kernel_name="python3").execute()
    first_cells = nbformat.read(folder / "01_a.ipynb", as_version=4)
    first_cells.cells = first_cells.cells[:2]
    NotebookClient(first_cells, timeout=60, kernel_name="python3").execute()
    assert len(list(log_dir.glob("*.log"))) == 2
    assert count(log_dir, folder) == {"01_a": (2, 1), "02_b": (0, 0)}
