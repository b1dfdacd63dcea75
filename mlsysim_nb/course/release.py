"""Generate the student release of the course with nbgrader: one assignment per notebook.

Usage: ``python -m mlsysim_nb.course.release [COURSE_DIR] [--student DIR]`` (``make assignments``;
default ``build/course``). Writes an nbgrader course directory: ``nbgrader_config.py`` (a copy of
``notebooks/nbgrader_config.py``), the instructor's ``source/<NN_name>/<NN_name>.ipynb`` (solutions
included) and the generated ``release/<NN_name>/<NN_name>.ipynb`` (solutions, hidden tests, model
answers and outputs removed). With ``--student DIR`` (``make student``) it also copies the release,
one notebook per file, into DIR: the repository's ``student/`` folder, which ``make lab`` and Binder open,
with the answer key beside the notebooks (``answer_key.json``, recorded from the hidden tests by running them
once with a ``require`` that records), so that ``check()`` there tells a reader working alone whether an answer
is within tolerance. The release for a graded class (``release/``, and ``--student DIR --graded``) has no key:
its checks confirm the form alone.
The release itself, which an instructor hands out through nbgrader, leaves out each notebook's last cell
(a link to the public worked solutions, for readers working alone) unless ``--self-study`` is given.
Needs only the package's ``course`` extra (nbgrader and JupyterLab); nbgrader executes nothing here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from mlsysim_nb.answer_key import KEY_FILE
from mlsysim_nb.course import cells
from mlsysim_nb.course.key import write_key
from mlsysim_nb.course.repository import COURSE_CONFIG, ROOT, course_notebooks

__all__ = [
    "SELF_STUDY",
    "STUDENT_README",
    "api",
    "course_config",
    "for_a_graded_class",
    "generate",
    "main",
    "notebooks",
    "write_course",
    "write_student",
]

STUDENT_README = """\
# The course, student version

These notebooks are generated from the instructor's notebooks in `../notebooks/` by `make student`
(nbgrader's `generate_assignment`): the exercises are blank, and no cell holds a stored output.
Run them top to bottom. An exercise's check cell confirms your answer's form (that it is answered,
reads in the unit asked, has the right sign) and, with `answer_key.json` beside the notebooks, whether
its value is within the exercise's tolerance of the memory model's (never how far off, or in which
direction). `hint("N.M")` gives an exercise's hints one at a time, the last one the method. The
worked solutions are in the instructor's version of each notebook (the link is in its last cell).
Do not edit the notebooks here if you want to keep your work across an update of the repository:
copy the folder first, with `answer_key.json`.

**Instructors:** this folder is for self-study. `answer_key.json` holds every autograded value in plain
text, and the public repository and its Binder link hold this folder: a graded class gets nbgrader's release
(`make assignments`) or a class copy without the key
(`python -m mlsysim_nb.course.release ... --student DIR --graded`),
and the regrade (`python -m mlsysim_nb regrade`) gives the grades of record (see `docs/instructors.md`).
"""


#: every course notebook ``NN_*.ipynb``, in course order
notebooks = course_notebooks


def write_course(course: Path, sources: list[Path]) -> list[str]:
    """Create the course directory with its config and one source assignment per notebook."""
    course.mkdir(parents=True, exist_ok=True)
    shutil.copy(COURSE_CONFIG, course / "nbgrader_config.py")
    names = []
    for path in sources:
        folder = course / "source" / path.stem
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        shutil.copy(path, folder / path.name)
        names.append(path.stem)
    return names


def course_config(course: Path, exchange: Path | None = None) -> Any:
    """The course's ``nbgrader_config.py`` as nbgrader reads it, rooted at ``course`` (and an exchange)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader(COURSE_CONFIG.name, path=str(COURSE_CONFIG.parent)).load_config()
    config.CourseDirectory.root = str(course)
    if exchange is not None:
        config.Exchange.root = str(exchange)
    return config


def api(course: Path, exchange: Path | None = None) -> Any:
    """An ``NbGraderAPI`` for the course directory (its own config and gradebook)."""
    from nbgrader.apps import NbGraderAPI

    return NbGraderAPI(config=course_config(course, exchange))


def generate(course: Path, sources: list[Path]) -> list[str]:
    """Write the course and generate every assignment's release; return the assignment names."""
    names = write_course(course, sources)
    grader = api(course)
    for name in names:
        result = grader.generate_assignment(name, force=True)
        if not result["success"]:
            msg = f"nbgrader could not generate {name}:\n{result['log']}\n{result.get('error', '')}"
            raise RuntimeError(msg)
    return names


def write_student(course: Path, names: list[str], folder: Path, *, key: bool = True) -> list[Path]:
    """Copy each generated release into ``folder/<name>.ipynb``; drop notebooks no longer in the course.

    With ``key`` (self-study), the answer key recorded from the source notebooks' hidden tests goes beside them;
    without it (a graded class's copy), any key there is removed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.ipynb"):
        if stale.stem not in names:
            stale.unlink()
    written = []
    for name in names:
        target = folder / f"{name}.ipynb"
        shutil.copy(course / "release" / name / f"{name}.ipynb", target)
        written.append(target)
    (folder / "README.md").write_text(STUDENT_README, encoding="utf-8")
    if key:
        write_key(folder, [course / "source" / name / f"{name}.ipynb" for name in names])
    else:
        (folder / KEY_FILE).unlink(missing_ok=True)
    return written


#: the first words of each notebook's last cell, which links a reader working alone to the public solutions
SELF_STUDY = "**Working alone?**"


def for_a_graded_class(course: Path, names: list[str]) -> None:
    """Drop the self-study cell (a link to the public worked solutions) from each notebook of ``release/``.

    ``student/``, which Binder and ``make lab`` open for readers working alone, keeps it; the release an
    instructor hands out through nbgrader does not.
    """
    for name in names:
        path = course / "release" / name / f"{name}.ipynb"
        notebook = cells.read(path)
        kept = [c for c in notebook["cells"] if not cells.source(c).startswith(SELF_STUDY)]
        if len(kept) != len(notebook["cells"]):
            notebook["cells"] = kept
            path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


_SUMMARY = "Generate the student release of the course with nbgrader: one assignment per notebook."


def main(argv: list[str] | None = None) -> int:
    """Generate the release into the given course directory (default build/course)."""
    parser = argparse.ArgumentParser(prog="python -m mlsysim_nb.course.release", description=_SUMMARY)
    parser.add_argument("course", nargs="?", type=Path, default=ROOT / "build" / "course")
    parser.add_argument("--student", type=Path, help="also copy the release into this folder (make student)")
    parser.add_argument(
        "--self-study", action="store_true", help="keep each notebook's link to the public solutions in release/"
    )
    parser.add_argument(
        "--graded", action="store_true", help="with --student: leave the solutions link out of that folder too"
    )
    args = parser.parse_args(argv)
    course = args.course.resolve()
    names = generate(course, notebooks())
    print(f"released {len(names)} assignments into {course / 'release'}")
    if args.student and not args.graded:  # student/ for readers working alone keeps the solutions link
        written = write_student(course, names, args.student.resolve())
        print(f"wrote {len(written)} student notebooks and their answer key into {args.student}")
    if not args.self_study:
        for_a_graded_class(course, names)
        print("left the link to the public solutions out of the release (--self-study keeps it)")
    if args.student and args.graded:  # a class's own copy: student/ without the link, as the release
        written = write_student(course, names, args.student.resolve(), key=False)
        print(f"wrote {len(written)} student notebooks into {args.student}, without the solutions link or the key")
    return 0


if __name__ == "__main__":
    sys.exit(main())
