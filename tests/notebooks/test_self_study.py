"""A reader working alone finds the worked solutions: each notebook's last cell links to its instructor's version.

The link is built from the one place that holds the repository's address (``project.urls`` in
``pyproject.toml``), so moving the repository moves every link with it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

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
