"""The GPU step script's CPU fallback: the same step measured by PyTorch's CPU profiler, as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mlsysim_nb.measure.step_gpu import main

pytestmark = pytest.mark.measure


def test_cpu_fallback_reports_the_step(torch: Any, transformers: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """--cpu: the measured peak within 3 % of the predicted one; no reserved or driver figure on the CPU."""
    assert main(["--cpu", "--dtype", "float32", "--vocab", "2000", "--seq-len", "32", "--layers", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["device"] == "cpu"
    assert (report["reserved_peak"], report["driver_used"]) == (None, None)
    assert report["allocated_peak"] == pytest.approx(report["predicted_peak"], rel=0.03)
    assert report["predicted_phase"] == "optimizer step"
