"""Controls as pure data: what a live panel shows for a scenario, and how a value re-binds it.

A scenario kind lists its controls (``scenario.controls()``) with the builders
here; each numeric control takes its range, scale, label and choices from the
field's one declaration (:class:`mlsysim_nb.model.knob.Knob`), so a control offers
exactly what validation accepts. It lives beside the model, so a kind's ``view.py``
imports nothing from the live panel. This module never asks which kind of scenario
it holds. :mod:`mlsysim_nb.live.explorer` renders the records as ipywidgets; any
other front end could.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsysim_nb.errors import show_number
from mlsysim_nb.model.knob import knobs

if TYPE_CHECKING:
    from mlsysim_nb.model.protocol import ScenarioLike

__all__ = [
    "ControlSpec",
    "apply_control",
    "catalog_control",
    "catalog_record",
    "controls_for",
    "field_control",
    "toggle_control",
    "view_control",
]

Changes = dict[str, Any]
Bind = Callable[[Any, Any], Changes]


@dataclass(frozen=True)
class ControlSpec:
    """One control: what it shows, its range or choices, and how its value becomes ``variant()`` changes.

    ``kind`` is ``"log"`` (powers of two to drag, any whole number to type),
    ``"int"`` (every whole number), ``"dropdown"``, ``"toggle"`` or ``"view"``
    (a display setting such as the strategy a chart highlights, not a field).
    """

    name: str
    label: str
    kind: str
    value: Any
    options: tuple[tuple[str, Any], ...] = ()
    low: float = 0
    high: float = 0
    help: str = ""
    disabled: bool = False
    bind: Bind | None = dataclasses.field(default=None, compare=False, repr=False)
    steps: tuple[tuple[Any, str], ...] = ()  # a view setting: the derivation step each choice stands for

    def step_for(self, value: Any) -> str:
        """The derivation step a view setting's choice stands for (``""`` when it names none)."""
        return str(dict(self.steps).get(value, ""))

    def accepts(self, value: Any) -> str:
        """Why ``value`` cannot be set on this control (``""`` when it can); the panel shows the reason."""
        if self.kind in {"dropdown", "view"}:
            allowed = [v for _, v in self.options]
            return "" if value in allowed else f"choose one of {', '.join(label for label, _ in self.options)}"
        if self.kind == "toggle":
            return "" if isinstance(value, bool) else "must be True or False"
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (isinstance(value, float) and not math.isfinite(value))
        ):
            return f"must be a whole number from {show_number(self.low)} to {show_number(self.high)}"
        return ""


_MISSING: Any = object()


def field_control(
    scenario: ScenarioLike,
    name: str,
    *,
    value: Any = _MISSING,
    low: float | None = None,
    bind: Bind | None = None,
    label: str = "",
) -> ControlSpec:
    """The control a field declares: its range (the field's bounds here), scale, label and choices.

    ``label`` names the control when it sets more than the field's own words say (a stated sequence
    length that is the sequence the model reads).
    """
    declared = knobs(scenario).get(name)
    if declared is None or not declared.control:
        msg = f"{type(scenario).__name__}.{name} declares no control"
        raise KeyError(msg)
    if label:
        declared = dataclasses.replace(declared, label=label)
    if value is _MISSING:
        value = scenario.magnitude(name) if declared.kind in {"bytes", "number"} else getattr(scenario, name)
    if declared.control in {"dropdown", "toggle"} and declared.kind == "choice":
        kind = "toggle" if declared.control == "toggle" else "dropdown"
        return ControlSpec(name, declared.label, kind, value, tuple(declared.choices), help=declared.help, bind=bind)
    if declared.control == "dropdown":
        options = tuple(declared.choices)
        if value not in [v for _, v in options]:
            options = (*options, (f"{value:g} B", value))
        return ControlSpec(name, declared.label, "dropdown", value, options, help=declared.help, bind=bind)
    bound_low, bound_high = scenario.field_bounds(name)
    low = bound_low if low is None else low
    high = bound_high if bound_high is not None else 2**20
    current = int(value) if value is not None else int(max(low, 1))
    return ControlSpec(
        name, declared.label, declared.control, current, low=int(low), high=int(high), help=declared.help, bind=bind
    )


def toggle_control(name: str, label: str, value: bool, bind: Bind, help_: str = "") -> ControlSpec:
    """An on/off control whose ``bind`` turns the checkbox into field changes."""
    return ControlSpec(name, label, "toggle", bool(value), help=help_, bind=bind)


