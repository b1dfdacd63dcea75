"""`make test` runs `make lint` first, and the notebook-hygiene check (our own script) fails a bad notebook.

Ruff and mypy are not tested here: they are tested by their own projects, and `make lint` runs them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A scratch project: the real pyproject.toml and check script, and a tiny package."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check_notebooks.py", tmp_path / "scripts" / "check_notebooks.py")
    package = tmp_path / "mlsysim_nb"
    package.mkdir()
    (package / "__init__.py").write_text('"""Scratch package."""\n', encoding="utf-8")
    return tmp_path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_notebook_hygiene_error_fails(scratch: Path) -> None:
    """A notebook run out of order, with an error and widget state, fails the hygiene check."""
    (scratch / "notebooks").mkdir()
    cell = {"cell_type": "code", "execution_count": 3, "id": "a", "metadata": {}, "source": "1/0",
            "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                         "traceback": []}]}  # fmt: skip
    nb = {"cells": [cell], "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}
    (scratch / "notebooks" / "broken.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "scripts/check_notebooks.py", "notebooks"], cwd=scratch, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert "execution_count 3, expected 1" in result.stdout
    assert "ZeroDivisionError" in result.stdout
    assert "widgets" in result.stdout
