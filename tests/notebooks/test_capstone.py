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
LLAMA2 = Workloads.configuration("llama-2-7b")  # its config.json: the vocabulary sizes the output layer
WORKED = ParallelTrainingScenario(
    state=TrainingStateFitScenario(
        workload=LLAMA2,
        hardware=Hardware["A100_80GB"],
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
        master_bytes_per_parameter=4,
    ),
    activations=ActivationMemoryScenario(workload=LLAMA2, micro_batch=1, seq_len=4096),
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


def test_walk_prints_the_smallest_zero3_layout_and_the_markdown_does_not_give_it() -> None:
    """Three devices at ZeRO stage 3 fit, at 83.71 GB, 97 % of the device (the output layer counted): printed, not told."""
    fits = [n for n in range(1, 9) if PLAN.variant(data_parallel=n).training_fits]
    assert fits[0] == 3
    three = PLAN.variant(data_parallel=3)
    assert round(three.total_per_device.m_as("GB"), 2) == 83.71 and round(100 * three.device_memory_share) == 97
    # the activations: 32 layers at 34.03125 sbh (fused attention) and the output layer, 2·2·sh + 4·s·v
    assert three.activations_per_device.m_as("B") == 32 * 8192 * 4096 * 34.03125 + 4 * 8192 * 4096 + 4 * 8192 * 128_256
    markdown = "\n".join(_src(c) for c in _cells() if c["cell_type"] == "markdown")
    for answer in ("Three devices", "three devices", "83.71", "97 %", "92 %", "79.33"):
        assert answer not in markdown, answer
    (reveal,) = [c for c in _cells() if "reveal(smallest" in "".join(c["source"])]
    assert "best.device_memory_share" in "".join(reveal["source"])  # printed when the student runs the reveal
    printed = "".join("".join(o.get("text", "")) for o in reveal.get("outputs", []))
    if printed:  # the instructor's stored outputs; the release has none
        assert f"3 devices hold {three.total_per_device.to('GB'):.2f~P}" in printed
        assert f"{three.device_memory_share:.0%} of the device" in printed
    layers_only = three.first_stage_layer_activations.m_as("GB")
    output = (three.activations_per_device - three.first_stage_layer_activations).m_as("GB")
    assert f"{layers_only:.2f} GB in the 32 layers and {output:.2f} GB in the output layer" in markdown
    assert f"room for the {three.activations_per_device.m_as('GB'):.2f} GB of" in markdown
    assert f"all {PLAN.variant(zero_stage=2).weights_per_device.m_as('GB'):.2f} GB of 16-bit weights" in markdown


def test_exercises_count_the_output_layer() -> None:
    """12.1 is 8 devices (6 without the output layer), 12.3 a micro-batch of 10 (32 without): the solutions say so."""
    stage1 = [n for n in range(1, 65) if PLAN.variant(data_parallel=n, zero_stage=1).training_fits]
    full = PLAN.variant(recompute="full")
    batches = [b for b in range(1, 257) if full.variant(activations=PLAN.activations.variant(micro_batch=b)).training_fits]
    assert (min(stage1), max(batches)) == (8, 10)
    for grade_id, value in (("answer_12_1", 8), ("answer_12_3", 10)):
        (cell,) = [c for c in _cells() if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
        assert f"{grade_id} = {value}  #" in "".join(cell["source"])


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

    gpt2 = Workloads.configuration("gpt2-xl")
    example = ParallelTrainingScenario(  # the prompt's shape of a cell, "a run that is no plan"
        state=TrainingStateFitScenario(workload=gpt2, hardware=Hardware["H100"], bytes_per_value=2,
                                       optimizer_bytes_per_parameter=8, master_bytes_per_parameter=4),
        activations=ActivationMemoryScenario(workload=gpt2, micro_batch=1, seq_len=1024),
        data_parallel=1,
    )  # fmt: skip
    walk = PLAN.variant(zero_stage=3)  # the walk's own full fine-tune of Llama 3.1 8B
    for copied in (example, walk):
        assert copied.device_memory_share <= 0.9 and copied.devices <= 16  # within the brief, but not a plan
        with pytest.raises(WrongAnswer, match="restates the walk's full fine-tune .* or the example's"):
            _run_check(copied, copied.device_memory_share)
    prompt = next(_src(c) for c in _cells() if _src(c).startswith("### Exercise 12.4"))
    assert "must differ from the walk's" in prompt and "Formgrader" in prompt
    # a model without a vocabulary leaves its output layer out of the graded share: no point, and the prompt says so
    no_vocabulary = WORKED.variant(workload=Workloads.LLAMA2_7B)
    assert no_vocabulary.device_memory_share <= 0.9 and no_vocabulary.devices <= 16
    with pytest.raises(WrongAnswer, match="gives no vocabulary"):
        _run_check(no_vocabulary, no_vocabulary.device_memory_share)
    assert "The model must give its vocabulary" in prompt


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
