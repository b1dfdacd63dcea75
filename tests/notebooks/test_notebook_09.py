"""Notebook 09 (how GPT-3 175B fits): its prose figures are the package's, and its walk ends at Table 3's layout."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb import ActivationMemoryScenario, Hardware, ParallelTrainingScenario, TrainingStateFitScenario, Workloads
from mlsysim_nb.parallel import PARALLEL_CASES

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "09_how_gpt3_fits.ipynb"


def _cells() -> list[dict[str, Any]]:
    return json.loads(PATH.read_text(encoding="utf-8"))["cells"]


def _text(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _prose() -> str:
    return "\n".join(_text(c) for c in _cells() if c["cell_type"] == "markdown")


def _shown(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def _gb(q: Any) -> float:
    return float(q.m_as("GB"))


ONE = ParallelTrainingScenario(
    state=TrainingStateFitScenario(
        workload=Workloads.GPT3_175B,
        hardware=Hardware["A100_80GB"],
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
        master_bytes_per_parameter=4,
    ),
    activations=ActivationMemoryScenario(workload=Workloads.GPT3_175B, micro_batch=1, seq_len=2048),
)
TABLE3 = ONE.variant(tensor_parallel=8, sequence_parallel=True, pipeline_parallel=8)


def test_the_walk_ends_at_the_named_table_3_case() -> None:
    """The notebook's explicit Table 3 layout is the package's named case, byte for byte."""
    named = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    for name in ("state_per_device", "activations_per_device", "total_per_device"):
        assert getattr(TABLE3, name).m_as("byte") == getattr(named, name).m_as("byte")


def test_prose_figures_are_the_models() -> None:
    """Each figure the notebook's text states, recomputed with the package, in the text's own rounding."""
    capacity = Hardware["A100_80GB"].memory.capacity
    devices = math.ceil(float((ONE.state_per_device / capacity).m_as("")))
    expected = {
        "at least 33 devices": devices == 33,
        "2,800 GB (2,608 GiB)": round(ONE.state_per_device.m_as("GB")) == 2800
        and round(ONE.state_per_device.m_as("GiB")) == 2608,
        "$2{,}800/64 = 43.75$ GB": _gb(ONE.variant(data_parallel=64, zero_stage=3).state_per_device) == 43.75,
        "from 31.4 GB to 10.3 GB": (
            round(_gb(ONE.variant(tensor_parallel=8).activations_per_device), 1),
            round(_gb(ONE.variant(tensor_parallel=8, sequence_parallel=True).activations_per_device), 1),
        )
        == (31.4, 10.3),
        "they are 82.14 GB": round(_gb(ONE.activations_per_device), 2) == 82.14,
        "352 MB per device per layer": round(TABLE3.tensor_parallel_traffic_per_layer.m_as("MB")) == 352,
        "the 44 % more first-stage": round(100 * (TABLE3.variant(interleave=2).interleave_factor - 1)) == 44,
        "43.75 GB of state + 10.27 GB of activations = 54.0 GB per device, 62.9 %": (
            _gb(TABLE3.state_per_device),
            round(_gb(TABLE3.activations_per_device), 2),
            round(_gb(TABLE3.total_per_device), 1),
            round(100 * float(TABLE3.device_memory_share), 1),
        )
        == (43.75, 10.27, 54.0, 62.9),
        "1.5 times the data-parallel volume": TABLE3.variant(data_parallel=2, zero_stage=3).zero_traffic_multiple
        == 1.5,
    }
    prose = " ".join(_prose().split())
    for phrase, holds in expected.items():
        assert phrase in prose, phrase
        assert holds, phrase


def test_fit_map_reading() -> None:
    """The text's reading of the fit map: on 64 devices every t x p = 64 layout fits except t = 1; none on 32."""
    for t, p in [(2, 32), (4, 16), (8, 8), (16, 4), (32, 2)]:
        assert TABLE3.variant(tensor_parallel=t, pipeline_parallel=p).fits
    assert not TABLE3.variant(tensor_parallel=1, pipeline_parallel=96).fits
    for t, p in [(1, 32), (2, 16), (4, 8), (8, 4), (16, 2), (32, 1)]:
        assert not TABLE3.variant(tensor_parallel=t, pipeline_parallel=p).fits


def test_the_panel_task_is_reachable() -> None:
    """'Smallest t x p with ZeRO 1 and N_d = 8' is 16, reached by powers of two the controls drag to."""
    start = TABLE3.variant(data_parallel=8, zero_stage=1, tensor_parallel=1, pipeline_parallel=1)
    fitting = [
        t * p
        for t in (1, 2, 4, 8, 16, 32)
        for p in (1, 2, 4, 8, 16, 32)
        if start.variant(tensor_parallel=t, pipeline_parallel=p).fits
    ]
    assert min(fitting) == 16
    assert "find the smallest $t \\cdot p$ that fits" in " ".join(_prose().split())


def test_order_predict_reveal_static_repr_panel() -> None:
    """The guess comes first and shows nothing; the static repr of Table 3 comes before the live panel."""
    code = [c for c in _cells() if c["cell_type"] == "code"]
    sources = [_text(c) for c in code]
    assert "predict(" in sources[1]
    assert re.findall(r"\d", _shown(code[1])) == []
    static = sources.index("table3")
    panel = next(i for i, s in enumerate(sources) if s.startswith("explore("))
    assert static < panel


@pytest.mark.parametrize("kind", ["compute by hand", "predict the change", "design", "explain"])
def test_exercise_kinds(kind: str) -> None:
    """At least one exercise of each of the four kinds."""
    assert f"({kind})" in _prose()


def test_grade_ids_are_this_notebooks() -> None:
    """The nbgrader ids are unique and numbered 9.x, so they cannot clash with another notebook's."""
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in _cells() if "nbgrader" in c["metadata"]]
    assert len(ids) == len(set(ids)) >= 9
    assert all(re.fullmatch(r"(answer|check|explain)_9_\d", i) for i in ids), ids
