"""A class on one machine: nbgrader's own exchange, an instructor and two students, from release to feedback.

In a temporary directory: the instructor's course directory (with the course's ``nbgrader_config.py``
exactly as ``make assignments`` copies it), the exchange (``Exchange.root``, set the way a hub sets it,
in each person's own config) and two student accounts, each with its own HOME and Jupyter folders. The
instructor generates the assignment with the ``nbgrader`` command in the course directory, then releases
it through nbgrader's API; ``alice`` fetches it and submits every answer, ``bob`` one answer, through the
exchange classes that ``nbgrader fetch_assignment`` and ``nbgrader submit`` run; the instructor collects,
autogrades, generates and releases feedback, and both students fetch it. The scores are the points of the
answered exercises' checks, read from the notebook's own metadata, and no fetched notebook or feedback
file holds a solution, a hidden test or a model answer. One operating-system user plays all three people
(the submission names its student), so collect's cross-check of owners is switched off.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.course import cells
from mlsysim_nb.course.cells import SOLUTION
from mlsysim_nb.course.release import api, course_config, write_course
from mlsysim_nb.course.repository import COURSE_CONFIG
from mlsysim_nb.course.student_version import problems, secrets

ROOT = Path(__file__).resolve().parents[2]

#: the assignment of the round trip: a short notebook with three autograded checks and an explain answer
NAME = "02_precision_and_master_copy"
SOURCE = ROOT / "notebooks" / f"{NAME}.ipynb"
COURSE_ID = "mlsysim_nb"
# nbgrader 0.9.6 triggers SQLAlchemy autoflush warnings inside its own gradebook code, and its API's
# release_feedback passes a misspelt keyword (`authentictor`) that traitlets warns about
pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type:Warning"),
    pytest.mark.filterwarnings(
        "ignore:Passing unrecognized arguments to super.ExchangeReleaseFeedback:DeprecationWarning"
    ),
]


def _require_nbgrader() -> None:
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("nbgrader is not installed (pip install -e '.[course]'), and CI must run this test")
        pytest.skip("nbgrader is not installed (pip install -e '.[course]')")


_cells, _meta, _source = cells.cells, cells.grading, cells.source


class Person:
    """One account: its own HOME and Jupyter folders, and a hub-style config naming the exchange and the course."""

    def __init__(self, home: Path, exchange: Path) -> None:
        self.home = home
        config = home / ".jupyter"
        config.mkdir(parents=True)
        self.config_file = config / "nbgrader_config.py"
        self.config_file.write_text(
            "c = get_config()\n"
            f"c.Exchange.root = {str(exchange)!r}\n"
            f"c.Exchange.cache = {str(home / '.nbgrader_cache')!r}\n"
            f"c.Exchange.assignment_dir = {str(home)!r}\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
            "c.ExchangeCollect.check_owner = False\n",
            encoding="utf-8",
        )
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")},
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_DATA_DIR": str(home / ".local" / "share" / "jupyter"),
            "JUPYTER_RUNTIME_DIR": str(home / ".local" / "share" / "jupyter" / "runtime"),
            # the first gradebook creation runs the `alembic` command of this environment
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }

    def nbgrader(self, *args: str, cwd: Path) -> str:
        """Run one nbgrader command as this person; fail the test with its log if it fails."""
        run = [sys.executable, "-m", "nbgrader", *args]
        result = subprocess.run(run, cwd=cwd, env=self.env, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        return result.stdout + result.stderr

    def exchange_step(self, step: str, assignment: str, **coursedir: str) -> None:
        """One student step of nbgrader's exchange (``FetchAssignment``, ``Submit``, ``FetchFeedback``).

        The same classes ``nbgrader fetch_assignment``, ``submit`` and ``fetch_feedback`` run, with this
        person's config, in this process (each command line would spend seconds importing nbgrader).
        """
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader(self.config_file.name, path=str(self.config_file.parent)).load_config()
        course = CourseDirectory(config=config, root=str(self.home), assignment_id=assignment, **coursedir)
        factory = ExchangeFactory(config=config)
        getattr(factory, step)(coursedir=course, authenticator=Authenticator(config=config), config=config).start()


def _ok(result: dict[str, Any]) -> None:
    assert result["success"], f"{result.get('log', '')}\n{result.get('error', '')}"


#: what Bob adds to each answer cell: the one-line trick that replaced every hidden test's grader
CHEAT = "require = check = lambda *a, **k: None"


def _lesson_names() -> list[str]:
    """Every name the notebook's own cells bind (``s``, ``state``, ``Scenarios``, ...) but the graders'.

    An honest student reuses ``s`` or ``state``; one who rebinds ``require`` is Bob.
    """
    from mlsysim_nb.course.submissions import GRADING_NAMES

    names: set[str] = set()
    for cell in _cells(SOURCE):
        if cell["cell_type"] != "code" or _meta(cell).get("grade"):
            continue
        code = "\n".join(line for line in _source(cell).splitlines() if not line.lstrip().startswith("%"))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return sorted(names - GRADING_NAMES - {n for n in names if n.startswith("answer_")})


def _answer(release: Path, submission: Path, answered: set[str], *, extra: str = "") -> None:
    """Write a submission: the instructor's solution typed into the answer cells named in ``answered``.

    ``extra`` is appended to every code answer cell (and is the whole of an unanswered one, after a wrong
    answer of 1): a student's own lines that a fair grader must be proof against.
    """
    solutions = {_meta(c)["grade_id"]: _source(c) for c in _cells(SOURCE) if _meta(c).get("solution")}
    nb = json.loads(release.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        grade_id = _meta(cell).get("grade_id")
        if grade_id is None or not _meta(cell).get("solution"):
            continue
        if cell["cell_type"] == "code":
            lines = solutions[grade_id].splitlines()
            if grade_id in answered:
                code = "\n".join(line for line in lines if line.strip() not in (SOLUTION.begin, SOLUTION.end))
            else:
                code = f"{grade_id} = 1"
            cell["source"] = f"{code}\n{extra}" if extra else code
        elif grade_id in answered:
            cell["source"] = "Halving the width of the weights leaves the FP32 master copy and Adam's moments."
    submission.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _check_points(answered: set[str]) -> float:
    """Points of the autograded checks whose answers are given, from the instructor notebook's metadata."""
    cells = _cells(SOURCE)
    total = 0.0
    for index, cell in enumerate(cells):
        meta = _meta(cell)
        if meta.get("solution") and cell["cell_type"] == "code" and meta["grade_id"] in answered:
            check = _meta(cells[index + 1])
            assert check["grade"] and not check["solution"], f"{meta['grade_id']} is not followed by its check"
            total += float(check["points"])
    return total


