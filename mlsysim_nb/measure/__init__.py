"""The measurement lab: the model's predictions against what PyTorch really keeps.

Needs the optional ``measure`` extra (PyTorch, CPU is enough); importing this
package does not import torch, and ``import mlsysim_nb`` never imports this package.

>>> from mlsysim_nb.measure import ITEMS
>>> sum(i.coefficient for i in ITEMS if i.term == "sbh"), sum(i.coefficient for i in ITEMS if i.term == "as2b")
(34, 5)
"""

from __future__ import annotations

from mlsysim_nb.measure.hf import measure_hf_causal_lm, measure_hf_layer
from mlsysim_nb.measure.hf_results import HFMeasurement, RowMeasurement
from mlsysim_nb.measure.items import ITEMS, LineItem
from mlsysim_nb.measure.layer import layer_scenario, measure_layer
from mlsysim_nb.measure.results import ItemRow, LayerMeasurement, SavedTensor, StateRow, TrainingStateMeasurement
from mlsysim_nb.measure.step import measure_step
from mlsysim_nb.measure.step_compare import StepComparison, compare_step
from mlsysim_nb.measure.step_results import StepMeasurement
from mlsysim_nb.measure.torch_extra import (
    INSTALL_HINT,
    require_torch,
    require_transformers,
    torch_available,
    transformers_available,
)
from mlsysim_nb.measure.training import RECIPES, measure_training_state

__all__ = [
    "INSTALL_HINT",
    "ITEMS",
    "RECIPES",
    "HFMeasurement",
    "ItemRow",
    "LayerMeasurement",
    "LineItem",
    "RowMeasurement",
    "SavedTensor",
    "StateRow",
    "StepComparison",
    "StepMeasurement",
    "TrainingStateMeasurement",
    "compare_step",
    "layer_scenario",
    "measure_hf_causal_lm",
    "measure_hf_layer",
    "measure_layer",
    "measure_step",
    "measure_training_state",
    "require_torch",
    "require_transformers",
    "torch_available",
    "transformers_available",
]
