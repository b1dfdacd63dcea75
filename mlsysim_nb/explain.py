"""A scenario's derivation as pure data: sections of steps, each an equation with numbers.

``explain(scenario)`` returns a :class:`Derivation`; the HTML, Markdown and
text renderers only format it. Every equation comes from
:data:`mlsysim_nb.physics.FORMULAS`, so nothing here is retyped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.formatting import format_magnitude, format_result
from mlsysim_nb.physics import FORMULAS, QUANTITIES, SYMBOLS
from mlsysim_nb.units import Q_

__all__ = ["Derivation", "InputRow", "Section", "Step", "explain"]

#: Example storage bandwidth for the checkpoint-write step (a datacentre NVMe drive).
EXAMPLE_WRITE_BANDWIDTH = Q_(5, "GB/s")


@dataclass(frozen=True)
class Step:
    """One derived quantity: its equation symbolically, with numbers, and its result."""

    name: str  # the property or method, as a student types it
    label: str
    symbol: tuple[str, str]  # (text, html)
    equation: tuple[str, str]  # right-hand side (text, html)
    substituted: tuple[str, str]
    result: tuple[str, str]
    case: str = ""  # which branch applies, for the few branching equations
    not_applicable: str = ""  # what it needs, when it cannot be computed


@dataclass(frozen=True)
class Section:
    """A group of steps with a headline result for its summary line."""

    title: str
    steps: tuple[Step, ...]
    headline: str = ""


@dataclass(frozen=True)
class InputRow:
    """One input field and its value."""

    name: str
    label: str
    value: str


@dataclass(frozen=True)
class Derivation:
    """Everything a scenario shows: summary, inputs, sections and notes."""

    kind: str
    title: str
    summary: str
    inputs: tuple[InputRow, ...]
    sections: tuple[Section, ...]
    notes: tuple[tuple[str, str], ...] = field(default=())


# which quantities each section shows, in reading order; (property name, formula name, call args)
TRAINING_SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Parameter state",
        (
            ("weights", "weights"),
            ("gradients", "gradients"),
            ("optimizer_state", "optimizer_state"),
            ("optimizer_values_per_parameter", "optimizer_values_per_parameter"),
            ("master_weights", "master_weights"),
            ("bytes_per_trained_parameter", "bytes_per_trained_parameter"),
            ("full_state", "full_state"),
            ("total", "total"),
            ("copies", "copies"),
            ("frozen_share", "frozen_share"),
        ),
    ),
    (
        "Adapters",
        (
            ("adapter_count", "adapter_count"),
            ("adapter_weights", "adapter_weights"),
            ("adapter_gradients", "adapter_gradients"),
            ("adapter_master", "adapter_master"),
            ("adapter_optimizer_state", "adapter_optimizer_state"),
            ("adapter_state", "adapter_state"),
            ("adapter_fraction", "adapter_fraction"),
            ("adapter_saved", "adapter_saved"),
            ("adapter_reduction", "adapter_reduction"),
            ("adapter_kept_share", "adapter_kept_share"),
            ("adapter_reduction_ceiling", "adapter_reduction_ceiling"),
        ),
    ),
    (
        "Fit against the device",
        (("fits", "fits"), ("capacity_share", "capacity_share")),
    ),
    (
        "Activations and batch",
        (
            ("training_total", "training_total"),
            ("training_copies", "training_copies"),
            ("training_capacity_multiple", "training_capacity_multiple"),
            ("resident_batch_limit", "resident_batch_limit"),
            ("max_resident_batch", "max_resident_batch"),
            ("activations_at(2 × batch_size)", "activations_at"),
        ),
    ),
    (
        "Checkpoint and optimizer update",
        (
            ("checkpoint", "checkpoint"),
            ("checkpoint_write_time(5 GB/s)", "checkpoint_write_time"),
            ("updated_bytes_per_parameter", "updated_bytes_per_parameter"),
            ("update_bytes_per_parameter", "update_bytes_per_parameter"),
            ("update_traffic", "update_traffic"),
            ("update_time", "update_time"),
        ),
    ),
)

ACTIVATION_SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Strategies",
        (
            ("sequence", "sequence"),
            ("per_token_bytes_coefficient", "per_token_bytes_coefficient"),
            ("score_bytes_coefficient", "score_bytes_coefficient"),
            ('activations("none")', "activations_none"),
            ('activations("selective")', "activations_selective"),
            ('activations("full")', "activations_full"),
            ("per_token_activations", "per_token_activations"),
            ("per_sequence_activations", "per_sequence_activations"),
            ("score_activations", "score_activations"),
        ),
    ),
    ("Score share", (("score_share", "score_share"),)),
    (
        "Checkpoint segments",
        (
            ("segment_layers", "segment_layers"),
            ("segment_input", "segment_input"),
            ("segment_inputs", "segment_inputs"),
            ("live_segment", "live_segment"),
            ("checkpointed_activations", "checkpointed_activations"),
            ("checkpoint_memory_units(k)", "checkpoint_memory_units"),
        ),
    ),
    (
        "Per-layer line items",
        (
            ("projection_activations_per_layer", "projection_activations_per_layer"),
            ("ffn_activations_per_layer", "ffn_activations_per_layer"),
            ("score_activations_per_layer", "score_activations_per_layer"),
            ("line_items_per_layer", "line_items_per_layer"),
            ("line_items_total", "line_items_total"),
        ),
    ),
    (
        "Recompute cost",
        (
            ("training_flops (per token)", "training_flops"),
            ("checkpointed_training_flops (per token)", "checkpointed_training_flops"),
            ("decode_flops (per token)", "decode_flops"),
            ("forward_equivalents", "forward_equivalents"),
            ("recompute_overhead", "recompute_overhead"),
            ("recompute_forward_equivalents", "recompute_forward_equivalents"),
        ),
    ),
)

TRAINING_NOTES = (
    (
        "Equation",
        "Parameter state sums weights, gradients, optimizer state and an optional master copy; "
        "in adapter mode the base weights stay frozen and only the adapters carry training state.",
    ),
    (
        "Assumptions",
        "Bytes per value and per state, and the activation budget, are supplied; "
        "activation storage scales linearly with batch.",
    ),
    (
        "Excludes",
        "Runtime workspaces, allocator reserve, optimizer-specific extra temporaries, and capacity safety margins.",
    ),
    (
        "As the seed defines",
        "gradients, optimizer_state and checkpoint stay full-model even in adapter mode; "
        "the resident batch limit is negative, not clamped, when the state alone overflows.",
    ),
)
ACTIVATION_NOTES = (
    (
        "Equation",
        "Korthikanti et al. (2022): per layer s·b·h·(34 + 5·a·s/h) bytes at 16 bits; "
        "selective recomputation drops the attention-score term, full recomputation keeps each layer's input.",
    ),
    (
        "Assumptions",
        "Transformer layers share geometry. Aggregate Korthikanti-style coefficients and explicit "
        "tensor line items are separate approximations; segment sizes use integer division.",
    ),
    (
        "Excludes",
        "Allocator reserves, runtime workspaces, unequal layer shapes; leftover segment layers are "
        "absent from the simple segment estimate.",
    ),
)

_FLAGS = {"adapter_mode", "adapter_stated", "has_master", "seq_given"}


def _sym(name: str) -> tuple[str, str]:
    sym = SYMBOLS.get(name)
    if sym is None:
        return name, name
    return sym.text(), sym.html()


def _value(env: Any, name: str, *, html: bool) -> str:
    value = env.get(name)
    return format_magnitude(QUANTITIES[name].base if name in QUANTITIES else "", value, html=html)


def _step(env: Any, shown: str, name: str) -> Step:
    formula = FORMULAS[name]
    label = QUANTITIES[name].label
    symbol = _sym(name)
    case = formula.case(env.get)
    equation = (formula.render(SYMBOLS, "text", case=case), formula.render(SYMBOLS, "html", case=case))
    case_label = case.label if formula.is_branching else ""
    try:
        value = env.get(name)
        inputs = [n for n in case.inputs if n not in _FLAGS]
        text_vals = {n: _value(env, n, html=False) for n in inputs}
        html_vals = {n: _value(env, n, html=True) for n in inputs}
    except NotApplicableError as err:
        empty = ("", "")
        return Step(shown, label, symbol, equation, empty, empty, case_label, f"not applicable: needs {err.needs}")
    substituted = (
        formula.render(SYMBOLS, "text", case=case, values=text_vals),
        formula.render(SYMBOLS, "html", case=case, values=html_vals),
    )
    base = QUANTITIES[name].base
    result = (format_result(base, value), format_result(base, value, html=True))
    return Step(shown, label, symbol, equation, substituted, result, case_label)


def _headline(steps: tuple[Step, ...], key: str) -> str:
    for step in steps:
        if step.name == key:
            return step.not_applicable or f"{step.symbol[0]} = {step.result[0]}"
    return ""


_HEADLINES = {
    "Parameter state": "total",
    "Adapters": "adapter_state",
    "Fit against the device": "capacity_share",
    "Activations and batch": "training_total",
    "Checkpoint and optimizer update": "update_time",
    "Strategies": 'activations("none")',
    "Score share": "score_share",
    "Checkpoint segments": "checkpointed_activations",
    "Per-layer line items": "line_items_total",
    "Recompute cost": "recompute_overhead",
}


def _method_env(scenario: Any) -> Any:
    """The environment with example arguments for the methods shown in the derivation."""
    from mlsysim_nb.scenarios import TrainingStateFitScenario

    env = scenario._env  # noqa: SLF001 - explain is the scenario's own renderer
    if isinstance(scenario, TrainingStateFitScenario):
        extra = {"write_bandwidth": EXAMPLE_WRITE_BANDWIDTH.m_as("byte/second")}
        if scenario.batch_size is not None:
            extra["at_batch_size"] = 2 * scenario.batch_size
        return env.with_inputs(extra)
    layers = scenario.workload.layers
    k = scenario.checkpoint_segments or max(1, round(layers**0.5))
    return env.with_inputs({"checkpoints": k})


def _inputs(scenario: Any) -> tuple[InputRow, ...]:
    from mlsysim_nb.formatting import format_magnitude as fm

    rows = [InputRow("workload", "model", repr(scenario.workload.name))]
    for name in scenario.field_names():
        if name in ("workload", "name", "description"):
            continue
        value = getattr(scenario, name)
        if name == "hardware":
            text = "None" if value is None else value.name
        elif value is None:
            text = "None"
        elif hasattr(value, "units"):
            text = fm("byte", value.m_as("byte")) if value.check("[information]") else f"{value:~P}"
        elif isinstance(value, np.ndarray):
            text = fm("", value)
        else:
            text = str(value)
        label = QUANTITIES[name].label if name in QUANTITIES else name
        rows.append(InputRow(name, label, text))
    w = scenario.workload
    rows.append(InputRow("workload.parameters", "model parameters", format_magnitude("", w.parameters.magnitude)))
    attrs = ("layers", "hidden_dim", "heads", "kv_heads", "context_length")
    rows.extend(
        InputRow(f"workload.{a}", QUANTITIES[a].label, str(getattr(w, a))) for a in attrs if getattr(w, a) is not None
    )
    hw = getattr(scenario, "hardware", None)
    if hw is not None:
        rows.append(InputRow("hardware.memory.capacity", "device memory capacity", f"{hw.memory.capacity:~P}"))
        rows.append(InputRow("hardware.memory.bandwidth", "device memory bandwidth", f"{hw.memory.bandwidth:~P}"))
    return tuple(rows)


def explain(scenario: Any) -> Derivation:
    """The derivation of every quantity of ``scenario``, grouped into sections. Never raises."""
    from mlsysim_nb.scenarios import TrainingStateFitScenario
    from mlsysim_nb.summary import summary_line

    training = isinstance(scenario, TrainingStateFitScenario)
    layout = TRAINING_SECTIONS if training else ACTIVATION_SECTIONS
    env = _method_env(scenario)
    sections = []
    for title, entries in layout:
        steps = tuple(_step(env, shown, name) for shown, name in entries)
        sections.append(Section(title, steps, _headline(steps, _HEADLINES[title])))
    return Derivation(
        kind=type(scenario).__name__,
        title=scenario.name or type(scenario).__name__,
        summary=summary_line(scenario),
        inputs=_inputs(scenario),
        sections=tuple(sections),
        notes=TRAINING_NOTES if training else ACTIVATION_NOTES,
    )
