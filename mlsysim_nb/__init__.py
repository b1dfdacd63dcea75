"""mlsysim_nb: the memory of training a neural network, for notebooks.

>>> from mlsysim_nb import Scenarios
>>> Scenarios.Gpt2Fp32AdamOnH100.copies
4.0
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb import kinds
from mlsysim_nb.catalog import Scenarios
from mlsysim_nb.errors import FieldError, FieldUnitError, HardwareFileError, NotApplicableError
from mlsysim_nb.options import set_options
from mlsysim_nb.physics import KORTHIKANTI_PER_TOKEN_BYTES, KORTHIKANTI_SCORE_BYTES
from mlsysim_nb.records.hardware import Hardware, HardwareCatalog, HardwareNode, Memory, load_hardware
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.units import Q_, ureg

__version__ = "0.1.0.dev0"

__all__ = [
    "KORTHIKANTI_PER_TOKEN_BYTES",
    "KORTHIKANTI_SCORE_BYTES",
    "Q_",
    "Comparison",
    "FieldError",
    "FieldUnitError",
    "Hardware",
    "HardwareCatalog",
    "HardwareFileError",
    "HardwareNode",
    "Memory",
    "NotApplicableError",
    "Scenarios",
    "Sweep",
    "Workload",
    "Workloads",
    "calc_activation_memory",
    "calc_checkpoint_memory_units",
    "calc_low_rank_update_params",
    "calc_transformer_decode_flops",
    "calc_transformer_training_flops",
    "compare",
    "explore",
    "load_hardware",
    "set_options",
    "sweep",
    "ureg",
]
# every scenario kind's class, by the name its folder declares (mlsysim_nb/kinds/<kind>/__init__.py)
__all__ += [kind.name for kind in kinds.all_kinds()]


def explore(scenario: Any) -> Any:
    """A live panel of controls, derivation and chart for ``scenario`` (see :mod:`mlsysim_nb.live.explorer`)."""
    from mlsysim_nb.live.explorer import explore as _explore

    return _explore(scenario)


def compare(*scenarios: Any) -> Any:
    """Scenarios side by side, differences from the first marked (see :mod:`mlsysim_nb.live.comparison`)."""
    from mlsysim_nb.live.comparison import compare as _compare

    return _compare(*scenarios)


def sweep(scenario: Any, **axes: Any) -> Any:
    """Evaluate ``scenario`` over a grid of field values, vectorised (see :mod:`mlsysim_nb.live.sweeps`)."""
    from mlsysim_nb.live.sweeps import sweep as _sweep

    return _sweep(scenario, **axes)


#: the reference's helper functions; they load with the two kinds whose equations they evaluate, on first use
_HELPERS = (
    "calc_activation_memory",
    "calc_checkpoint_memory_units",
    "calc_low_rank_update_params",
    "calc_transformer_decode_flops",
    "calc_transformer_training_flops",
)


def __getattr__(name: str) -> Any:
    # the result classes and the helpers load with their modules, on first use (import stays quick)
    if name in _HELPERS:
        from mlsysim_nb import helpers

        return getattr(helpers, name)
    if name == "Sweep":
        from mlsysim_nb.live.sweeps import Sweep

        return Sweep
    if name == "Comparison":
        from mlsysim_nb.live.comparison import Comparison

        return Comparison
    kind = kinds.find(name)  # a scenario kind's class loads, with its equations, on first use
    if kind is not None:
        return kind.load()
    raise AttributeError(f"module 'mlsysim_nb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *(kind.name for kind in kinds.all_kinds())})
