"""``python -m mlsysim_nb regrade``: submissions graded outside their kernels, where no cell can reach the grader.

Each submission runs in a kernel of its own; only its answers leave it, as plain data, and the instructor's
hidden tests grade them in the test's process. The cheats that fooled an in-kernel autograde in the
instructors' reviews (replacing ``require`` through ``vars()``, swapping the module in ``sys.modules``, a float
whose ``__float__`` reads the grader's frame) earn nothing here, and an honest submission keeps every point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.regrade import grade, hidden_tests, regrade

ROOT = Path(__file__).resolve().parents[2]
NAME = "02_precision_and_master_copy"
SOURCE = ROOT / "notebooks" / f"{NAME}.ipynb"
RELEASE = ROOT / "student" / f"{NAME}.ipynb"

#: every trick of the reviews that scored under nbgrader, in one answer cell
CHEATS = """\
import mlsysim_nb.exercises as e; vars(e)['require'] = lambda *a, **k: None
from sys import modules; from types import SimpleNamespace as N; from contextlib import nullcontext as z
modules['mlsysim_nb.exercises'] = N(check=lambda *a, **k: None, require=lambda *a, **k: None, grading=z)
from operator import attrgetter as g; from inspect import currentframe as cf
class Sly(float):
    def __float__(self):
        l = g('f_back.f_back.f_locals')(cf())
        return float(l['expected'].m) if 'expected' in l else 1.0
"""


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _submission(tmp_path: Path, kind: str) -> Path:
    solutions = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in _cells(SOURCE)
        if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {}).get("solution")
    }
    notebook = json.loads(RELEASE.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            honest = "\n".join(line for line in solutions[grade_id].splitlines() if "### " not in line)
            cell["source"] = honest if kind == "honest" else f"{CHEATS}{grade_id} = Sly(7)"
    path = tmp_path / f"{kind}.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_honest_submission_keeps_its_points_and_the_cheats_earn_none(tmp_path: Path) -> None:
    """Regraded outside their kernels: the solutions score every autograded point, the reviews' cheats none."""
    honest, cheat = regrade(SOURCE, [_submission(tmp_path, "honest"), _submission(tmp_path, "cheat")])
    points = sum(t.points for t in hidden_tests(SOURCE))
    assert points > 0
    assert (honest.score, cheat.score) == (points, 0.0)
    assert all(not item.note for item in honest.items)


def test_an_answer_that_is_an_object_is_reported_not_regraded() -> None:
    """The capstone's run (a scenario object) cannot leave its kernel as data: its item says so, with no points."""
    tests = hidden_tests(ROOT / "notebooks" / "12_capstone_plan_a_run.ipynb")
    (run,) = [t for t in tests if "my_run" in t.answers]
    (item,) = grade([run], {"answer_12_4": 0.5})
    assert (item.earned, item.note) == (0.0, "reads an object, not a value")


def test_answers_come_back_as_plain_data() -> None:
    """Quantities, numbers, text and None are rebuilt; anything else arrives as None and earns nothing."""
    tests = hidden_tests(SOURCE)
    assert grade(tests, {}) == [type(r)(r.grade_id, r.points, 0.0) for r in grade(tests, {})]
    assert all(item.earned == 0 for item in grade(tests, {name: None for t in tests for name in t.answers}))


def test_hostile_answers_score_nothing_and_stop_nothing() -> None:
    """What a kernel prints is hostile input: forged keys, huge or explosive text, units pint cannot read."""
    from mlsysim_nb.regrade import checked_answers

    printed = {
        "answer_1_1": {"magnitude": 1.0, "unit": "nonsense"},
        "answer_1_2": "9**9**9**9 GB",
        "answer_1_3": "x" * 10_000,
        "answer_1_4": {"magnitude": float("nan"), "unit": "GB"},
        "not_an_answer": 1,
        "answer_1_5": [1, 2],
    }
    kept = checked_answers(printed)
    assert set(kept) == {"answer_1_1", "answer_1_2"}
    assert checked_answers({"answer_1_1": {"magnitude": 1.0, "unit": "9**9**9"}}) == {}
    assert checked_answers([1]) == {}
    results = grade(hidden_tests(ROOT / "notebooks" / "01_where_memory_goes.ipynb"), kept)
    assert results
    assert all(item.earned == 0 for item in results)


def test_a_submission_that_changes_the_package_stops_the_regrade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A changed file of the package after a submission ran (it rewrote the grader) stops the whole regrade."""
    from mlsysim_nb import regrade as module

    digests = iter(["before", "after"])
    monkeypatch.setattr(module, "_package_digest", lambda: next(digests))
    monkeypatch.setattr(module, "submission_answers", lambda path, timeout: {})
    with pytest.raises(module.PackageChangedError, match=r"changed while .*evil\.ipynb ran"):
        regrade(SOURCE, [tmp_path / "evil.ipynb"])
