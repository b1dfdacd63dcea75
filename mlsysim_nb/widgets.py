"""Live controls: ``explore(scenario)`` re-binds a scenario's fields through ``variant()``.

The scenarios stay frozen; a :class:`ScenarioExplorer` owns the one mutable
reference (``panel.scenario``). Controls are standard ipywidgets built from
the fields' own declarations (:mod:`mlsysim_nb.controls`); the derivation is
the same HTML as the static repr; the chart is a small anywidget drawing the
memory bar in SVG from numbers computed here. A value ``variant()`` rejects
shows its message in the panel and the last good scenario and picture stay.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as w
import traitlets

from mlsysim_nb.charts import COLORS, memory_breakdown
from mlsysim_nb.controls import ControlSpec, apply_control, controls_for, log2_bounds
from mlsysim_nb.repr_html import error_html, scenario_html
from mlsysim_nb.summary import summary_line

__all__ = ["MemoryBarWidget", "ScenarioExplorer", "explore"]

STATIC = Path(__file__).parent / "static"


class MemoryBarWidget(anywidget.AnyWidget):
    """Stacked memory bars against a capacity line, drawn in the browser (SVG) from Python numbers."""

    _esm = STATIC / "memory_bar.js"
    _css = STATIC / "memory_bar.css"
    bars = traitlets.List(traitlets.Dict(), help="[{label, total_gb, parts: [{name, gb, color}]}]").tag(sync=True)
    capacity = traitlets.Float(None, allow_none=True, help="capacity line in GB").tag(sync=True)
    capacity_label = traitlets.Unicode("", help="text over the capacity line").tag(sync=True)
    highlight = traitlets.Unicode("", help="label of the bar to emphasise").tag(sync=True)
    summary = traitlets.Unicode("", help="accessible description").tag(sync=True)

    def show(self, scenario: Any, highlight: str = "") -> None:
        """Draw ``scenario``'s breakdown (one sync of all traits)."""
        data = chart_data(scenario)
        with self.hold_sync():
            self.bars = data["bars"]
            self.capacity = data["capacity"]
            self.capacity_label = data["capacity_label"]
            self.highlight = highlight
            self.summary = summary_line(scenario)

    def __repr__(self) -> str:
        return f"MemoryBarWidget({len(self.bars)} bars)"


def chart_data(scenario: Any) -> dict[str, Any]:
    """The breakdown in GB as JSON-able data for :class:`MemoryBarWidget`."""
    b = memory_breakdown(scenario)
    bars = []
    for label, parts in b["bars"]:
        items = [{"name": k, "gb": v / 1e9, "color": COLORS.get(k, "#999999")} for k, v in parts.items()]
        bars.append({"label": label, "total_gb": sum(p["gb"] for p in items), "parts": items})
    capacity = None if b["capacity"] is None else b["capacity"] / 1e9
    return {"bars": bars, "capacity": capacity, "capacity_label": b["capacity_label"]}


def _widget(spec: ControlSpec) -> Any:
    common = {"description": spec.label, "style": {"description_width": "initial"}, "layout": w.Layout(width="95%")}
    if spec.kind == "log":
        lo, hi = log2_bounds(spec)
        return w.FloatLogSlider(
            value=spec.value, base=2, min=lo, max=hi, step=1, readout_format=".0f", continuous_update=True, **common
        )
    if spec.kind == "int":
        return w.IntSlider(
            value=int(spec.value), min=int(spec.low), max=int(spec.high), continuous_update=True, **common
        )
    if spec.kind == "dropdown":
        return w.Dropdown(options=list(spec.options), value=spec.value, **common)
    if spec.kind == "toggle":
        return w.Checkbox(value=bool(spec.value), indent=False, **common)
    if spec.kind == "strategy":
        return w.ToggleButtons(
            options=list(spec.options),
            value=spec.value,
            description=spec.label,
            style={"description_width": "initial", "button_width": "6em"},
        )
    msg = f"unknown control kind {spec.kind!r}"
    raise ValueError(msg)


