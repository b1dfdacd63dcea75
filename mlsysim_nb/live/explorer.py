"""Live controls: ``explore(scenario)`` re-binds a scenario's fields through ``variant()``.

The scenarios stay frozen; a :class:`ScenarioExplorer` owns the one mutable
reference (``panel.scenario``). Controls are standard ipywidgets built from
the fields' own declarations (:mod:`mlsysim_nb.model.controls`); the derivation is
the same HTML as the static repr; the chart is a small anywidget drawing the
memory bar in SVG from numbers computed here. A value ``variant()`` rejects
shows its message in the panel and the last good scenario and picture stay.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as w
import traitlets

from mlsysim_nb.errors import show_number
from mlsysim_nb.model.controls import ControlSpec, changes_for, controls_for, log2_bounds
from mlsysim_nb.render.charts import memory_breakdown, part_color, shown_parts, value_text
from mlsysim_nb.render.html import Chosen, error_html, escape, scenario_html

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["MemoryBarWidget", "ScenarioExplorer", "explore"]

STATIC = Path(__file__).parent / "static"


class MemoryBarWidget(anywidget.AnyWidget):
    """Stacked memory bars against a capacity line, drawn in the browser (SVG) from Python numbers."""

    _esm = STATIC / "memory_bar.js"
    _css = STATIC / "memory_bar.css"
    bars = traitlets.List(
        traitlets.Dict(), help="[{label, total_gb, total_text, parts: [{name, gb, text, color}]}]"
    ).tag(sync=True)
    capacity = traitlets.Float(None, allow_none=True, help="capacity line in GB").tag(sync=True)
    capacity_label = traitlets.Unicode("", help="text over the capacity line").tag(sync=True)
    highlight = traitlets.Unicode("", help="label of the bar to emphasise").tag(sync=True)
    summary = traitlets.Unicode("", help="accessible description").tag(sync=True)
    caption = traitlets.Unicode("", help="the verdict, over the bars").tag(sync=True)
    ok = traitlets.Bool(None, allow_none=True, help="whether the verdict is good news").tag(sync=True)

    def show(self, scenario: Scenario, highlight: str = "", *, companion: bool = False) -> None:
        """Draw ``scenario``'s breakdown (one sync of all traits); ``companion``: its chart beside the memory bar."""
        data = chart_data(scenario, companion=companion)
        headline = scenario.headline()
        with self.hold_sync():
            self.bars = data["bars"]
            self.capacity = data["capacity"]
            self.capacity_label = data["capacity_label"]
            self.caption = data["caption"]
            self.ok = None if headline.verdict is None else headline.verdict.ok
            self.highlight = highlight
            self.summary = str(headline)

    def __repr__(self) -> str:
        return f"MemoryBarWidget({len(self.bars)} bars)"


def chart_data(scenario: Scenario, *, companion: bool = False) -> dict[str, Any]:
    """The breakdown in GB as JSON-able data for :class:`MemoryBarWidget` (empty for a kind with no chart).

    ``companion``: the kind's second chart instead (an iteration's time by cause, in seconds).
    """
    chart = memory_breakdown(scenario) if not companion else scenario.companion_chart()
    if chart is None:
        return {"bars": [], "capacity": None, "capacity_label": "", "caption": ""}
    chart = shown_parts(chart)
    scale = 1e9 if chart.unit == "byte" else 1.0
    bars = []
    for label, parts in chart.bars:  # zero parts are already left out
        items = [
            {"name": k, "gb": v / scale, "text": value_text(chart, v), "color": part_color(k, chart)}
            for k, v in parts.items()
        ]
        total = sum(v for v in parts.values())
        bars.append({"label": label, "total_gb": total / scale, "total_text": value_text(chart, total), "parts": items})
    capacity = None if chart.capacity is None else chart.capacity / scale
    return {"bars": bars, "capacity": capacity, "capacity_label": chart.capacity_label, "caption": chart.caption}


_COMMON = {"style": {"description_width": "initial"}, "layout": {"width": "98%"}}


#: a powers-of-two slider stops here; the box beside it takes any whole number the field accepts
SLIDER_MAX = 2**12


