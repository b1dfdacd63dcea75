"""The course's tools, for instructors and for this repository's own build: not for the notebooks.

Needs the ``course`` extra (``pip install -e ".[course]"`` in a clone, or ``make course-env``): nbgrader,
nbformat, nbclient and JupyterLab. Importing this package without them raises :class:`CourseExtraError`, which
names the extra; ``import mlsysim_nb`` never imports this package, and the notebooks import nothing from it.

Each tool is a module, run as ``python -m mlsysim_nb.course.<module>`` (the Makefile's targets call them):

* :mod:`~mlsysim_nb.course.cells`: the one reader of notebook cells and of nbgrader's marks (cell metadata, the
  ``### BEGIN SOLUTION`` and ``### BEGIN HIDDEN TESTS`` regions), which every tool and test reads notebooks with;
* :mod:`~mlsysim_nb.course.repository`: the clone the tools work in (``notebooks/``, ``book/``, ``student/``);
* :mod:`~mlsysim_nb.course.release`: the nbgrader release and ``student/`` (``make assignments``, ``make student``);
* :mod:`~mlsysim_nb.course.key`: the answer key recorded from the hidden tests (``student/answer_key.json``);
* :mod:`~mlsysim_nb.course.rubrics`: the graders' sheets (``make rubrics``);
* :mod:`~mlsysim_nb.course.submissions`, :mod:`~mlsysim_nb.course.regrade`,
  :mod:`~mlsysim_nb.course.submission_kernel`, :mod:`~mlsysim_nb.course.gradebook` and
  :mod:`~mlsysim_nb.course.commands`: the scan of submissions and the regrade
  (``python -m mlsysim_nb scan-submissions``, ``python -m mlsysim_nb regrade``);
* :mod:`~mlsysim_nb.course.student_version`: the check that a folder holds nothing of the solutions;
* :mod:`~mlsysim_nb.course.book`: the course's site (``make book``);
* :mod:`~mlsysim_nb.course.execute` and :mod:`~mlsysim_nb.course.hygiene`: executing the notebooks and checking
  their hygiene (``make notebooks``, ``make lint``);
* :mod:`~mlsysim_nb.course.count_runs`: how many times ``make test`` executes each notebook (``make count-runs``).
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRA_MODULES", "INSTALL_HINT", "CourseExtraError", "missing_modules"]

#: the modules the course's tools import, each brought by the ``course`` extra (``pyproject.toml``)
EXTRA_MODULES = ("nbformat", "nbclient", "nbgrader", "jupyter_client", "zmq", "traitlets")

#: what to run when one is missing
INSTALL_HINT = (
    "the course's tools (mlsysim_nb.course: the release, the rubrics, the regrade, the book build) need the "
    "'course' extra: in a clone, pip install -e '.[course]' (or make course-env)"
)


class CourseExtraError(ImportError):
    """The ``course`` extra is not installed: the message names it and the modules that are missing."""


def missing_modules() -> list[str]:
    """The modules of :data:`EXTRA_MODULES` that cannot be imported here (none is imported to find out)."""
    missing = []
    for name in EXTRA_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def _require_extra() -> None:
    missing = missing_modules()
    if missing:
        msg = f"{INSTALL_HINT} (missing here: {', '.join(missing)})"
        raise CourseExtraError(msg, name="mlsysim_nb.course")


_require_extra()