@pytest.fixture(scope="module")
def classroom(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the whole round trip once; return the people, the course directory and what the steps wrote."""
    _require_nbgrader()
    root = tmp_path_factory.mktemp("classroom")
    exchange = root / "exchange"
    exchange.mkdir()
    instructor = Person(root / "instructor", exchange)
    course = instructor.home / "course"
    write_course(course, [SOURCE])
    # the instructor's first step from the course directory, as typed: nbgrader reads the course's config there
    instructor.nbgrader("generate_assignment", NAME, "--force", cwd=course)
    saved = dict(os.environ)
    os.environ.update(instructor.env)  # autograde's kernels find no kernelspec of this machine's user
    try:
        from nbgrader.apps import NbGraderAPI

        config = course_config(course, exchange)
        config.ExchangeCollect.check_owner = False  # one operating-system user plays everyone
        grader = NbGraderAPI(config=config)
        _ok(grader.release_assignment(NAME))
        answers = [_meta(c)["grade_id"] for c in _cells(SOURCE) if _meta(c).get("solution")]
        code_answers = [a for a in answers if a.startswith("answer_")]
        submissions = {"alice": set(answers), "bob": {code_answers[0]}}
        # Alice rebinds every name of the lesson in her answer cells (as students reuse `s` or `state`);
        # Bob answers one exercise, sets the others to 1 and replaces the graders in every answer cell
        extras = {"alice": "\n".join(f"{name} = 0" for name in _lesson_names()), "bob": CHEAT}
        fetched, people = {}, {}
        for student, answered in submissions.items():
            person = people[student] = Person(root / student, exchange)
            person.exchange_step("FetchAssignment", NAME)
            notebook = person.home / NAME / f"{NAME}.ipynb"
            fetched[student] = notebook.read_text(encoding="utf-8")
            _answer(notebook, notebook, answered, extra=extras[student])
            person.exchange_step("Submit", NAME, student_id=student)
        _ok(grader.collect(NAME))
        for student in submissions:
            _ok(grader.autograde(NAME, student, force=True))
            _ok(grader.generate_feedback(NAME, student, force=True))
            _ok(grader.release_feedback(NAME, student))
        for person in people.values():
            person.exchange_step("FetchFeedback", NAME)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {"root": root, "course": course, "submissions": submissions, "fetched": fetched}


def _scores(course: Path) -> dict[str, tuple[float, float]]:
    with api(course).gradebook as gradebook:
        return {s.student.id: (float(s.score), float(s.max_score)) for s in gradebook.assignment_submissions(NAME)}


def test_the_fetched_assignment_is_the_student_version(classroom) -> None:
    """What a student fetches from the exchange holds no solution, hidden test, model answer or output."""
    copy = classroom["root"] / "fetched"
    copy.mkdir()
    for student, text in classroom["fetched"].items():
        (copy / f"{student}.ipynb").write_text(text, encoding="utf-8")
    assert problems([copy], secrets(SOURCE)) == []


def test_scores_are_the_points_of_the_answered_checks(classroom) -> None:
    """Alice (every answer) scores every autograded point, Bob (one answer) that answer's check alone.

    Alice's cells rebind every name of the lesson, Bob's replace ``require`` and ``check``: neither changes a
    grade, because each check cell imports what it grades with and reads nothing but its answer.
    """
    max_score = sum(float(_meta(c)["points"]) for c in _cells(SOURCE) if _meta(c).get("grade"))
    expected = {s: (_check_points(answered), max_score) for s, answered in classroom["submissions"].items()}
    assert _scores(classroom["course"]) == expected
    assert expected["bob"][0] < expected["alice"][0]


def test_feedback_reaches_each_student_and_holds_no_solution(classroom) -> None:
    """Each student fetches one HTML feedback file; none holds a solution, a hidden test or a model answer."""
    root = classroom["root"]
    feedback = {s: sorted((root / s / NAME / "feedback").rglob("*.html")) for s in classroom["submissions"]}
    assert {s: [p.name for p in files] for s, files in feedback.items()} == {
        s: [f"{NAME}.html"] for s in classroom["submissions"]
    }
    known = secrets(SOURCE)
    alice_answers = {s for s in known if "(solution)" in s.origin}  # Alice typed the solutions herself
    assert problems(feedback["alice"], [s for s in known if s not in alice_answers]) == []
    bob_answered = classroom["submissions"]["bob"]
    bob_own = {s for s in known if s.origin.split()[1] in bob_answered and "(solution)" in s.origin}
    assert problems(feedback["bob"], [s for s in known if s not in bob_own]) == []
    assert "Score:" in feedback["bob"][0].read_text(encoding="utf-8")
    for files in feedback.values():  # a failed hidden test shows one line, never its code
        text = files[0].read_text(encoding="utf-8")
        assert "BEGIN HIDDEN" not in text
        assert "with grading()" not in text


def test_the_scan_flags_bob_and_not_alice(classroom) -> None:
    """``scan-submissions`` over the collected submissions names Bob's cells and none of Alice's."""
    from mlsysim_nb.course.submissions import scan

    findings = scan([classroom["course"] / "submitted"])
    assert {f.path.parts[-3] for f in findings} == {"bob"}
    assert all("grading name" in f.what for f in findings)


def test_the_course_config_holds_no_path() -> None:
    """``notebooks/nbgrader_config.py`` sets no directory, gradebook or exchange: each machine supplies its own."""
    tree = ast.parse(COURSE_CONFIG.read_text(encoding="utf-8"))
    paths = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and (n.value.startswith(("/", "~")) or ":\\" in n.value)]  # fmt: skip
    settings = {ast.unparse(t) for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets}
    assert paths == []
    assert settings & {"c.CourseDirectory.root", "c.CourseDirectory.db_url", "c.Exchange.root"} == set()
    assert "c.CourseDirectory.course_id" in settings
