"""Build the Binder environment from binder/ alone, the way repo2docker would, and run the notebooks in it.

repo2docker installs ``binder/requirements.txt`` on top of its Python 3.11 base
image (jupyterlab 4.4.9, notebook 7.4.7, jupyter_server 2.17.0) and ignores the
repository root's own files. This test does the same in a fresh virtual
environment (no Docker needed) and runs nbval over every notebook in it, except the
measurement lab, which needs PyTorch (see ``NEEDS_TORCH``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.binder

ROOT = Path(__file__).resolve().parents[2]
REPO2DOCKER_BASE = ["jupyterlab==4.4.9", "notebook==7.4.7", "jupyter_server==2.17.0"]
RUNNER = ["pytest", "nbval", "ipykernel"]
# Binder leaves out PyTorch (the `measure` extra, hundreds of MB): the measurement lab runs outside Binder only.
NEEDS_TORCH = {"10_measuring_what_the_model_predicts.ipynb"}


def test_notebooks_run_in_the_binder_environment(tmp_path: Path) -> None:
    """A venv built from binder/requirements.txt (plus the base image's pins) passes nbval on the notebooks."""
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    install = [python, "-m", "pip", "install", "--quiet", *REPO2DOCKER_BASE, *RUNNER, "-r", "binder/requirements.txt"]
    result = subprocess.run(install, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    copy = tmp_path / "notebooks"
    subprocess.run(["cp", "-r", str(ROOT / "notebooks"), str(copy)], check=True)
    for name in NEEDS_TORCH:
        (copy / name).unlink()
    run = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(copy / "nbval_sanitize.cfg"), str(copy)]  # fmt: skip
    result = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-5000:]
    assert " passed" in result.stdout
