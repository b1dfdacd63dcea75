"""What a student gets on Binder and from ``make lab``, and the built wheel in a clean environment.

repo2docker installs ``binder/requirements.txt`` on top of its Python 3.11 base image (jupyterlab 4.4.9,
notebook 7.4.7, jupyter_server 2.17.0) in the repository's checkout, ignoring the root's own files, then
runs ``binder/postBuild`` there. These tests do the same without Docker: a copy of the repository's
files, a fresh virtual environment (``python -m venv``, no system site packages, dependencies from the
package index pip is configured for), the requirements, postBuild. The session's whole folder and the
folder the Binder link opens hold no solution. Then the wheel (``pip wheel . --no-deps``) replaces the
install and, from a folder outside the checkout, renders a scenario and runs one student notebook:
the measurement lab, whose Binder path differs from ``make test``'s (Binder has no PyTorch). nbval
executes the instructor's notebooks once in ``make test``; none is executed again here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from mlsysim_nb.course import cells as nb_cells
from mlsysim_nb.course.student_version import problems
from mlsysim_nb.measure import INSTALL_HINT
from mlsysim_nb.measure.recorded import RECORDED_LABEL

pytestmark = pytest.mark.binder

ROOT = Path(__file__).resolve().parents[2]

REPO2DOCKER_BASE = ["jupyterlab==4.4.9", "notebook==7.4.7", "jupyter_server==2.17.0"]
RUNNER = ["nbclient", "ipykernel"]
#: the student notebook run in the Binder environment: without PyTorch it shows recorded measurements
LAB_NOTEBOOK = "10_measuring_what_the_model_predicts"
BADGE = re.compile(r"\(https://mybinder\.org/v2/gh/[^)\s]+\)")


def _binder_folder() -> str:
    """The folder the README's Binder badge opens (its ``urlpath=lab/tree/<folder>``)."""
    (link,) = BADGE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    (urlpath,) = parse_qs(urlparse(link.strip("()")).query)["urlpath"]
    assert urlpath.startswith("lab/tree/"), urlpath
    return urlpath.removeprefix("lab/tree/")


def _repository_files() -> list[str]:
    """The files a clone holds (tracked, and new ones not ignored), as repo2docker would copy them."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.fail("the Binder test copies the repository's files with git: run it in a clone")
    listed = subprocess.run(
        [git, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f for f in listed.split("\0") if f and (ROOT / f).is_file()]


def _clean_env(cwd: Path) -> dict[str, str]:
    """The test's environment without its virtualenv, import path or Jupyter folders: the venv's Python alone.

    Jupyter's folders go into a temporary ``jupyter`` folder beside ``cwd``'s session, so that no kernelspec
    of this machine's user (one pointing at another Python) is found.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env = {k: v for k, v in env.items() if not k.startswith("JUPYTER")}
    jupyter = next(p for p in (cwd, *cwd.parents) if p.name.startswith("binder")) / "jupyter"
    env.update({f"JUPYTER_{d.upper()}_DIR": str(jupyter / d) for d in ("config", "data", "runtime")})
    return env


def _run(cmd: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=cwd, env=_clean_env(cwd), capture_output=True, text=True, check=False, **kwargs)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A Binder session's folder and venv: the repository copied, the requirements installed, postBuild run."""
    base = tmp_path_factory.mktemp("binder")
    home = base / "home"
    for name in _repository_files():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, home / name)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-compile", *REPO2DOCKER_BASE, *RUNNER, "-r", "binder/requirements.txt"], home)  # fmt: skip
    # repo2docker's checkout is a git clone: its history holds the instructor's notebooks too
    git = ["git", "-c", "user.name=binder", "-c", "user.email=binder@localhost", "-c", "commit.gpgsign=false"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the repository as Binder clones it"]):
        _run([*git, *step], home)
    post_build = home / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs binder/postBuild only if it is executable"
    _run([str(post_build)], home)
    return {"home": home, "python": python, "base": base}


@pytest.fixture(scope="module")
def wheel_installed(session: dict[str, Path]) -> dict[str, Path]:
    """The wheel built from the repository replaces the Binder install; pip finds every dependency satisfied."""
    wheels = session["base"] / "wheels"
    # the wheel is built here, by this environment's hatchling, so the test asks the index for nothing more
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True)
    (wheel,) = wheels.glob("mlsysim_nb-*.whl")
    python = str(session["python"])
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", "--force-reinstall", "--no-deps", str(wheel)], session["base"])
    _run([python, "-m", "pip", "check"], session["base"])
    return {**session, "wheel": wheel}


