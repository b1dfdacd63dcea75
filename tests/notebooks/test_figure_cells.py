"""The figure cells of notebooks 03, 06 and 09: each draws from the model, and the text that reads it agrees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb import Scenarios
from mlsysim_nb.render.figures import pipeline_schedule, pipeline_schedule_for, step_memory

ROOT = Path(__file__).resolve().parents[2]
NB = {p.name[:2]: p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}


def _cells(number: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(NB[number].read_text(encoding="utf-8"))["cells"]
    return cells


def _src(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _figure_cells(number: str, call: str) -> list[dict[str, Any]]:
    return [c for c in _cells(number) if c["cell_type"] == "code" and call in _src(c)]


def _text(number: str) -> str:
    return "\n".join(_src(c) for c in _cells(number) if c["cell_type"] == "markdown")


@pytest.mark.parametrize(
    ("number", "call", "figures"),
    [("03", "step_memory_figure(", 1), ("06", "step_memory_figure(", 1), ("09", "zero_partition_figure(", 1),
     ("09", "pipeline_timeline(", 2)],
)  # fmt: skip
def test_figure_cell_stores_its_figure(number: str, call: str, figures: int) -> None:
    """Each figure cell is executed and stores its PNGs, drawn by the package's figures module."""
    (cell,) = _figure_cells(number, call)
    assert "from mlsysim_nb.render.figures import" in _src(cell)
    pngs = [o for o in cell["outputs"] if "image/png" in o.get("data", {})]
    assert len(pngs) == figures
    assert not any(o["output_type"] == "error" for o in cell["outputs"])


def test_notebook_03_reads_the_models_peak() -> None:
    """66.78 GB (62.20 GiB) at the end of the forward pass is the scenario's training_total; 18 of 24 GB optimizer."""
    run = Scenarios.Gpt2MixedPrecisionTwoMicroBatchesOnH100
    d = step_memory(run)
    text = _text("03")
    assert f"{run.training_total.m_as('GB'):.2f} GB ({run.training_total.m_as('GiB'):.2f} GiB)" in text
    assert "66.78 GB (62.20 GiB)" in text
    assert d.peak == pytest.approx(run.training_total.m_as("byte"))
    assert (run.optimizer_state + run.master_weights).m_as("GB") == pytest.approx(18)
    assert run.total.m_as("GB") == pytest.approx(24)
    assert "Of the 24 GB resident all step" in text
    assert run.gradients.m_as("GB") == pytest.approx(3)
    assert "up to the 3 GB of gradients" in text


def test_notebook_06_reads_the_models_checkpointed_peak() -> None:
    """11.53 GB (10.74 GiB) = 8 boundaries + 6 layers, the scenario's checkpointed_activations."""
    seg = Scenarios.Gpt2XlBatch32SegmentCheckpointed
    assert (seg.checkpoint_segments, seg.segment_layers) == (8, 6)
    peak = step_memory(seg).peak
    assert peak == pytest.approx(seg.checkpointed_activations.m_as("byte"))
    assert f"{peak / 1e9:.2f} GB ({peak / 2**30:.2f} GiB)" == "11.53 GB (10.74 GiB)"
    assert "11.53 GB (10.74 GiB)" in _text("06")


def test_notebook_09_reads_the_timelines() -> None:
    """The bubbles and in-flight peaks the text quotes are the simulation's, and the formula's."""
    text = _text("09")
    one, two = pipeline_schedule(4, 8, 1), pipeline_schedule(4, 8, 2)
    assert one.bubble_fraction == pytest.approx(3 / 8) and "0.375 of the ideal time" in text
    assert two.bubble_fraction == pytest.approx(3 / 16) and "$3/16 = 0.1875$" in text
    assert one.peak_in_flight(0) == 4
    assert two.peak_in_flight(0) == pytest.approx(5.5) and "$11/2 = 5.5$" in text
    table3 = pipeline_schedule_for(Scenarios.Gpt3_175BKorthikantiTable3OnA100, 64)
    assert table3.bubble_fraction == pytest.approx(7 / 192) and "$7/192 = 3.6\\,\\%$" in text
    assert table3.peak_in_flight(0) == pytest.approx(Scenarios.Gpt3_175BKorthikantiTable3OnA100.micro_batches_in_flight)
    assert "$8 + 7/3 = 10.33$" in text


def test_notebook_09_reads_zero_figure_1() -> None:
    """ZeRO's 7.5 B model: 90 GB of optimizer state and master copy, 1.4 GB at stage 1; 14.8 GB saved by 2 and by 3."""
    from mlsysim_nb import ParallelTrainingScenario, TrainingStateFitScenario, Workload

    state = TrainingStateFitScenario(
        workload=Workload(name="7.5B", parameters=7_500_000_000),
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
        master_bytes_per_parameter=4,
    )
    stages = [ParallelTrainingScenario(state=state, data_parallel=64, zero_stage=k).state_per_device for k in range(4)]
    gb = [s.m_as("GB") for s in stages]
    assert gb[0] - gb[1] == pytest.approx(90 - 90 / 64)
    assert round(90 / 64, 1) == 1.4
    assert round(gb[1] - gb[2], 1) == round(gb[2] - gb[3], 1) == 14.8
    text = _text("09")
    assert "down to 1.4 GB per device" in text and "saving 14.8 GB each" in text
