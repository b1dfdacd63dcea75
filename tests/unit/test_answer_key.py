"""The answer key as the self-study ``check()`` reads it beside the notebooks (recorded by ``mlsysim_nb.course.key``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlsysim_nb.answer_key import KEY_FILE, lookup
from mlsysim_nb.course.key import write_key
from mlsysim_nb.exercises import check

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "notebooks" / "01_where_memory_goes.ipynb"


@pytest.fixture
def self_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of notebook 1 with its key beside it, and the kernel's folder (cwd) there."""
    shutil.copy(FIRST, tmp_path / FIRST.name)
    write_key(tmp_path, [tmp_path / FIRST.name])
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_working_alone_the_check_says_within_tolerance_or_not(
    self_study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the key beside the notebook: 38.5 GB matches 38.52 GB; 45 GB and 30 GB get the same words, no number."""
    check(38.5, unit="GB", label="1.1")
    assert (
        capsys.readouterr().out
        == "Answer recorded: 38.5 GB. ✓ It matches the package's value (within the exercise's tolerance).\n"
    )
    check(45, unit="GB", label="1.1", hints=["a nudge", "the method"])
    high = capsys.readouterr().out
    check(30, unit="GB", label="1.1", hints=["a nudge", "the method"])
    low = capsys.readouterr().out
    assert high.replace("45", "X") == low.replace("30", "X")
    assert "✗ Not quite: not within tolerance of the package's value. Hint: a nudge" in high
    assert "38" not in high + low
    assert "above" not in high and "below" not in low


def test_working_alone_a_slip_of_unit_is_named(self_study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """38.52e9 where GB are asked is told it reads as bytes, as the graded feedback tells it."""
    check(38.52e9, unit="GB", label="1.1")
    assert "a slip of unit: the number reads as the answer in bytes, but it is asked in GB" in capsys.readouterr().out


def test_a_whole_number_matches_exactly(self_study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An exercise graded exactly says so."""
    (tmp := self_study / KEY_FILE).write_text(
        json.dumps({"notebooks": {"x": {"check_7_1": [{"expected": 63, "unit": None, "rel": 0, "accept": []}]}}}),
        encoding="utf-8",
    )
    assert tmp.is_file()
    check(63, whole=True, label="7.1")
    assert capsys.readouterr().out == "Answer recorded: 63. ✓ It matches the package's value (exactly).\n"


def test_without_a_key_the_check_confirms_the_form_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The graded release and the instructor's notebooks have no key: the check says nothing of the value."""
    monkeypatch.chdir(tmp_path)
    check(40, unit="GB", label="1.1")
    assert capsys.readouterr().out == (
        "Answer recorded: 40 GB. It reads in GB and is positive; its value is graded when the notebook is graded.\n"
    )


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[" * 100_000,
        json.dumps({"notebooks": {"x": {"check_1_1": [{"expected": "9**9**9"}]}}}),
        json.dumps([1]),
    ],
)
def test_a_broken_key_is_no_key(tmp_path: Path, content: str) -> None:
    """A key this package did not write (broken, deeply nested, of another shape) is read as no key, never an error."""
    (tmp_path / KEY_FILE).write_text(content, encoding="utf-8")
    assert lookup("1.1", tmp_path) is None


def test_a_key_that_is_a_fifo_is_no_key(tmp_path: Path) -> None:
    """The key is read only if it is a regular file: a FIFO in its place does not hang the check."""
    import os

    os.mkfifo(tmp_path / KEY_FILE)
    assert lookup("1.1", tmp_path) is None