def test_the_binder_link_opens_the_student_version(session: dict[str, Path]) -> None:
    """The badge opens ``student/``: every course notebook is there, and nothing in the session holds a solution."""
    folder = session["home"] / _binder_folder()
    course = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(p.name for p in folder.glob("*.ipynb")) == course
    assert problems([session["home"]]) == []
    assert not (session["home"] / "notebooks").exists()
    assert not (session["home"] / ".git").exists(), "git checkout would bring the instructor's notebooks back"


def test_make_lab_opens_the_student_version() -> None:
    """``make lab`` serves the folder the Binder link opens, and that folder holds no solution."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed; the README's commands need it")
    plan = subprocess.run([make, "-n", "-s", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    (folder,) = re.findall(r"--notebook-dir=(\S+)", plan)
    assert folder == _binder_folder()
    assert problems([ROOT / folder]) == []


def test_the_wheel_renders_a_scenario_outside_the_checkout(wheel_installed: dict[str, Path]) -> None:
    """From a folder that holds no source, the installed wheel imports, renders a derivation and its chart."""
    code = (
        "import mlsysim_nb, pathlib\n"
        "from mlsysim_nb import Scenarios\n"
        "s = Scenarios.Gpt2Fp32AdamOnH100\n"
        "html = s._repr_html_()\n"
        "print(pathlib.Path(mlsysim_nb.__file__).parent)\n"
        "print(s.total.to('GB'), 'data:image/png;base64' in html, len(html) > 5000)\n"
    )
    out = _run([str(wheel_installed["python"]), "-c", code], wheel_installed["base"]).stdout.splitlines()
    venv = wheel_installed["python"].parents[1]
    assert Path(out[0]).is_relative_to(venv)
    assert out[1] == "24.0 GB True True"


def test_the_measurement_lab_runs_in_binder(wheel_installed: dict[str, Path]) -> None:
    """The student version of notebook 10 runs top to bottom without PyTorch: recorded measurements, reminders."""
    notebook = wheel_installed["home"] / _binder_folder() / f"{LAB_NOTEBOOK}.ipynb"
    executed = wheel_installed["base"] / "executed.ipynb"
    code = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': sys.argv[3]}}).execute()\n"
        "nbformat.write(nb, sys.argv[2])\n"
    )
    python = str(wheel_installed["python"])
    _run([python, "-c", code, str(notebook), str(executed), str(notebook.parent)], wheel_installed["base"])
    cells = [c for c in json.loads(executed.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    texts = ["".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for c in cells for o in c["outputs"]]  # fmt: skip
    assert [o for c in cells for o in c["outputs"] if o["output_type"] == "error"] == []
    assert "torch" not in _run([python, "-m", "pip", "list"], wheel_installed["base"]).stdout.lower()
    assert texts[0].splitlines() == [INSTALL_HINT, f"Until then, the cells below show measurements {RECORDED_LABEL}."]
    assert sum(RECORDED_LABEL in t for t in texts) >= 3
    checks = [c for c in cells if nb_cells.grading(c).get("grade")]
    reminders = ["".join(o.get("text", "")) for c in checks for o in c["outputs"]]
    assert checks and all(r.startswith("Not answered yet") for r in reminders) and len(reminders) == len(checks)