class ScenarioExplorer(w.HBox):
    """A live panel: controls on the left; the derivation and the chart on the right.

    ``panel.scenario`` is the current (frozen) scenario; continue from it in
    code. ``panel.set(name, value)`` moves a control as a student would.
    ``panel.recomputes`` counts successful re-bindings; ``panel.error`` is
    the last rejection message (empty when the last change was accepted).
    """

    def __init__(self, scenario: Any, **kwargs: Any) -> None:
        self._scenario = scenario
        self._origin = scenario
        self._callbacks: list[Callable[[Any], None]] = []
        self._syncing = False
        self.recomputes = 0
        self.error = ""
        self.strategy = "none"
        self.specs = {s.name: s for s in controls_for(scenario)}
        self.controls = {name: _widget(spec) for name, spec in self.specs.items()}
        for name, control in self.controls.items():
            control.observe(lambda change, name=name: self._on_change(name, change["new"]), names="value")
        self.status = w.HTML(value="", layout=w.Layout(min_height="1.5em"))
        self.chart = MemoryBarWidget()
        self.derivation = w.HTML(layout=w.Layout(width="100%"))
        left = w.VBox([*self.controls.values(), self.status], layout=w.Layout(width="34%", min_width="300px"))
        right = w.VBox([self.chart, self.derivation], layout=w.Layout(width="66%"))
        super().__init__([left, right], layout=w.Layout(width="100%", align_items="flex-start"), **kwargs)
        self._render()
        self._sync_controls()

    @property
    def scenario(self) -> Any:
        """The current scenario (frozen); changes replace it, never modify it."""
        return self._scenario

    def on_change(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback(scenario)`` after every accepted change."""
        self._callbacks.append(callback)

    def set(self, name: str, value: Any) -> None:
        """Move control ``name`` to ``value`` (as a student dragging it would)."""
        if name not in self.controls:
            msg = f"no control {name!r}; controls are: {', '.join(self.controls)}"
            raise KeyError(msg)
        self.controls[name].value = value

    def _on_change(self, name: str, value: Any) -> None:
        if self._syncing:
            return
        spec = self.specs[name]
        if spec.kind == "strategy":
            self.strategy = value
            self._render(derivation=False)
            return
        if spec.kind == "log":
            value = round(value)
        try:
            new = apply_control(self._scenario, spec, value)
        except Exception as err:  # noqa: BLE001 - any rejection is shown, never raised into the notebook
            self.error = f"{spec.label} = {value!r} was not applied: {err}"
            self.status.value = error_html(self.error + " (the last good scenario is kept)")
            return
        self.error = ""
        self.status.value = ""
        self._scenario = new.variant(name=self._title(new))
        self.recomputes += 1
        self._render()
        self._sync_controls()
        for callback in self._callbacks:
            callback(new)

    def _title(self, new: Any) -> str:
        """The starting scenario's title plus what the controls changed, so the title never misleads."""
        origin = self._origin
        changed = [
            name
            for name in new.field_names()
            if name not in ("name", "description") and getattr(new, name) != getattr(origin, name)
        ]
        base = origin.name or type(origin).__name__
        return base if not changed else f"{base} — changed: {', '.join(changed)}"

    def _render(self, *, derivation: bool = True) -> None:
        highlight = self.strategy if "strategy" in self.specs else ""
        self.chart.show(self._scenario, highlight)
        if derivation:
            self.derivation.value = scenario_html(self._scenario, chart=False)

    def _sync_controls(self) -> None:
        """Bring every control to the current scenario (after a change touched several fields)."""
        self._syncing = True
        try:
            for spec in controls_for(self._scenario):
                control = self.controls.get(spec.name)
                if control is None:
                    continue
                if spec.kind == "dropdown" and list(control.options) != list(spec.options):
                    control.options = list(spec.options)
                if spec.kind == "int" and control.max != int(spec.high):  # e.g. segments <= the new model's layers
                    control.max = int(spec.high)
                if spec.kind == "strategy":
                    continue
                value = spec.value
                if control.value != value and not (spec.kind == "log" and math.isclose(control.value, value)):
                    control.value = value
                self.specs[spec.name] = spec
            if "adapter_rank" in self.controls:
                off = not self._scenario.adapter_mode
                self.controls["adapter_rank"].disabled = off
                self.controls["adapted_matrices"].disabled = off
        finally:
            self._syncing = False

    def __repr__(self) -> str:
        return (
            f"ScenarioExplorer({type(self._scenario).__name__}: {self._scenario.name or summary_line(self._scenario)})"
        )


def explore(scenario: Any) -> ScenarioExplorer:
    """A live panel of controls, derivation and chart for ``scenario``.

    >>> from mlsysim_nb import Scenarios, explore
    >>> panel = explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100)
    >>> panel.set("batch_size", 8)
    >>> panel.scenario.batch_size, panel.scenario.fits
    (8, True)
    """
    return ScenarioExplorer(scenario)