def slider_position(slider: Any, value: Any) -> float:
    """Where a powers-of-two slider stands for ``value``: the largest power of two not above it, in range.

    The slider only ever holds an exact power of two. A value between two (a typed 23) leaves the
    handle at the one below (16) and the box holds the value itself: a browser slider given 23 would
    snap it to its own step (32) and send that back as if the student had moved it.
    """
    try:
        exponent = math.floor(math.log2(value)) if value >= 1 else slider.min
    except (TypeError, ValueError, OverflowError):
        exponent = slider.min
    return float(2 ** min(max(exponent, slider.min), slider.max))


def slider_notch(slider: Any, value: Any) -> float | None:
    """The power of two a powers-of-two slider's ``value`` stands on, in range (``None`` for no number).

    A browser computes the handle's value as a power of its exponent and sends back, say,
    ``32.00000000000002`` for 32: that is the notch 32, not a move.
    """
    try:
        exponent = round(math.log2(value))
    except (TypeError, ValueError, OverflowError):
        return None
    return float(2 ** min(max(exponent, slider.min), slider.max))


def _log_control(spec: ControlSpec) -> tuple[Any, Any]:
    """A powers-of-two slider to drag and a text box that takes any whole number, linked.

    The box is plain text, not a bounded number box: a browser would clamp 0 or a huge value into
    range silently, while here every typed value reaches the model's check, and a rejected one shows
    its reason in the panel. A slider move sets the value (and the box); a typed value sets the value
    and moves the handle to :func:`slider_position`, which the panel never reads back as a move.
    """
    lo, hi = log2_bounds(dataclasses.replace(spec, high=min(spec.high, SLIDER_MAX)))
    slider = w.FloatLogSlider(
        value=2**lo, base=2, min=lo, max=hi, step=1, readout=False, continuous_update=True,
        description=spec.label, tooltip=spec.help or None, style={"description_width": "initial"},
        layout=w.Layout(flex="1 1 auto", min_width="150px"),
    )  # fmt: skip
    slider.value = slider_position(slider, spec.value)
    box = w.Text(
        value=str(spec.value), tooltip=spec.help or None, continuous_update=False,
        layout=w.Layout(width="7em", flex="0 0 auto"),
    )  # fmt: skip
    return w.HBox([slider, box], layout=w.Layout(width="98%")), (slider, box)


def typed_number(text: Any) -> Any:
    """What a student typed in a number box: an int, a float, or the text itself (refused with a reason)."""
    if not isinstance(text, str):
        return text
    cleaned = text.strip().replace(",", "").replace("_", "")
    for kind in (int, float):
        try:
            return kind(cleaned)
        except ValueError:
            continue
    return text


def _widget(spec: ControlSpec) -> Any:
    common = {"description": spec.label, "tooltip": spec.help or None, "disabled": spec.disabled, **_COMMON}
    if spec.kind == "int":
        return w.IntSlider(
            value=int(spec.value), min=int(spec.low), max=int(spec.high), continuous_update=True, **common
        )
    if spec.kind == "dropdown":
        return w.Dropdown(options=list(spec.options), value=spec.value, **common)
    if spec.kind == "toggle":
        return w.Checkbox(value=bool(spec.value), indent=False, **common)
    if spec.kind == "view":
        return w.ToggleButtons(
            options=list(spec.options),
            value=spec.value,
            description=spec.label,
            style={"description_width": "initial", "button_width": "6em"},
        )
    msg = f"unknown control kind {spec.kind!r}"
    raise ValueError(msg)


