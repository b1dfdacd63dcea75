"""Build the course as a static site (Sphinx, MyST-NB and sphinx-book-theme) from the notebooks' stored outputs.

Usage: ``python -m mlsysim_nb.course.book [OUT] [--solutions] [--jobs N]`` (``make book``: the student
version into ``build/book/``; ``make book-solutions``: the instructor's version into
``build/book-solutions/``). Nothing is executed: each chapter shows the outputs stored in
``notebooks/``, the ones nbval checks.

The site's source is ``book/`` (``conf.py``, the pages, the stylesheet, the Sphinx extension). This
module lays out a source folder beside OUT (``OUT-src``, generated anew at each build, never committed):

* the pages of ``book/``, each naming the repository's root as a path relative to itself, so the README's
  introduction, its "Differences" section and the instructor's guide are included, not copied;
* one API page per scenario kind the package finds (``api/``), so the reference is a page per kind;
* one chapter per notebook of ``notebooks/`` (``NN_*.ipynb``, in course order), with a first cell linking
  the same notebook on Binder (the student version) and a note before each live panel;
* for the student version (the default) each chapter goes through the removal nbgrader's release
  applies (``ClearSolutions``, ``ClearHiddenTests``, ``ClearMarkScheme``, with the course's own
  configuration), and the outputs of the answer cells and of the graded check cells (which echo the
  answer) are cleared; every other stored output (derivations, charts) is kept;
* no script for the formulas: the site's extension writes them as MathML at build time, so the site
  needs no network and its formulas read without JavaScript.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from mlsysim_nb.course import cells
from mlsysim_nb.course.repository import BOOK, COURSE_CONFIG, NOTEBOOKS, ROOT, course_notebooks

__all__ = [
    "INSTRUCTOR_PAGE",
    "STUDENT_PAGE",
    "binder_folder",
    "binder_link",
    "build",
    "chapter",
    "kind_pages",
    "main",
    "notebooks",
    "prepare",
    "repository",
    "student_version",
]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: the placeholder a page of book/ writes for the repository's root, as a path relative to that page
REPO_PLACEHOLDER = "{{repo}}"
#: the Binder badge's address in the README, the student version's folder on Binder
BINDER_BADGE = re.compile(r"\(https://mybinder\.org/v2/gh/[^)\s]+\)")


def notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """Every course notebook ``NN_*.ipynb``, in course order (the same list as ``make student``'s)."""
    return course_notebooks(folder)


def repository() -> str:
    """The repository's address, from its one place: ``project.urls.Repository`` in pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        url: str = tomllib.load(f)["project"]["urls"]["Repository"]
    return url.rstrip("/")


def binder_folder() -> str:
    """The README's Binder badge address (the student version on Binder); tests/binder checks it names the repo."""
    found = BINDER_BADGE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    if not found:
        msg = "README.md has no Binder badge: the chapters' Binder links are built from it"
        raise ValueError(msg)
    url = str(found[0])[1:-1]
    if "/".join(repository().split("/")[-2:]) not in url:
        msg = f"the README's Binder badge {url} does not name the repository {repository()}"
        raise ValueError(msg)
    return url.rstrip("/")


def binder_link(notebook: str) -> str:
    """The address of one student notebook on Binder, opened in JupyterLab."""
    return f"{binder_folder()}/{notebook}"


def _course_config() -> Any:
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(COURSE_CONFIG.name, path=str(COURSE_CONFIG.parent)).load_config()


def student_version(nb: Any) -> Any:
    """The notebook as students get it, outputs kept except those of answer and graded check cells.

    nbgrader's own preprocessors remove the solutions, the hidden tests and the mark schemes, configured as
    ``make student`` configures them; an answer cell's and a graded cell's output is cleared (a check
    echoes the answer it read).
    """
    from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, ClearSolutions

    config = _course_config()
    nb = copy.deepcopy(nb)
    resources: dict[str, Any] = {}
    for step in (ClearSolutions, ClearHiddenTests, ClearMarkScheme):
        nb, resources = step(config=config).preprocess(nb, resources)
    for cell in nb.cells:
        meta = cells.grading(cell)
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade")):
            cell.outputs = []
            cell.execution_count = None
    return nb


def _has_widget(cell: Any) -> bool:
    return any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))


def _markdown(text: str) -> Any:
    import nbformat

    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["msn_book"] = True  # added by the site, not in the notebook
    return cell


LIVE_NOTE = """\
```{{note}}
**Live panel.** Below is a snapshot of it at the values it opens with: its controls need a running
kernel. Run this chapter on [Binder]({binder}) (the student version, nothing to install), or in a clone
with `make lab`.
```"""

LAUNCH = """\
```{{tip}}
**Run this chapter.** [Open it on Binder]({binder}) (the student version, in JupyterLab), or in a clone
of the [repository]({repo}) with `make lab`. {version}
```"""

PREDICT_NOTE = """\
```{note}
**Predict first.** In the notebook this cell records your guess. Reading here, write your guess down
before you read on: the next section gives the memory model's answer.
```"""

