"""measure_step's argument checks and its size guard: refused before PyTorch is imported or anything allocated."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from mlsysim_nb.errors import FieldError, MemoryLimitError
from mlsysim_nb.measure.step import measure_step
from mlsysim_nb.measure.step_results import StepMeasurement


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"dtype": "float16"}, "dtype"),
        ({"attention": "flash"}, "attention"),
        ({"optimizer_implementation": "sgd"}, "optimizer_implementation"),
        ({"heads": 3}, "heads"),
        ({"kv_heads": 3}, "kv_heads"),
        ({"accumulation": 0}, "accumulation"),
        ({"seq_len": 10**6}, "seq_len"),
        ({"recompute": "yes"}, "recompute"),
        ({"random_state": -1}, "random_state"),
        ({"memory_limit": "1 kB"}, "memory_limit"),
    ],
)
def test_bad_arguments_name_their_field(kwargs: dict[str, Any], field: str) -> None:
    """Each bad argument is refused with a FieldError naming it."""
    with pytest.raises(FieldError, match=field):
        measure_step("llama", **kwargs)


def test_unknown_model_type() -> None:
    """A model type other than llama or gpt2 is refused, listing both."""
    with pytest.raises(FieldError, match="'llama', 'gpt2'"):
        measure_step("mixtral")


def test_refused_above_the_limit_without_torch() -> None:
    """The default step (a predicted peak of 10.6 MB) is refused under a 4 MiB limit, in a process without torch."""
    code = (
        "import sys\n"
        "from mlsysim_nb.measure.step import measure_step\n"
        "from mlsysim_nb.errors import MemoryLimitError\n"
        "try:\n    measure_step(memory_limit='4 MiB')\nexcept MemoryLimitError as e:\n    print(e)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "predicted peak" in out
    assert out.strip().endswith("False")


def test_refusal_names_the_limit() -> None:
    """The refusal names memory_limit."""
    with pytest.raises(MemoryLimitError, match="memory_limit"):
        measure_step(memory_limit="4 MiB")


def test_measurement_reads_its_timeline() -> None:
    """Peak, phase and categories of a hand-made timeline: 3 events, the peak (7 B) in the backward pass."""
    m = StepMeasurement("llama", {}, (0.0, 5.0, 9.0), {"parameters": (4.0, 4.0, 4.0), "gradients": (0.0, 3.0, 1.0)},
                        (("forward", 0.0, 4.0), ("backward", 4.0, 8.0), ("optimizer step", 8.0, 10.0)))  # fmt: skip
    assert (m.peak, m.peak_time, m.peak_phase) == (7.0, 5.0, "backward")
    assert m.at_peak == {"parameters": 4.0, "gradients": 3.0}
    assert m.largest() == {"parameters": 4.0, "gradients": 3.0}
    assert m.phase_peaks() == {"forward": 4.0, "backward": 7.0, "optimizer step": 5.0}
