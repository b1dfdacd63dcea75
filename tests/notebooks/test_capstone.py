"""The capstone (notebook 12): its worked walk and its worked example quote the package's own numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb import (
    ActivationMemoryScenario,
    Hardware,
    ParallelTrainingScenario,
    Scenarios,
    TrainingStateFitScenario,
    Workloads,
)
from mlsysim_nb.exercises import WrongAnswer

ROOT = Path(__file__).resolve().parents[2]
(CAPSTONE,) = sorted((ROOT / "notebooks").glob("12_*.ipynb"))
PLAN = Scenarios.Llama3_8BZero3On8H100
#: the worked example's run: another model and goal than the walk's (Llama 2 7B, full fine-tune, 2 A100 80GB)
WORKED = ParallelTrainingScenario(
    state=TrainingStateFitScenario(
        workload=Workloads.LLAMA2_7B,
        hardware=Hardware["A100_80GB"],
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
        master_bytes_per_parameter=4,
    ),
    activations=ActivationMemoryScenario(workload=Workloads.LLAMA2_7B, micro_batch=1, seq_len=4096),
    data_parallel=2,
    zero_stage=3,
)


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(CAPSTONE.read_text(encoding="utf-8"))["cells"]
    return cells


def _src(cell: dict[str, Any]) -> str:
    """A cell's text with its line breaks read as spaces, as a reader reads it."""
    return " ".join("".join(cell["source"]).split())


