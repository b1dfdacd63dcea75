"""Generate the student release of the course with nbgrader: one assignment per notebook.

Usage: ``python scripts/make_assignments.py [COURSE_DIR]`` (``make assignments``; default
``build/course``). Writes an nbgrader course directory: ``nbgrader_config.py``, the
instructor's ``source/<NN_name>/<NN_name>.ipynb`` (solutions included) and the generated
``release/<NN_name>/<NN_name>.ipynb`` (solutions and hidden tests removed, outputs cleared).
An answer's solution region becomes a comment, not nbgrader's default
``raise NotImplementedError()``, so a released notebook runs top to bottom: an unanswered
exercise prints a reminder, and only the hidden autograder tests fail on it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE_ID = "mlsysim_nb"
CODE_STUB = "# your work here: set the answer variable above"

CONFIG = """# nbgrader configuration of the mlsysim_nb course (written by scripts/make_assignments.py)
c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
c.ClearSolutions.code_stub = {{"python": {stub!r}}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ExecutePreprocessor.timeout = 300
"""


def notebooks(folder: Path = ROOT / "notebooks") -> list[Path]:
    """Every course notebook ``NN_*.ipynb``, in course order."""
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def write_course(course: Path, sources: list[Path]) -> list[str]:
    """Create the course directory with its config and one source assignment per notebook."""
    course.mkdir(parents=True, exist_ok=True)
    config = CONFIG.format(
        course_id=COURSE_ID, root=str(course), db_url=f"sqlite:///{course / 'gradebook.db'}", stub=CODE_STUB
    )
    (course / "nbgrader_config.py").write_text(config, encoding="utf-8")
    names = []
    for path in sources:
        folder = course / "source" / path.stem
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        shutil.copy(path, folder / path.name)
        names.append(path.stem)
    return names


def api(course: Path) -> object:
    """An ``NbGraderAPI`` for the course directory (its own config and gradebook)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.course_id = COURSE_ID
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}"
    config.ClearSolutions.code_stub = {"python": CODE_STUB}
    config.ClearSolutions.text_stub = "YOUR ANSWER HERE"
    config.ExecutePreprocessor.timeout = 300
    config.Exchange.root = str(course / "exchange")  # generate and autograde never use it; a hub sets its own
    return NbGraderAPI(config=config)


def generate(course: Path, sources: list[Path]) -> list[str]:
    """Write the course and generate every assignment's release; return the assignment names."""
    names = write_course(course, sources)
    grader = api(course)
    for name in names:
        result = grader.generate_assignment(name, force=True)  # type: ignore[attr-defined]
        if not result["success"]:
            msg = f"nbgrader could not generate {name}:\n{result['log']}\n{result.get('error', '')}"
            raise RuntimeError(msg)
    return names


def main(argv: list[str] | None = None) -> int:
    """Generate the release into the given course directory (default build/course)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("course", nargs="?", type=Path, default=ROOT / "build" / "course")
    args = parser.parse_args(argv)
    course = args.course.resolve()
    names = generate(course, notebooks())
    print(f"released {len(names)} assignments into {course / 'release'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
