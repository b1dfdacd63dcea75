"""Controls derived from a scenario's own fields: pure data, no widgets.

Each numeric field declares its control next to itself with
:func:`mlsysim_nb.base.knob` (range, scale, step, unit, choices). This module
turns those declarations, plus the hardware and workload catalogs, into
:class:`ControlSpec` records, and knows how a control's value re-binds the
scenario through ``variant()``. A stock-ipywidgets front end
(:mod:`mlsysim_nb.widgets`) or any other could render them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsysim_nb.fields import Knob, knobs

__all__ = ["ControlSpec", "apply_control", "controls_for"]

Changes = dict[str, Any]


@dataclass(frozen=True)
class ControlSpec:
    """One control: what it shows, its range or choices, and how its value becomes ``variant()`` changes.

    ``kind`` is ``"log"`` (powers of two), ``"int"``, ``"dropdown"``,
    ``"toggle"`` or ``"strategy"`` (a view setting, not a field).
    """

    name: str
    label: str
    kind: str
    value: Any
    options: tuple[tuple[str, Any], ...] = ()
    low: float = 0
    high: float = 0
    step: float = 1
    help: str = ""
    bind: Callable[[Any, Any], Changes] | None = dataclasses.field(default=None, compare=False, repr=False)


def _field_control(cls: Any, name: str) -> Knob:
    declared = knobs(cls).get(name)
    if declared is None or not declared.control:
        msg = f"{type(cls).__name__}.{name} declares no control"
        raise KeyError(msg)
    return declared


def _bytes(q: Any) -> float:
    return float(q.m_as("byte"))


def _slider_spec(scenario: Any, name: str, label: str, value: int | None, help_: str = "", **kw: Any) -> ControlSpec:
    """A slider whose range and scale (log: powers of two) come from the field's knob() declaration."""
    c = _field_control(scenario, name)
    bound_low, bound_high = scenario.field_bounds(name)
    low, high = int(kw.pop("low", bound_low)), int(kw.pop("high", bound_high))
    current = value if value is not None else max(low, 1)
    return ControlSpec(name, label, c.control, int(current), low=low, high=high, help=help_ or c.help, **kw)


def _choice_spec(scenario: Any, name: str, label: str, value: float, help_: str = "") -> ControlSpec:
    c = _field_control(scenario, name)
    options = tuple(c.choices)
    if value not in [v for _, v in options]:
        options = (*options, (f"{value:g} B", value))
    return ControlSpec(name, label, "dropdown", value, options=options, help=help_)


def _catalog_options(kind: str) -> tuple[tuple[str, Any], ...]:
    if kind == "hardware":
        from mlsysim_nb.hardware import Hardware

        return (("no hardware", None), *((node.name, key) for key, node in Hardware.items()))
    from mlsysim_nb.workloads import Workloads

    return tuple((w.name, key) for key, w in Workloads.all().items())


def _key_of(kind: str, obj: Any) -> Any:
    if obj is None:
        return None
    for _, key in _catalog_options(kind):
        if key is None:
            continue
        if _lookup(kind, key) == obj:
            return key
    return obj.name


def _lookup(kind: str, key: Any) -> Any:
    if key is None:
        return None
    if kind == "hardware":
        from mlsysim_nb.hardware import Hardware

        return Hardware[key]
    from mlsysim_nb.workloads import Workloads

    return Workloads.all()[key]


def _catalog_spec(scenario: Any, kind: str, current: Any) -> ControlSpec:
    options = _catalog_options(kind)
    key = _key_of(kind, current)
    if key not in [v for _, v in options]:  # a user's own record: keep it selectable
        options = ((current.name, key), *options)

    def bind(s: Any, k: Any) -> Changes:
        return {kind: current if k == key else _lookup(kind, k)}

    label = "accelerator" if kind == "hardware" else "model"
    return ControlSpec(kind, label, "dropdown", key, options=options, bind=bind)


def _batch_bind(s: Any, value: Any) -> Changes:
    # activations are stated at batch_size: rescale them with the batch (activations_at)
    return {"batch_size": int(value), "activations": s.activations_at(int(value))}


def _adapter_bind(s: Any, on: Any) -> Changes:
    if not on:
        return dict.fromkeys(
            ("adapter_parameters", "adapter_rank", "adapted_matrices", "adapter_in_dim", "adapter_out_dim")
        )
    return _shape_defaults(s)


