"""Repository-wide collection rules (the package's doctests are collected from ``mlsysim_nb/``).

The measurement lab's PyTorch side (``mlsysim_nb/measure/_layer.py`` and ``_saved.py``) imports torch when
it is imported; without the optional ``measure`` extra those two modules, which hold no doctests, are not
collected. ``tests/measure`` then skips locally and fails in CI, as its own conftest says.
The course's tools (``mlsysim_nb/course/``) need the ``course`` extra, which the ``test`` extra includes; in an
environment without it their doctests are not collected (the tests that import them fail, naming the extra).
``notebooks/nbgrader_config.py`` is nbgrader's configuration, read by nbgrader (which provides its
``get_config``), never imported as a module.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

_TORCH_SIDE = ["mlsysim_nb/measure/_layer.py", "mlsysim_nb/measure/_saved.py"]

collect_ignore = ["notebooks/nbgrader_config.py"]
if importlib.util.find_spec("torch") is None:
    collect_ignore += _TORCH_SIDE
if importlib.util.find_spec("nbgrader") is None:
    collect_ignore += ["mlsysim_nb/course"]


# --- `make test`'s two workers (pytest-xdist, --dist loadfile) ------------------------------------------------

#: the slowest files of ``make test``, slowest first (seconds of one worker, ``--durations=0`` of a whole run on
#: two cores): each worker starts with one of them, so that no long file is left to one worker while the other
#: waits at the end (xdist's own order, most tests first, put these files last). A listed file that is gone
#: fails the run.
SLOWEST_FIRST = (
    "tests/browser/test_jupyterlab.py",  # 180 s: a JupyterLab server, 14 notebooks opened in Chromium
    "tests/binder/test_binder_env.py",  # 175 s: the Binder venv built from the package index
    "tests/book/test_book.py",  # 120 s: the course's site built, then crawled in Chromium
    "tests/notebooks/test_notebooks.py",  # 80 s with ONE_WORKER's two others: notebook 10's code run in-process
    "notebooks/10_measuring_what_the_model_predicts.ipynb",  # 57 s: nbval, PyTorch measuring
    "tests/grading/test_round_trip.py",  # 41 s: nbgrader's exchange, two students autograded
    "tests/grading/test_regrade.py",  # 33 s
    "tests/measure/test_step.py",  # 31 s
    "tests/measure/test_peak.py",  # 30 s
    "tests/measure/test_layer.py",  # 27 s
    "tests/notebooks/test_grading_fairness.py",  # 26 s
    "tests/measure/test_recorded.py",  # 20 s
)

#: files run by one worker: the answer key (release, rubrics) and the hidden-test check run notebook 10's
#: hidden tests, whose measurements each process takes once (``tests/measured_once.py``)
ONE_WORKER = ("tests/notebooks/test_notebooks.py", "tests/grading/test_release.py", "tests/grading/test_rubrics.py")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _rank(item: pytest.Item) -> int:
    file = _file(item.nodeid)
    file = ONE_WORKER[0] if file in ONE_WORKER else file
    return SLOWEST_FIRST.index(file) if file in SLOWEST_FIRST else len(SLOWEST_FIRST)


def pytest_configure(config: pytest.Config) -> None:
    """A file named in ``SLOWEST_FIRST`` or ``ONE_WORKER`` exists (a renamed file must be renamed there too)."""
    root = Path(__file__).parent
    gone = [name for name in (*SLOWEST_FIRST, *ONE_WORKER) if not (root / name).is_file()]
    if gone:
        raise pytest.UsageError(f"conftest.py schedules files that do not exist: {', '.join(gone)}")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker: the slowest files first, in ``SLOWEST_FIRST``'s order, then the rest as collected."""
    if hasattr(config, "workerinput"):
        items.sort(key=_rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` in the collected order (slowest first), the files of ``ONE_WORKER`` as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = _file(nodeid)
            return ONE_WORKER[0] if file in ONE_WORKER else file

        def schedule(self) -> None:
            self.config.option.loadscopereorder = False  # the collected order, slowest first, not most tests first
            super().schedule()

    return SlowestFirst(config, log)
