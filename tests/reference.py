"""Build the reference implementation's (mlsysim 0.3.0) inputs from ours, and compare outputs."""

from __future__ import annotations

import importlib
import math
import os
import warnings
from typing import Any

import pytest

from mlsysim_nb import ActivationMemoryScenario, HardwareNode, TrainingStateFitScenario, Workload, ureg

warnings.filterwarnings("ignore", module="mlsysim")

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    # in CI a missing reference is an error, never a skip that hides every differential test
    ref = importlib.import_module("mlsysim")
else:
    ref = pytest.importorskip("mlsysim", reason="the reference implementation mlsysim==0.3.0 (test extra)")

from mlsysim.engine import scenario_types as _ref_types  # noqa: E402
from mlsysim.hardware import types as _ref_hw  # noqa: E402
from mlsysim.models import types as _ref_models  # noqa: E402

RQ = ref.ureg.Quantity

TRAINING_PROPERTIES = [
    "weights",
    "gradients",
    "optimizer_state",
    "optimizer_values_per_parameter",
    "master_weights",
    "bytes_per_trained_parameter",
    "adapter_count",
    "adapter_state",
    "adapter_weights",
    "adapter_gradients",
    "adapter_master",
    "adapter_optimizer_state",
    "adapter_fraction",
    "full_state",
    "adapter_saved",
    "adapter_reduction",
    "adapter_kept_share",
    "frozen_share",
    "adapter_reduction_ceiling",
    "total",
    "copies",
    "training_total",
    "training_copies",
    "fits",
    "capacity_share",
    "training_capacity_multiple",
    "resident_batch_limit",
    "max_resident_batch",
    "checkpoint",
    "update_bytes_per_parameter",
    "update_traffic",
    "update_time",
]
ACTIVATION_PROPERTIES = [
    "sequence",
    "per_token_bytes_coefficient",
    "score_bytes_coefficient",
    "score_share",
    "per_sequence_activations",
    "segment_layers",
    "segment_input",
    "segment_inputs",
    "live_segment",
    "checkpointed_activations",
    "per_token_activations",
    "score_activations",
    "projection_activations_per_layer",
    "ffn_activations_per_layer",
    "score_activations_per_layer",
    "line_items_per_layer",
    "line_items_total",
    "forward_equivalents",
    "recompute_forward_equivalents",
    "recompute_overhead",
]


def ref_workload(w: Workload) -> Any:
    """The reference's workload for ours."""
    params = RQ(float(w.parameters.magnitude), "param")
    if w.layers is None:
        return _ref_models.Workload(name=w.name, architecture="CNN", parameters=params)
    return _ref_models.TransformerWorkload(
        name=w.name,
        architecture="Transformer",
        parameters=params,
        layers=w.layers,
        hidden_dim=w.hidden_dim,
        heads=w.heads,
        kv_heads=w.kv_heads,
        context_length=w.context_length,
    )


def ref_hardware(h: HardwareNode | None) -> Any:
    """The reference's hardware node for ours (capacity and bandwidth are what the scenarios read)."""
    if h is None:
        return None
    return _ref_hw.HardwareNode(
        name=h.name,
        release_year=h.release_year or 2024,
        compute=_ref_hw.ComputeCore(peak_flops=RQ(1, "TFLOPs/s")),
        memory=_ref_hw.MemoryHierarchy(
            capacity=RQ(h.memory.capacity.magnitude, str(h.memory.capacity.units)),
            bandwidth=RQ(h.memory.bandwidth.m_as("byte/second"), "byte/second"),
        ),
    )


def _bytes(q: Any) -> Any:
    return None if q is None else RQ(q.m_as("byte"), "byte")


def ref_scenario(s: Any) -> Any:
    """The reference scenario with the same inputs as ``s``."""
    if isinstance(s, TrainingStateFitScenario):
        return _ref_types.TrainingStateFitScenario(
            name=s.name or "hypothesis",
            description=s.description or "hypothesis",
            workload=ref_workload(s.workload),
            hardware=ref_hardware(s.hardware),
            bytes_per_value=_bytes(s.bytes_per_value),
            optimizer_bytes_per_parameter=_bytes(s.optimizer_bytes_per_parameter),
            master_bytes_per_parameter=_bytes(s.master_bytes_per_parameter),
            batch_size=s.batch_size,
            activations=_bytes(s.activations),
            adapter_parameters=s.adapter_parameters,
            adapter_rank=s.adapter_rank,
            adapted_matrices=s.adapted_matrices,
            adapter_in_dim=s.adapter_in_dim,
            adapter_out_dim=s.adapter_out_dim,
        )
    assert isinstance(s, ActivationMemoryScenario)
    return _ref_types.ActivationMemoryScenario(
        name=s.name or "hypothesis",
        description=s.description or "hypothesis",
        workload=ref_workload(s.workload),
        micro_batch=s.micro_batch,
        seq_len=s.seq_len,
        precision_bytes=s.precision_bytes,
        normalization_per_layer=_bytes(s.normalization_per_layer),
        ffn_multiple=s.ffn_multiple,
        checkpoint_segments=s.checkpoint_segments,
    )


def outcome(obj: Any, name: str, *args: Any) -> tuple[str, Any]:
    """``("ok", value)`` or ``("raises", exception type name)`` for one property or method."""
    try:
        value = getattr(obj, name)
        if args:
            value = value(*args)
    except Exception as err:  # noqa: BLE001 - the reference fails with TypeError/AttributeError/ZeroDivisionError
        return "raises", type(err).__name__
    return "ok", value


def same(ours: Any, theirs: Any, rel: float = 1e-9) -> bool:
    """Equal value, unit and dimension: quantities compared in the reference's unit."""
    if hasattr(theirs, "units"):
        if not hasattr(ours, "units") or ours.units != ureg.Unit(format(theirs.units, "D")):
            return False
        return math.isclose(float(ours.magnitude), float(theirs.magnitude), rel_tol=rel, abs_tol=1e-9)
    if isinstance(theirs, bool) or theirs is None:
        return ours == theirs
    return math.isclose(float(ours), float(theirs), rel_tol=rel, abs_tol=1e-12) and type(ours) is type(theirs)
