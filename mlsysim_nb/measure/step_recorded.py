"""Steps measured with PyTorch's memory profiler and recorded, so notebook 10 can draw them without PyTorch.

``record_steps()`` (needs PyTorch and transformers) measures each of :data:`STEPS` with ``measure_step`` and
writes ``step_recorded.json`` beside this module: the configuration, the phases, and the timeline by
category, thinned to at most :data:`EVENTS` events (the peak's event always kept), with the date and the
PyTorch version. ``recorded_step(name)`` rebuilds a :class:`StepMeasurement` from it.
``tests/measure/test_step.py`` measures each again and compares, so the recording cannot drift.
Re-record with ``python -m mlsysim_nb.measure.step_recorded``.

>>> small = recorded_step("small model")
>>> small.peak_phase, small.config["vocab"]
('optimizer step', 4000)
"""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.measure.step_results import StepMeasurement

__all__ = ["EVENTS", "PATH", "STEPS", "record_steps", "recorded_label", "recorded_step"]

PATH = Path(__file__).with_name("step_recorded.json")
#: The steps notebook 10 draws: a small model (short context, its weights dominate) and a long-context one.
STEPS: dict[str, dict[str, Any]] = {
    "small model": {"model_type": "llama", "dtype": "float32", "attention": "sdpa", "vocab": 4000, "seq_len": 16,
                    "micro_batch": 1},
    "long context": {"model_type": "llama", "dtype": "bfloat16", "attention": "sdpa", "vocab": 4000, "seq_len": 512,
                     "micro_batch": 1},
}  # fmt: skip
#: The most events a recorded timeline keeps.
EVENTS = 400


def _thin(m: StepMeasurement) -> dict[str, Any]:
    n = len(m.times)
    keep = sorted({*range(0, n, max(1, n // EVENTS)), m.peak_index, n - 1})
    columns = {k: [v[i] for i in keep] for k, v in m.bytes_by_category.items()}
    return {"config": m.config, "times": [m.times[i] for i in keep], "bytes_by_category": columns,
            "phases": [list(p) for p in m.phases]}  # fmt: skip


def record_steps(path: Path = PATH) -> None:
    """Measure every step of :data:`STEPS` and write the recording (needs PyTorch and transformers)."""
    import torch

    from mlsysim_nb.measure.step import measure_step

    data = {
        "recorded": {
            "date": datetime.now(UTC).date().isoformat(),
            "torch": torch.__version__,
            "machine": platform.machine(),
        },
        "steps": {name: _thin(measure_step(**config)) for name, config in STEPS.items()},
    }
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


@cache
def _data() -> dict[str, Any]:
    return dict(json.loads(PATH.read_text(encoding="utf-8")))


def recorded_label() -> str:
    """``recorded on <date> with PyTorch <version> on a CPU``."""
    r = _data()["recorded"]
    return f"recorded on {r['date']} with PyTorch {r['torch']} on a CPU"


def recorded_step(name: str) -> StepMeasurement:
    """The recorded measurement of the step ``name`` (one of :data:`STEPS`), without PyTorch."""
    steps = _data()["steps"]
    if name not in steps:
        raise FieldError("recorded_step", "name", f"must be one of {', '.join(map(repr, steps))}, got {name!r}")
    s = steps[name]
    columns = {k: tuple(float(x) for x in v) for k, v in s["bytes_by_category"].items()}
    phases = tuple((str(label), float(a), float(b)) for label, a, b in s["phases"])
    return StepMeasurement(s["config"]["model_type"], dict(s["config"]), tuple(float(t) for t in s["times"]), columns,
                           phases)  # fmt: skip


if __name__ == "__main__":
    record_steps()
