"""Installation as written: one repository address, install commands that work in a clone, a lean release.

The package is on no package index, so every ``pip install`` the README and the instructor's guide show
installs from the clone (``.``, ``-e .``, or a wheel built from it) with extras that ``pyproject.toml``
defines. ``pyproject.toml``'s ``[project.urls]`` is the one place that holds the repository's address;
the Binder badge names the same repository. ``make assignments`` and ``make student`` install the
``course`` extra alone, which holds JupyterLab, nbgrader and the notebook libraries the course's tools import, and
nothing heavy.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "docs" / "instructors.md", ROOT / "CONTRIBUTING.md"]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PIP_INSTALL = re.compile(r"pip install ([^`\n]+)")
HEAVY = {"torch", "playwright", "mypy", "ruff", "mlsysim", "hypothesis"}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_one_place_holds_the_repository_address() -> None:
    """``[project.urls]`` has one address, on no placeholder host; the Binder badge names that repository."""
    urls = PYPROJECT["project"]["urls"]
    (address,) = set(urls.values())
    assert "example" not in address and address.startswith("https://github.com/")
    owner_name = address.removeprefix("https://github.com/")
    text = "\n".join(p.read_text(encoding="utf-8") for p in [*DOCS, ROOT / "pyproject.toml"])
    assert "example.invalid" not in text
    badges = re.findall(r"https://mybinder\.org/v2/gh/([^/]+/[^/]+)/", text)
    assert badges and set(badges) == {owner_name}
    github = set(re.findall(r"https://github\.com/([\w.-]+/[\w.-]+)", text))
    assert github == {owner_name}, "another repository address appears in the docs: point it at [project.urls]"


def test_every_install_command_installs_from_the_clone() -> None:
    """Each ``pip install`` shown installs ``.``, an editable ``.`` or a built wheel, with extras that exist."""
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    commands = [(p.name, c.strip()) for p in DOCS for c in PIP_INSTALL.findall(p.read_text(encoding="utf-8"))]
    assert commands
    wrong = []
    for where, command in commands:
        target = command.split()[-1].strip("'\"")
        wanted = set(re.findall(r"\[([^\]]+)\]", target)[0].split(",")) if "[" in target else set()
        local = target.split("[")[0] in (".", "dist/mlsysim_nb-*.whl")
        if not local or not wanted <= extras:
            wrong.append((where, command))
    assert wrong == []


def test_the_release_needs_the_course_extra_alone() -> None:
    """``make assignments`` and ``make student`` install ``.[course]``: JupyterLab, nbgrader and its libraries alone."""
    course = {_requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["course"]}
    assert course == {"jupyterlab", "nbgrader", "nbformat", "nbclient", "jupyter_client", "pyzmq"}
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed; the README's commands need it")
    for target in ("assignments", "student"):
        plan = subprocess.run(
            [make, "-n", "-B", target, "VENV=/nonexistent-venv"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        installs = re.findall(r"pip install [^\n]*-e [^\n]*", plan)
        assert installs and all('-e ".[course]"' in line for line in installs), (target, installs)
    tree = ast.parse((ROOT / "mlsysim_nb" / "course" / "release.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    # the package itself (installed by the same `-e .[course]`) records the self-study answer key
    assert imported - set(sys.stdlib_module_names) == {"nbgrader", "traitlets", "mlsysim_nb"}
    assert HEAVY & course == set()


#: an import's name where its distribution is spelt otherwise
_DISTRIBUTION = {"IPython": "ipython", "xdist": "pytest-xdist"}


def test_every_import_a_test_needs_is_declared() -> None:
    """Each third-party module a test imports is a requirement of the package or of one of its extras.

    A module brought in only by another requirement (mistune by nbconvert, nbformat by nbclient) could leave a
    ``.[test]`` environment without notice; the repository's own scripts and the book's extension are not
    distributions.
    """
    local = {p.stem for folder in ("scripts", "book/_ext") for p in (ROOT / folder).glob("*.py")}
    found: set[str] = set()
    for path in [*(ROOT / "tests").rglob("*.py"), ROOT / "conftest.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    third_party = found - set(sys.stdlib_module_names) - local - {"mlsysim_nb", "tests", "__future__"}
    project = PYPROJECT["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    declared = {_requirement_name(r) for r in requirements}
    assert {"mistune", "pytest", "hypothesis"} <= third_party
    assert {_DISTRIBUTION.get(m, m).lower() for m in third_party} - declared == set()