def view_control(
    name: str, label: str, options: Sequence[str], value: str | None = None, steps: Mapping[str, str] | None = None
) -> ControlSpec:
    """A display setting (e.g. which strategy the chart highlights); it changes no field.

    ``steps`` names the derivation step each choice stands for (``{"full": 'activations("full")'}``):
    the panel marks it in the derivation and states its result under the summary.
    """
    choices = tuple((o, o) for o in options)
    return ControlSpec(name, label, "view", value or options[0], options=choices, steps=tuple((steps or {}).items()))


def _catalog(kind: str) -> Any:
    if kind == "hardware":
        from mlsysim_nb.records.hardware import Hardware

        return Hardware
    from mlsysim_nb.records.workload_catalog import Workloads

    return Workloads.all()


def option_label(kind: str, record: Any) -> str:
    """How a catalog dropdown names a record: an accelerator with its memory as stated, ``NVIDIA H100 (80 GiB)``."""
    if kind != "hardware":
        return str(record.name)
    from mlsysim_nb.formula import format_number

    capacity = record.memory.capacity
    return f"{record.name} ({format_number(capacity.magnitude)} {capacity.units:~P})"


def _catalog_options(kind: str) -> tuple[tuple[str, Any], ...]:
    entries = tuple((option_label(kind, record), key) for key, record in _catalog(kind).items())
    return (("no hardware", None), *entries) if kind == "hardware" else entries


def _key_of(kind: str, record: Any) -> Any:
    if record is None:
        return None
    catalog = _catalog(kind)
    for key, entry in catalog.items():
        if entry == record:
            return key
    return record.name


def _origin(kind: str, record: Any) -> str:
    """Where a record outside the catalog comes from, in the words of a dropdown's option."""
    if kind == "workload":
        from mlsysim_nb.records.workload_catalog import Workloads

        if any(record == shipped for shipped in Workloads.configurations().values()):
            return "from its published config.json"
    return "as this scenario has it"


def _with_own(kind: str, record: Any, key: Any, options: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """``options`` with the scenario's own record first, each option's words distinct.

    A record named as a catalog entry is another record (Llama 3.1 8B read from its config.json, with its
    exact parameters and gated MLP, against the catalog's summary of the paper's table): both options say
    where they come from, so a list never shows one name twice.
    """
    own = option_label(kind, record)
    if own in [label for label, _ in options]:
        options = tuple((f"{label} (catalog)" if label == own else label, v) for label, v in options)
        own = f"{own} ({_origin(kind, record)})"
    return ((own, key), *options)


def catalog_record(kind: str, key: Any) -> Any:
    """The record a catalog dropdown's key stands for (``None`` for "no hardware")."""
    return None if key is None else _catalog(kind)[key]


def catalog_control(scenario: ScenarioLike, kind: str, bind: Bind | None = None) -> ControlSpec:
    """A dropdown over a catalog (``"hardware"`` or ``"workload"``) for the field of that name.

    ``bind(scenario, record)`` turns the chosen record into changes; by default it sets the field
    ``kind`` (a kind that holds the device inside another field passes its own).
    """
    current = getattr(scenario, kind)
    options = _catalog_options(kind)
    key = _key_of(kind, current)
    if key not in [v for _, v in options]:  # a record outside the catalog: keep it selectable
        options = _with_own(kind, current, key, options)

    def to_record(s: Any, k: Any) -> Changes:
        record = current if k == key else catalog_record(kind, k)
        return bind(s, record) if bind is not None else {kind: record}

    label = "accelerator" if kind == "hardware" else "model"
    return ControlSpec(kind, label, "dropdown", key, options=options, bind=to_record)


def controls_for(scenario: ScenarioLike) -> list[ControlSpec]:
    """The controls of a scenario: its kind's own list (``scenario.controls()``)."""
    return list(scenario.controls())


def changes_for(spec: ControlSpec, scenario: ScenarioLike, value: Any) -> Changes:
    """The field changes that setting ``spec`` to ``value`` means (none for a view setting)."""
    if spec.kind == "view":
        return {}
    if spec.bind is not None:
        return spec.bind(scenario, value)
    return {spec.name: value}  # a fraction is the model's to refuse, never truncated here


def apply_control(scenario: ScenarioLike, spec: ControlSpec, value: Any, **extra: Any) -> Any:
    """The scenario after setting ``spec`` to ``value``: one validating ``variant()`` (may raise)."""
    changes = changes_for(spec, scenario, value)
    if not changes and not extra:
        return scenario
    return scenario.variant(**changes, **extra)


def log2_bounds(spec: ControlSpec) -> tuple[int, int]:
    """Exponent bounds of a powers-of-two slider."""
    return math.floor(math.log2(max(spec.low, 1))), math.ceil(math.log2(max(spec.high, 1)))