def _manual(grade_id: str) -> str:
    (cell,) = [c for c in _cells() if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    return _src(cell)


def _gb(q: Any) -> str:
    return f"{q.m_as('GB'):.2f} GB ({q.m_as('GiB'):.2f} GiB)"


def test_walk_quotes_the_smallest_zero3_layout() -> None:
    """Three devices at ZeRO stage 3 are the smallest that fit, at 79.33 GB (73.89 GiB), 92 % of the device."""
    fits = [n for n in range(1, 9) if PLAN.variant(data_parallel=n).training_fits]
    assert fits[0] == 3
    three = PLAN.variant(data_parallel=3)
    text = "\n".join(_src(c) for c in _cells() if c["cell_type"] == "markdown")
    assert f"{_gb(three.total_per_device)} each, {three.device_memory_share * 100:.0f} % of the device" in text
    assert f"{three.activations_per_device.m_as('GB'):.2f} GB, are a floor" in text
    assert f"all {PLAN.variant(zero_stage=2).weights_per_device.m_as('GB'):.2f} GB of 16-bit weights" in text


def _solution_namespace() -> dict[str, Any]:
    """The answer cell of exercise 12.4 run as the instructor's notebook runs it."""
    (cell,) = [c for c in _cells() if c["metadata"].get("nbgrader", {}).get("grade_id") == "answer_12_4"]
    namespace: dict[str, Any] = {"Workloads": Workloads, "Hardware": Hardware}
    exec("".join(cell["source"]), namespace)  # noqa: S102 - our own notebook
    return namespace


def test_worked_plan_quotes_its_scenarios() -> None:
    """The worked example's memory, headroom and traffic are the package's, for stage 3 and the rejected stage 2."""
    chosen, rejected = WORKED, WORKED.variant(zero_stage=2)
    capacity = WORKED.hardware.memory.capacity
    assert chosen.training_fits and rejected.training_fits
    assert chosen.state.workload.name != PLAN.state.workload.name  # not the walk's model and goal
    solution = _solution_namespace()
    assert repr(solution["my_run"]) == repr(WORKED)
    assert solution["answer_12_4"] == chosen.device_memory_share
    text = _manual("explain_12_4_plan")
    assert f"= {chosen.state_per_device.m_as('GB'):.2f} GB" in text
    assert f"activations {chosen.activations_per_device.m_as('GB'):.2f} GB: {_gb(chosen.total_per_device)}" in text
    assert f"{chosen.device_memory_share * 100:.0f} % of the 85.9 GB (80 GiB)" in text
    assert f"leaving {(capacity - chosen.total_per_device).m_as('GB'):.1f} GB" in text
    assert chosen.device_memory_share <= 0.9  # the exercise asks for 10 % to spare, and the example meets it
    assert f"({rejected.total_per_device.m_as('GB'):.2f} GB, {rejected.device_memory_share * 100:.0f} %)" in text
    assert f"moves {rejected.data_parallel_traffic.m_as('GB'):.2f} GB" in text
    assert f"stage 3's {chosen.data_parallel_traffic.m_as('GB'):.2f} GB" in text
    assert f"leaves {(capacity - rejected.total_per_device).m_as('GB'):.1f} GB" in text
    assert chosen.zero_traffic_multiple == pytest.approx(1.5) and "1.5 times" in text
    full = WORKED.variant(zero_stage=2, recompute="full")
    assert full.device_memory_share < 0.9
    assert f"({full.total_per_device.m_as('GB'):.2f} GB, {full.device_memory_share * 100:.0f} %)" in text


def _run_check(my_run: Any, answer: Any) -> None:
    """The hidden test of exercise 12.4, run on a given run and answer."""
    (cell,) = [c for c in _cells() if c["metadata"].get("nbgrader", {}).get("grade_id") == "check_12_4"]
    hidden = "".join(cell["source"]).split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    exec(hidden, {"my_run": my_run, "answer_12_4": answer})  # noqa: S102 - our own notebook


def test_the_run_is_graded_from_my_run() -> None:
    """The autograded point: my_run on at most 16 devices within 90 % of a device, and its own share as the answer."""
    _run_check(WORKED, WORKED.device_memory_share)
    _run_check(WORKED, round(WORKED.device_memory_share, 3))  # the share as read from the summary
    too_full = WORKED.variant(zero_stage=2)  # fits, but with less than 10 % to spare
    too_many = PLAN.variant(data_parallel=32)  # fits, on more devices than the budget
    assert too_full.training_fits and too_full.device_memory_share > 0.9
    assert too_many.devices > 16 and too_many.device_memory_share <= 0.9
    for run in (too_full, too_many):
        with pytest.raises(WrongAnswer, match="at most 16 devices and at most 90 %|restates"):
            _run_check(run, run.device_memory_share)
    with pytest.raises(WrongAnswer):
        _run_check(WORKED, 0.5)  # a share that is not the run's
    with pytest.raises(WrongAnswer):
        _run_check(None, WORKED.device_memory_share)  # no run built
    from mlsysim_nb import (
        ActivationMemoryScenario,
        Hardware,
        ParallelTrainingScenario,
        TrainingStateFitScenario,
        Workloads,
    )

    example = ParallelTrainingScenario(  # the prompt's shape of a cell, "a run that is no plan"
        state=TrainingStateFitScenario(workload=Workloads.GPT2_XL, hardware=Hardware["H100"], bytes_per_value=2,
                                       optimizer_bytes_per_parameter=8, master_bytes_per_parameter=4),
        activations=ActivationMemoryScenario(workload=Workloads.GPT2_XL, micro_batch=1, seq_len=1024),
        data_parallel=1,
    )  # fmt: skip
    walk = PLAN.variant(zero_stage=3)  # the walk's own full fine-tune of Llama 3.1 8B
    for copied in (example, walk):
        assert copied.device_memory_share <= 0.9 and copied.devices <= 16  # within the brief, but not a plan
        with pytest.raises(WrongAnswer, match="restates the walk's full fine-tune .* or the example's"):
            _run_check(copied, copied.device_memory_share)
    prompt = next(_src(c) for c in _cells() if _src(c).startswith("### Exercise 12.4"))
    assert "must differ from the walk's" in prompt and "Formgrader" in prompt


@pytest.mark.parametrize(("grade_id", "points"), [("explain_12_4_plan", 3), ("explain_12_4_leaves_out", 1)])
def test_plan_is_graded_by_hand_with_a_rubric(grade_id: str, points: int) -> None:
    """Each hand-graded cell holds a worked example in its solution region; its rubric, for its points, is shown above."""
    cells = _cells()
    (index,) = [i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    cell = cells[index]
    meta = cell["metadata"]["nbgrader"]
    assert (cell["cell_type"], meta["grade"], meta["solution"], meta["points"]) == ("markdown", True, True, points)
    source = _src(cell)
    assert source.startswith("### BEGIN SOLUTION") and source.rstrip().endswith("### END SOLUTION")
    assert "**Worked example.**" in source and "**Rubric" not in source
    assert f"**Rubric.** {points} point" in _src(cells[index - 1])
    if grade_id == "explain_12_4_plan":
        assert "the walk's" in _src(cells[index - 1])  # the rubric gives no points for restating the walk


def test_worked_example_counts_zero3_buffers_as_notebook_9_does() -> None:
    """Up to 2 GB plus 1 GB of buffers: 10**9 gathered and 5 x 10**8 bucketed 16-bit values."""
    assert 10**9 * 2 / 1e9 == 2 and 5 * 10**8 * 2 / 1e9 == 1
    text = _manual("explain_12_4_leaves_out")
    assert "up to 2 GB plus 1 GB of 16-bit buffers per device" in text
    assert f"not in the {WORKED.total_per_device.m_as('GB'):.2f} GB" in text


def test_walk_reads_the_partition_figure() -> None:
    """On 3 devices the state fits from stage 1 on; only stage 3 leaves room for one sequence's activations."""
    capacity = PLAN.hardware.memory.capacity
    stages = {k: PLAN.variant(data_parallel=3, zero_stage=k) for k in (1, 2, 3)}
    assert all(s.fits for s in stages.values())
    assert [s.training_fits for s in stages.values()] == [False, False, True]
    text = " ".join(_src(c) for c in _cells() if c["cell_type"] == "markdown")
    assert f"Stage 2 leaves {(capacity - stages[2].state_per_device).m_as('GB'):.2f} GB beside its state" in text
    assert f"Stage 3 leaves {(capacity - stages[3].state_per_device).m_as('GB'):.2f} GB, enough" in text
    assert stages[2].activations_per_device > capacity - stages[2].state_per_device