def _training_controls(s: Any) -> list[ControlSpec]:
    specs = [
        _catalog_spec(s, "hardware", s.hardware),
        _catalog_spec(s, "workload", s.workload),
        _choice_spec(
            s, "bytes_per_value", "value width", _bytes(s.bytes_per_value), "bytes per weight and gradient value"
        ),
        _choice_spec(
            s,
            "optimizer_bytes_per_parameter",
            "optimizer",
            _bytes(s.optimizer_bytes_per_parameter),
            "optimizer state bytes per parameter",
        ),
        ControlSpec(
            "master_bytes_per_parameter",
            "FP32 master copy",
            "toggle",
            s.master_bytes_per_parameter is not None,
            help="keep a 4-byte master copy of every trained weight",
            bind=lambda s, on: {"master_bytes_per_parameter": 4 if on else None},
        ),
    ]
    if s.batch_size is not None:
        specs.append(
            _slider_spec(
                s,
                "batch_size",
                "batch size",
                s.batch_size,
                "sequences per step; the activations scale with it",
                bind=_batch_bind,
            )
        )
    specs.append(
        ControlSpec(
            "adapter_mode",
            "adapters (LoRA)",
            "toggle",
            s.adapter_mode,
            help="freeze the base; train low-rank adapters",
            bind=_adapter_bind,
        )
    )
    specs.append(
        _slider_spec(
            s,
            "adapter_rank",
            "adapter rank",
            s.adapter_rank or 16,
            bind=lambda s, v: {**_shape_defaults(s), "adapter_rank": int(v)},
        )
    )
    specs.append(
        _slider_spec(s, "adapted_matrices", "adapted matrices per layer", s.adapted_matrices or 2,
                     bind=lambda s, v: {**_shape_defaults(s), "adapted_matrices": int(v)})
    )  # fmt: skip
    return specs


def _shape_defaults(s: Any) -> Changes:
    """Switching to a rank-based adapter shape: fill the rest of the shape and drop a stated count."""
    width = s.workload.hidden_dim or 4096
    return {
        "adapter_parameters": None,
        "adapter_rank": s.adapter_rank or 16,
        "adapted_matrices": s.adapted_matrices or 2,
        "adapter_in_dim": s.adapter_in_dim or width,
        "adapter_out_dim": s.adapter_out_dim or width,
    }


def _activation_controls(s: Any) -> list[ControlSpec]:
    from mlsysim_nb.physics import STRATEGIES

    return [
        _catalog_spec(s, "workload", s.workload),
        _slider_spec(s, "micro_batch", "micro-batch", s.micro_batch),
        _slider_spec(s, "seq_len", "sequence length", s.seq_len or s.sequence),
        _choice_spec(s, "precision_bytes", "activation width", float(s.precision_bytes)),
        _slider_spec(s, "ffn_multiple", "feed-forward multiple", s.ffn_multiple),
        # every k matters for k + L/k, so the field declares a linear scale; 0 switches segments off
        _slider_spec(
            s,
            "checkpoint_segments",
            "checkpoint segments",
            s.checkpoint_segments or 0,
            low=0,
            high=s.workload.layers,
            help_="0 = no segment checkpointing",
            bind=lambda s, v: {"checkpoint_segments": int(v) or None},
        ),
        ControlSpec("strategy", "recomputation", "strategy", "none", options=tuple((k, k) for k in STRATEGIES)),
    ]


def controls_for(scenario: Any) -> list[ControlSpec]:
    """The controls of a scenario, from its fields' declarations and the catalogs."""
    from mlsysim_nb.scenarios import TrainingStateFitScenario

    if isinstance(scenario, TrainingStateFitScenario):
        return _training_controls(scenario)
    return _activation_controls(scenario)


def apply_control(scenario: Any, spec: ControlSpec, value: Any) -> Any:
    """The scenario after setting ``spec`` to ``value``: one ``variant()`` call (may raise)."""
    if spec.kind == "strategy":
        return scenario
    if spec.bind is not None:
        changes = spec.bind(scenario, value)
    elif spec.kind in {"log", "int"}:
        changes = {spec.name: int(value)}
    else:
        changes = {spec.name: value}
    return scenario.variant(**changes)


def log2_bounds(spec: ControlSpec) -> tuple[int, int]:
    """Exponent bounds of a powers-of-two slider."""
    return math.floor(math.log2(max(spec.low, 1))), math.ceil(math.log2(spec.high))