#: what ``reveal()`` adds when no guess was recorded, which a page that records none should not say
NO_GUESS = " (You made no guess: next time commit to one first.)"


def _read_static(cell: Any) -> None:
    """Fit a stored output to a page: no scolding for a guess a page cannot record, and alt text for figures."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            out["text"] = "".join(out["text"]).replace(NO_GUESS, "")
    if cell.cell_type == "code" and any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
        lines = [line for line in cell.source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        call = lines[-1].strip() if lines else "the cell above"
        cell.metadata.setdefault("mystnb", {})["image"] = {"alt": f"Figure drawn by the code above: {call}"}


STUDENT_PAGE = "This page is the student version, with the outputs the course stores: no solutions."
INSTRUCTOR_PAGE = "This page is the instructor's version: solutions, model answers and every stored output."


def chapter(path: Path, *, solutions: bool) -> Any:
    """One notebook as a chapter: the student version (or the instructor's), a Binder link, live-panel notes."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if not solutions:
        nb = student_version(nb)
    binder = binder_link(path.name)
    version = INSTRUCTOR_PAGE if solutions else STUDENT_PAGE
    launch = LAUNCH.format(binder=binder, repo=repository(), version=version)
    cells = []
    for index, cell in enumerate(nb.cells):
        if _has_widget(cell):
            cells.append(_markdown(LIVE_NOTE.format(binder=binder)))
        if cell.cell_type == "code" and "predict(" in cell.source and not solutions:
            cell.outputs = []  # the notebook records a guess here; a page cannot, so it asks for one
            cells += [cell, _markdown(PREDICT_NOTE)]
            continue
        _read_static(cell)
        cells.append(cell)
        if index == 0:
            cells.append(_markdown(launch))
    nb.cells = cells
    return nb


def _page(template: Path, target: Path) -> None:
    """Copy one page of book/, naming the repository root relative to where the page is written."""
    text = template.read_text(encoding="utf-8")
    rel = Path(os.path.relpath(ROOT, target.parent)).as_posix()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace(REPO_PLACEHOLDER, rel), encoding="utf-8")


KIND_PAGE = """\
# {name}

{summary}

```{{eval-rst}}
.. autoclass:: mlsysim_nb.{name}
   :members:
```

## Equations of `{name}`

```{{kind-equations}} {name}
```
"""


def kind_pages(folder: Path) -> list[Path]:
    """One API page per scenario kind the package finds (``api/NN_<Class>.md``, in catalog order)."""
    from mlsysim_nb.kinds import all_kinds

    pages = []
    folder.mkdir(parents=True, exist_ok=True)
    for index, kind in enumerate(all_kinds()):
        cls = kind.load()
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        page = folder / f"{index:02d}_{kind.name}.md"
        page.write_text(KIND_PAGE.format(name=kind.name, summary=summary), encoding="utf-8")
        pages.append(page)
    return pages


def prepare(src: Path, *, solutions: bool) -> list[Path]:
    """Write the site's source folder: the pages and the chapters; return the chapters."""
    import nbformat

    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for template in BOOK.rglob("*.md"):
        _page(template, src / template.relative_to(BOOK))
    kind_pages(src / "api")
    chapters = []
    for path in notebooks():
        target = src / "notebooks" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(chapter(path, solutions=solutions), target)
        chapters.append(target)
    return chapters


def build(out: Path, *, solutions: bool = False, jobs: int = 2, quiet: bool = True) -> float:
    """Build the site into ``out``; return the seconds it took. Sphinx's warnings fail the build."""
    start = time.perf_counter()
    out = out.resolve()
    src = out.with_name(out.name + "-src")
    prepare(src, solutions=solutions)
    if out.exists():
        shutil.rmtree(out)
    env = {**os.environ, "MSN_BOOK_SOLUTIONS": "1" if solutions else "0"}
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(BOOK), "-j", str(jobs), "-W", "--keep-going"]
    cmd += ["-q"] if quiet else []
    cmd += ["-d", str(src / ".doctrees"), str(src), str(out)]
    subprocess.run(cmd, check=True, env=env)  # noqa: S603 - this interpreter's own Sphinx
    return time.perf_counter() - start


_SUMMARY = "Build the course as a static site (Sphinx, MyST-NB, sphinx-book-theme) from the notebooks' stored outputs."


def main(argv: list[str] | None = None) -> int:
    """Build the student version (or the instructor's with --solutions)."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.book", description=_SUMMARY)
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--solutions", action="store_true", help="the instructor's version (solutions kept)")
    parser.add_argument("--jobs", "-j", type=int, default=2)
    args = parser.parse_args(argv)
    out = args.out or ROOT / "build" / ("book-solutions" if args.solutions else "book")
    seconds = build(out, solutions=args.solutions, jobs=args.jobs, quiet=False)
    version = "instructor's version" if args.solutions else "student version"
    print(f"built the {version} into {out} in {seconds:.1f} s: open {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
