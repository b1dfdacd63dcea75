"""The two single-device scenarios (each kind lives in its own module; this one gathers them)."""

from __future__ import annotations

from mlsysim_nb.activation import ActivationMemoryScenario
from mlsysim_nb.training import TrainingStateFitScenario

__all__ = ["ActivationMemoryScenario", "TrainingStateFitScenario"]
