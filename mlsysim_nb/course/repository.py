"""The clone the course's tools work in: its folders, and the course's notebooks in course order.

The tools read the repository, not only the package: the instructor's notebooks (``notebooks/``), the site's
source (``book/``), the student version (``student/``), ``README.md`` and ``pyproject.toml``. ``ROOT`` is the
clone that holds this package (an editable install, or the package on ``PYTHONPATH``); for a package installed
from a wheel, it is the folder the tool runs in, which must then be the clone's root.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["BOOK", "COURSE_CONFIG", "NOTEBOOKS", "ROOT", "STUDENT", "course_notebooks"]


def _root() -> Path:
    clone = Path(__file__).resolve().parents[2]
    return clone if (clone / "notebooks").is_dir() else Path.cwd()


ROOT = _root()
NOTEBOOKS = ROOT / "notebooks"
BOOK = ROOT / "book"
STUDENT = ROOT / "student"
#: the course's nbgrader settings (no paths: each machine supplies its own)
COURSE_CONFIG = NOTEBOOKS / "nbgrader_config.py"


def course_notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """Every course notebook ``NN_*.ipynb`` in ``folder``, in course order."""
    found = sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))
    if not found and not Path(folder).is_dir():
        msg = f"no folder {folder}: the course's tools run in a clone of the repository (its notebooks/)"
        raise FileNotFoundError(msg)
    return found
