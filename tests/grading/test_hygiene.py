"""The notebook-hygiene check (:mod:`mlsysim_nb.course.hygiene`, run by ``make lint``) fails a bad notebook.

Ruff and mypy are not tested here: they are tested by their own projects, and ``make lint`` runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mlsysim_nb.course.hygiene import problems

ROOT = Path(__file__).resolve().parents[2]


def _broken(folder: Path) -> Path:
    """A notebook run out of order (count 3 first), with an error output and widget state."""
    cell = {"cell_type": "code", "execution_count": 3, "id": "a", "metadata": {}, "source": "1/0",
            "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                         "traceback": []}]}  # fmt: skip
    nb = {"cells": [cell], "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "notebooks").mkdir()
    path = folder / "notebooks" / "broken.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_notebook_hygiene_error_fails(tmp_path: Path) -> None:
    """Run as ``make lint`` runs it, from a folder outside the repository: a bad notebook exits 1, naming each fault."""
    _broken(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "mlsysim_nb.course.hygiene", "notebooks"], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert "execution_count 3, expected 1" in result.stdout
    assert "ZeroDivisionError" in result.stdout
    assert "widgets" in result.stdout


def test_fix_strips_the_noisy_metadata_and_nothing_else(tmp_path: Path) -> None:
    """``--fix`` removes the widget state; the out-of-order count and the error stay findings."""
    path = _broken(tmp_path)
    assert any("widgets" in p for p in problems(path, fix=True))
    assert problems(path) == [
        "cell 0: execution_count 3, expected 1 (run top to bottom, fresh kernel)",
        "cell 0: error output ZeroDivisionError: division by zero",
    ]
