"""A sandbox for running nbgrader inside a test: nbgrader itself, and Jupyter folders of the test's own.

A user-level kernelspec that points at another Python makes autograde's kernel die, and nbgrader's first
gradebook runs ``alembic`` from ``PATH``: so each course gets its own HOME and Jupyter folders, with this
venv's ``bin`` first on ``PATH``. Used by ``tests/grading`` and ``tests/notebooks``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def require_nbgrader() -> None:
    """Skip without nbgrader, except in CI, where a missing nbgrader fails the test."""
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("nbgrader is not installed (pip install -e '.[course]'), and CI must run this test")
        pytest.skip("nbgrader is not installed (pip install -e '.[course]')")


@contextmanager
def jupyter_home(home: Path, *, package_on_path: bool = False) -> Iterator[Path]:
    """``home`` as HOME with its own Jupyter folders while the block runs; the environment is restored after.

    ``package_on_path`` puts this checkout on ``PYTHONPATH``, so that a kernel imports the package under test.
    """
    saved = dict(os.environ)
    os.environ.update(
        {
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # alembic
        }
    )
    if package_on_path:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), saved.get("PYTHONPATH", "")])
    try:
        yield home
    finally:
        os.environ.clear()
        os.environ.update(saved)