class ScenarioExplorer(w.VBox):
    """A live panel: the controls on top, then the chart and the derivation at full width.

    ``panel.scenario`` is the current (frozen) scenario; continue from it in
    code. ``panel.set(name, value)`` moves a control as a student would.
    ``panel.recomputes`` counts successful re-bindings; ``panel.error`` is
    the last rejection message (empty when the last change was accepted).
    """

    def __init__(self, scenario: Scenario, **kwargs: Any) -> None:
        self._scenario = scenario
        self._origin = scenario
        self._callbacks: list[Callable[[Any], None]] = []
        self._syncing = False
        self.recomputes = 0
        self.error = ""
        self.view: dict[str, Any] = {}
        self.specs = {s.name: s for s in controls_for(scenario)}
        self.controls: dict[str, Any] = {}
        self._sliders: dict[str, Any] = {}
        boxes = []
        for name, spec in self.specs.items():
            if spec.kind == "log":
                box, (slider, entry) = _log_control(spec)
                self._sliders[name] = slider
                slider.observe(lambda change, name=name: self._on_slide(name, change["new"]), names="value")
                entry.observe(
                    lambda change, name=name: self._on_change(name, typed_number(change["new"])), names="value"
                )
                entry.on_msg(lambda _widget, content, _buffers: self._on_submit(content))
                self.controls[name] = entry
            else:
                box = self.controls[name] = _widget(spec)
            if spec.kind == "view":
                self.view[name] = spec.value
            box.observe(lambda change, name=name: self._on_change(name, change["new"]), names="value")
            boxes.append(box)
        self.status = w.HTML(value="", layout=w.Layout(min_height="1.5em"))
        self.chart = MemoryBarWidget()
        #: the kind's second chart (an iteration's time by cause), drawn under the memory bar when it gives one
        self.companion = MemoryBarWidget()
        self.derivation = w.HTML(layout=w.Layout(width="100%"))
        grid = w.GridBox(
            boxes, layout=w.Layout(grid_template_columns="repeat(auto-fill, minmax(340px, 1fr))", width="100%")
        )
        charts = [self.chart, self.companion] if scenario.companion_chart() is not None else [self.chart]
        super().__init__([grid, self.status, *charts, self.derivation], layout=w.Layout(width="100%"), **kwargs)
        self._render()
        self._sync_controls()

    @property
    def scenario(self) -> Any:
        """The current scenario (frozen); changes replace it, never modify it."""
        return self._scenario

    def on_change(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback(panel.scenario)`` after every accepted change."""
        self._callbacks.append(callback)

    def set(self, name: str, value: Any) -> None:
        """Move control ``name`` to ``value`` (as a student would); a rejected value shows in the panel."""
        if name not in self.specs:
            msg = f"no control {name!r}; controls are: {', '.join(self.specs)}"
            raise KeyError(msg)
        self._apply(name, value)

    def _on_change(self, name: str, value: Any) -> None:
        if not self._syncing:
            self._apply(name, value)

    def _on_submit(self, content: Any) -> None:
        """Enter in a box: an earlier refusal's message goes, even when the box's text did not change.

        A browser sends Enter before the box's new text and sends no text at all when it equals what
        the box held (the value in use, retyped after a refusal); a refused text comes right after and
        is refused again, with its message.
        """
        if isinstance(content, dict) and content.get("event") == "submit" and self.error:
            self.error = ""
            self.status.value = ""

    def _on_slide(self, name: str, value: float) -> None:
        """A slider move to another notch; the notch the current value stands on (an echo) is none.

        The browser answers a handle put at 32 with 32.00000000000002, so the value is read as the
        notch it stands on, never compared exactly: a typed 48 keeps its handle at 32 and stays 48.
        """
        slider = self._sliders[name]
        notch = slider_notch(slider, value)
        if self._syncing or notch is None or notch == slider_position(slider, self.specs[name].value):
            return
        self._apply(name, int(notch))

    def _reject(self, spec: ControlSpec, value: Any, reason: str) -> None:
        shown = show_number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)
        self.error = f"{spec.label} = {shown} was not applied: {reason}"
        self.status.value = error_html(self.error + " (the last good scenario is kept)")
        self._sync_controls()  # the control goes back to the value in use

    def _apply(self, name: str, value: Any) -> None:
        spec = self.specs[name]
        reason = spec.accepts(value)
        if reason:
            self._reject(spec, value, reason)
            return
        if spec.kind == "view":  # a display setting: the chart's highlight and the derivation's marked step
            self.view[name] = value
            self._syncing = True
            try:
                self.controls[name].value = value
            finally:
                self._syncing = False
            self._render()
            return
        if value == spec.value:  # the value in use: nothing to recompute, but the box shows it as applied
            self.error = ""
            self.status.value = ""
            self._sync_controls()
            return
        try:
            # one validation per change; variant() drops a title the change would make stale
            new = self._scenario.variant(**changes_for(spec, self._scenario, value))
        except Exception as err:  # noqa: BLE001 - any rejection is shown, never raised into the notebook
            self._reject(spec, value, str(err))
            return
        self.error = ""
        self._scenario = new
        self.recomputes += 1
        self._render()
        self._sync_controls()
        for callback in self._callbacks:
            callback(self._scenario)

    def _chosen(self) -> Chosen | None:
        chosen = None
        for name, value in self.view.items():
            step = self.specs[name].step_for(value)
            if step:
                chosen = Chosen(f"{self.specs[name].label}: {value}", step)
        return chosen

    def _render(self) -> None:
        # the status line holds the panel's own messages; the scenario's caveats show in its derivation,
        # right under the one-line answer, exactly as its repr shows them
        self.status.value = ""
        highlight = next(iter(self.view.values()), "")
        self.chart.show(self._scenario, highlight)
        if self.companion in self.children:
            self.companion.show(self._scenario, companion=True)
        self.derivation.value = scenario_html(self._scenario, chart=False, chosen=self._chosen())

    def settings(self) -> list[tuple[str, str]]:
        """Each control's label and its value as the control shows it (a choice by its option's words)."""
        shown = []
        for spec in self.specs.values():
            value = self.view.get(spec.name, spec.value)  # a display setting's value is the panel's own
            if spec.kind in {"dropdown", "view"}:
                text = next((label for label, v in spec.options if v == value), str(value))
            elif spec.kind == "toggle":
                text = "on" if value else "off"
            else:
                text = show_number(value)
            shown.append((spec.label, text))
        return shown

    def snapshot_html(self) -> str:
        """The panel as static HTML at its current values: its settings, then the chart and the derivation.

        A notebook saved after running stores it beside the widget's view, so that a page without a
        kernel (the course's site, nbviewer, GitHub) shows what the running panel shows.
        """
        settings = "; ".join(f"{label} = {value}" for label, value in self.settings())
        lead = (
            '<div class="msn-panel-snapshot">Live panel, shown at its current values (move its controls in a '
            f"running notebook): {escape(settings)}</div>"
        )
        return scenario_html(self._scenario, chart=True, chosen=self._chosen(), lead=lead)

    def _sync_controls(self) -> None:
        """Bring every control to the current scenario (after a change touched several fields)."""
        self._syncing = True
        try:
            for spec in controls_for(self._scenario):
                control = self.controls.get(spec.name)
                if control is None or spec.kind == "view":
                    continue
                if spec.kind == "dropdown" and list(control.options) != list(spec.options):
                    control.options = list(spec.options)
                if spec.kind == "int" and control.max != int(spec.high):  # e.g. segments <= the layers
                    control.max = int(spec.high)
                shown = str(spec.value) if spec.kind == "log" else spec.value  # the log control's box is text
                if control.value != shown:
                    control.value = shown
                if spec.name in self._sliders:
                    slider = self._sliders[spec.name]
                    slider.value = slider_position(slider, spec.value)
                control.disabled = spec.disabled
                self.specs[spec.name] = spec
        finally:
            self._syncing = False

    def __repr__(self) -> str:
        return f"ScenarioExplorer({type(self._scenario).__name__}: {self._scenario.title()})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, a static HTML snapshot and a text form that holds the answer.

        A front end with the widget's state shows the live panel; one without it (a page built from the
        saved notebook) shows the snapshot of the derivation and chart at the panel's values. The text
        form is the panel's own: ipywidgets' cuts it at 110 characters.
        """
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = f"{self!r}\n{self._scenario.headline()}"
            bundle["text/html"] = self.snapshot_html()
        return bundle


def explore(scenario: Scenario) -> ScenarioExplorer:
    """A live panel of controls, derivation and chart for ``scenario``.

    >>> from mlsysim_nb import Scenarios, explore
    >>> panel = explore(Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100)
    >>> panel.set("batch_size", 8)
    >>> panel.scenario.batch_size, panel.scenario.fits
    (8, True)
    """
    if getattr(scenario, "is_sweep", False):
        msg = "explore() shows one scenario; for one that holds arrays, use sweep() and its plots"
        raise TypeError(msg)
    return ScenarioExplorer(scenario)
