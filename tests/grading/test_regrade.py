"""``python -m mlsysim_nb regrade``: submissions graded outside their kernels, where no cell can reach the grader.

Each submission runs in a kernel of its own; only its answers leave it, as plain data, and the instructor's
hidden tests grade them in the test's process. The cheats that fooled an in-kernel autograde in the
instructors' reviews (replacing ``require`` through ``vars()``, swapping the module in ``sys.modules``, a float
whose ``__float__`` reads the grader's frame) earn nothing here, and an honest submission keeps every point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlsysim_nb.course import cells
from mlsysim_nb.course.regrade import grade, hidden_tests, regrade

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


def _submission(tmp_path: Path, kind: str) -> Path:
    solutions = {
        cells.grade_id(c): cells.source(c)
        for c in cells.cells(SOURCE)
        if c["cell_type"] == "code" and cells.is_answer(c)
    }
    notebook = cells.read(RELEASE)
    for cell in notebook["cells"]:
        grade_id = cells.grade_id(cell)
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
    (run,) = [t for t in tests if t.grade_id == "check_12_4"]
    (item,) = grade([run], {"answer_12_4": 0.5})
    assert (item.earned, item.note) == (0.0, "not regraded: reads an object, not a value")


def test_answers_come_back_as_plain_data() -> None:
    """Quantities, numbers, text and None are rebuilt; anything else arrives as None and earns nothing."""
    tests = hidden_tests(SOURCE)
    assert grade(tests, {}) == [type(r)(r.grade_id, r.points, 0.0) for r in grade(tests, {})]
    assert all(item.earned == 0 for item in grade(tests, {name: None for t in tests for name in t.answers}))


def test_hostile_answers_score_nothing_and_stop_nothing() -> None:
    """What a kernel prints is hostile input: forged keys, huge or explosive text, units pint cannot read."""
    from mlsysim_nb.course.regrade import checked_answers

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
    from mlsysim_nb.course import regrade as module

    digests = iter(["before", "after"])
    monkeypatch.setattr(module, "_package_digest", lambda: next(digests))
    monkeypatch.setattr(module, "submission_answers", lambda notebook, name, folder, limits: ({}, ""))
    with pytest.raises(module.PackageChangedError, match=r"changed while .*evil\.ipynb ran"):
        regrade(SOURCE, [_minimal(tmp_path / "evil.ipynb", "x = 1")])


# ---- hostile submissions, run in real kernels: each is a short notebook of a few cells -----------------------

#: notebook 2's answers worked by hand: 7e9 x (4 + 8) B = 84 GB; 0.01 x 1,200 s x 5 GB/s = 60 GB over 14 B per
#: parameter = 4.29 billion; bfloat16 weights, gradients and AdamW's two moments, no master: 2 + 2 + 2·2 = 8 B
HONEST = "answer_2_1 = '84 GB'\nanswer_2_2 = 4.29\nanswer_2_3 = 8"
POINTS = sum(t.points for t in hidden_tests(SOURCE))


def _minimal(path: Path, *codes: str) -> Path:
    """A submission of the given code cells (nbgrader's layout when ``path`` is inside one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    code_cells = [
        {"cell_type": "code", "metadata": {}, "source": code, "outputs": [], "execution_count": None} for code in codes
    ]
    path.write_text(
        json.dumps({"cells": code_cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8"
    )
    return path


def _submitted(root: Path, student: str, *codes: str) -> Path:
    return _minimal(root / "submitted" / student / NAME / f"{NAME}.ipynb", *codes)


def test_hand_worked_answers_score_every_point(tmp_path: Path) -> None:
    """The hand-worked answers of notebook 2 score all its autograded points, and the student is the folder's name."""
    (result,) = regrade(SOURCE, [_submitted(tmp_path, "alice", HONEST)])
    assert (result.student, result.score, result.note) == ("alice", POINTS, "")


def test_a_submission_runs_in_a_copy_of_its_folder_and_cannot_rewrite_the_next(tmp_path: Path) -> None:
    """Files written in the working folder land in a temporary copy; rewriting the next student's notebook changes nothing."""
    zoe = _submitted(tmp_path, "zoe", HONEST)
    aaron = _submitted(
        tmp_path,
        "aaron",
        "import pathlib\npathlib.Path('left_behind.txt').write_text('x')\npathlib.Path('../escaped.txt').write_text('x')",
        f"import json, pathlib\npathlib.Path({str(zoe)!r}).write_text(json.dumps({{'cells': [], 'metadata': {{}}, "
        "'nbformat': 4, 'nbformat_minor': 5}))",
        HONEST,
    )
    first, second = regrade(SOURCE, [aaron, zoe])
    assert (first.student, second.student) == ("aaron", "zoe")
    assert second.score == POINTS  # read before aaron's kernel ran
    assert not (aaron.parent / "left_behind.txt").exists()
    assert not (aaron.parent.parent / "escaped.txt").exists()


def test_a_process_left_running_is_ended_with_the_kernels_group(tmp_path: Path) -> None:
    """A `sleep` started in the background by a cell does not outlive the submission's regrade."""
    import os
    import time

    pid_file = tmp_path / "pid"
    code = f"import subprocess, pathlib\np = subprocess.Popen(['sleep', '300'])\npathlib.Path({str(pid_file)!r}).write_text(str(p.pid))"
    (result,) = regrade(SOURCE, [_submitted(tmp_path, "mallory", code, HONEST)])
    assert result.score == POINTS
    pid = int(pid_file.read_text(encoding="utf-8"))
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":  # killed, waiting for init to reap it
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail("the background process outlived the regrade")


def test_the_time_budget_covers_the_whole_submission(tmp_path: Path) -> None:
    """Eight cells of a second each, each within a 2 s cell limit, pass a 4 s budget: stopped, 0 points, and why."""
    from mlsysim_nb.course.regrade import Limits

    path = _submitted(tmp_path, "slow", HONEST, *["import time; time.sleep(1)"] * 8)
    (result,) = regrade(SOURCE, [path], limits=Limits(cell_timeout=2, budget=4))
    assert result.score == 0
    assert result.note == "stopped: past its time budget of 4 s"
    assert all(item.note == result.note for item in result.items)


def test_output_over_the_cap_stops_the_submission(tmp_path: Path) -> None:
    """A 50 MB print is refused unread (one message over the cap), and a flood of small prints passes the total cap."""
    from mlsysim_nb.course.regrade import Limits

    big = _submitted(tmp_path, "big", HONEST, "print('x' * 50_000_000)")
    flood = _submitted(
        tmp_path, "flood", HONEST, "import sys\nfor _ in range(30):\n    print('y' * 2**20); sys.stdout.flush()"
    )
    one, many = regrade(SOURCE, [big, flood], limits=Limits(budget=60))
    assert (one.score, one.note) == (0, "stopped: one output message passed the cap of 8,388,608 bytes")
    assert (many.score, many.note) == (0, "stopped: its output passed the cap of 16,777,216 bytes")


def test_an_unreadable_submission_is_reported_and_the_others_graded(tmp_path: Path) -> None:
    """A FIFO, a file that is not a notebook and a missing file each score 0 with the reason; the honest one is graded."""
    import os

    fifo = tmp_path / "submitted" / "fifo" / NAME / f"{NAME}.ipynb"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    broken = tmp_path / "submitted" / "broken" / NAME / f"{NAME}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"cells": [1]}', encoding="utf-8")
    honest = _submitted(tmp_path, "honest", HONEST)
    results = {r.student: r for r in regrade(SOURCE, [fifo, broken, tmp_path / "missing.ipynb", honest])}
    assert results["fifo"].note.startswith(
        "not read: is a named pipe (FIFO); a submitted notebook must be a regular file"
    )
    assert results["broken"].note == "not read: cell 0 is not an object"
    assert results["missing"].note.startswith("not read: cannot be read (")
    assert results["honest"].score == POINTS


def test_the_gradebook_keeps_what_was_graded_before_a_submission_killed_the_grader(tmp_path: Path) -> None:
    """The CSV has one row per item, appended as each submission is graded: a submission that kills the grader loses nothing before it."""
    import csv
    import os
    import subprocess
    import sys

    first = _submitted(tmp_path, "first", HONEST)
    killer = _submitted(tmp_path, "killer", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    last = _submitted(tmp_path, "last", HONEST)
    book = tmp_path / "grades.csv"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mlsysim_nb", "regrade", "--gradebook", str(book), "--source", str(SOURCE)]
    done = subprocess.run(
        [*command, str(first), str(killer), str(last)], env=env, capture_output=True, timeout=300, check=False
    )
    assert done.returncode == -9
    rows = list(csv.reader(book.read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["student", "notebook", "item", "points", "max points", "note"]
    ids = [t.grade_id for t in hidden_tests(SOURCE)]
    assert rows[1:] == [
        ["first", NAME, i, f"{t.points:g}", f"{t.points:g}", ""] for i, t in zip(ids, hidden_tests(SOURCE), strict=True)
    ]


def test_the_command_writes_the_gradebook_and_escapes_what_it_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A student folder named with an escape sequence is printed escaped; the CSV quotes a name that looks like a formula."""
    from mlsysim_nb.__main__ import main

    monkeypatch.chdir(tmp_path)
    sly = _submitted(tmp_path, "=cmd\x1b[2J", HONEST)
    assert main(["regrade", "--source", str(SOURCE), str(sly)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert f"{POINTS:g} of {POINTS:g}" in out
    text = (tmp_path / f"regrade_{NAME}.csv").read_text(encoding="utf-8")
    assert "\n'=cmd\x1b[2J," in text


@pytest.mark.filterwarnings("ignore:Object of type:Warning")  # nbgrader 0.9.6's own autoflush warnings
@pytest.mark.filterwarnings("ignore:IPython parent:UserWarning")
def test_the_points_go_into_nbgraders_gradebook(tmp_path: Path) -> None:
    """With --nbgrader-db, each item's points are the manual score of its grade in nbgrader's own database."""
    from mlsysim_nb.__main__ import main
    from mlsysim_nb.course.release import generate
    from tests.nbgrader_sandbox import jupyter_home, require_nbgrader

    require_nbgrader()

    with jupyter_home(tmp_path / "home"):
        course = tmp_path / "course"
        generate(course, [SOURCE])
        alice = _submitted(course, "alice", HONEST)
        bob = _submitted(course, "bob", "answer_2_1 = '84 GB'")
        database = course / "gradebook.db"
        assert main(["regrade", "--source", str(SOURCE), "--gradebook", str(tmp_path / "g.csv"),
                     "--nbgrader-db", str(database), str(alice), str(bob)]) == 0  # fmt: skip
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{database}", course_id="mlsysim_nb") as book:
            alice_scores = {g.name: g.score for g in book.find_submission_notebook(NAME, NAME, "alice").grades}
            bob_scores = {g.name: g.score for g in book.find_submission_notebook(NAME, NAME, "bob").grades}
        points = {t.grade_id: t.points for t in hidden_tests(SOURCE)}
        assert {k: alice_scores[k] for k in points} == points
        assert {k: bob_scores[k] for k in points} == {"check_2_1": points["check_2_1"], "check_2_2": 0, "check_2_3": 0}
        assert main(["regrade", "--source", str(ROOT / "notebooks" / "01_where_memory_goes.ipynb"),
                     "--nbgrader-db", str(database), str(alice)]) == 2  # fmt: skip
