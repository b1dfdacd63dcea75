"""Recording the answer key from the hidden tests themselves (:mod:`mlsysim_nb.course.key`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mlsysim_nb.course.key import describe, record
from mlsysim_nb.exercises import WrongAnswer, require

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "notebooks" / "01_where_memory_goes.ipynb"


def test_the_key_is_what_the_hidden_tests_compare_against(tmp_path: Path) -> None:
    """Notebook 1: 1.1 is GPT-2's gradients and Adam state, 3.21e9 x (4 + 8) B = 38.52 GB, within 2 %; 1.3 is 3 copies."""
    shutil.copy(FIRST, tmp_path / FIRST.name)
    key = record(tmp_path / FIRST.name)
    (first,) = key["check_1_1"]
    assert (first.unit, first.rel) == ("GB", 0.02)
    assert first.expected.m_as("GB") == pytest.approx(38.52)
    (copies,) = key["check_1_3"]
    assert copies.expected == pytest.approx(3)  # SGD with momentum: (4 + 4 + 4) B over the 4 B weight
    assert describe(key["check_1_1"]) == "38.52 GB within 2 %"


def test_an_item_that_needs_the_students_object_is_left_out() -> None:
    """The capstone's run (my_run, a scenario the student builds) cannot be keyed; its three other items are."""
    key = record(ROOT / "notebooks" / "12_capstone_plan_a_run.ipynb")
    assert sorted(key) == ["check_12_1", "check_12_2", "check_12_3"]


def test_recording_leaves_the_grading_alone() -> None:
    """After a recording, require() still judges: no mode was switched on that a student's cell could switch on too."""
    record(FIRST)
    with pytest.raises(WrongAnswer):
        require(1, 2)
    from mlsysim_nb import exercises

    assert not any("record" in name for name in vars(exercises))
