"""The real nbgrader workflow over every course notebook, in a temporary course with its own gradebook.

Generate the release; autograde the instructor's solution notebooks (full marks on every
autograded cell) and the untouched release (zero marks, no crash); run the release top to
bottom under nbval. Every ``notebooks/NN_*.ipynb`` takes part, so a new notebook is graded
as soon as it exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from make_assignments import api, generate, notebooks  # noqa: E402

SOURCES = notebooks()
# nbgrader 0.9.6 triggers SQLAlchemy autoflush warnings inside its own gradebook code
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:Warning")


def _nbgrader_available() -> bool:
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("nbgrader is not installed (pip install -e '.[test]'), and CI must run this test")
        return False
    return True


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _auto_points(path: Path) -> float:
    """Points of the cells the autograder scores (graded, not solution: the locked test cells)."""
    total = 0.0
    for cell in _cells(path):
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            total += float(meta["points"])
    return total


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated course: its own HOME, Jupyter folders and gradebook; the venv's bin on PATH (alembic)."""
    if not _nbgrader_available():
        pytest.skip("nbgrader is not installed")
    home = tmp_path_factory.mktemp("nbgrader-home")
    saved = dict(os.environ)
    os.environ.update(
        {
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    root = home / "course"
    try:
        generate(root, SOURCES)
        yield root
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _autograde(course: Path, student: str, name: str, notebook: Path) -> tuple[float, float]:
    target = course / "submitted" / student / name
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(notebook, target / f"{name}.ipynb")
    grader = api(course)
    result = grader.autograde(name, student, force=True)
    assert result["success"], result.get("log", "") + str(result.get("error", ""))
    with grader.gradebook as gradebook:
        submission = gradebook.find_submission(name, student)
        return float(submission.score), float(submission.max_score)


def test_there_are_graded_notebooks() -> None:
    """Every course notebook carries autograded cells worth points."""
    assert len(SOURCES) >= 8
    assert [p.stem for p in SOURCES if _auto_points(p) <= 0] == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_release_holds_no_solutions(course: Path, source: Path) -> None:
    """The release keeps the self-checks but none of the solutions, hidden tests or model answers."""
    release = course / "release" / source.stem / source.name
    text = release.read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text
    assert "BEGIN HIDDEN TESTS" not in text
    assert "Model answer" not in text
    assert "check(answer_" in text


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_solutions_get_full_marks(course: Path, source: Path) -> None:
    """The instructor's notebook, autograded, scores every autograded point."""
    score, _ = _autograde(course, "solutions", source.stem, source)
    assert score == _auto_points(source)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_untouched_release_gets_zero(course: Path, source: Path) -> None:
    """The release as handed out, autograded, scores nothing and does not crash."""
    release = course / "release" / source.stem / source.name
    score, max_score = _autograde(course, "untouched", source.stem, release)
    assert (score, max_score > 0) == (0.0, True)


def test_release_runs_under_nbval(course: Path) -> None:
    """Every released notebook runs top to bottom without an error (nbval, strict)."""
    copy = course / "nbval-release"
    shutil.copytree(course / "release", copy)
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(ROOT / "notebooks" / "nbval_sanitize.cfg"), str(copy)]  # fmt: skip
    result = subprocess.run(run, cwd=copy, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-5000:]
    assert " passed" in result.stdout
