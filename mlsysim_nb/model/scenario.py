"""What both scenarios share: frozen fields, ``variant()``, and properties built from formulas.

A scenario converts its inputs to base-unit magnitudes once, in
``__post_init__``. Each derived property then runs its compiled formula on
those magnitudes (resolving the formulas it reads, cached per instance) and
attaches its unit once, at the end.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.model.fields import knobs
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec
from mlsysim_nb.physics import FORMULAS, QUANTITIES, SYMBOLS
from mlsysim_nb.units import factor, maker

__all__ = ["Scenario", "changed_fields", "derived", "is_array"]


_CHANGED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("changed", default=frozenset())
#: the scenario a variant() is made from: its fields' checked magnitudes are reused for the unchanged ones
_ORIGIN: contextvars.ContextVar[Any] = contextvars.ContextVar("origin", default=None)


#: how the inputs table names the fields that hold a record or another scenario
_RECORD_LABELS = {
    "hardware": "the accelerator",
    "state": "single-device recipe and device",
    "activations": "saved activations",
}


def changed_fields() -> frozenset[str]:
    """The fields the ``variant()`` call being validated changes (empty outside one).

    A check that involves several fields (an adapter shape too large for the
    model) blames the one the user just changed.
    """
    return _CHANGED.get()


class Env:
    """Magnitudes of one scenario, resolved and cached by name.

    Inputs that are absent are stored as ``None`` with the reason in
    ``needs``; reading one raises :class:`NotApplicableError`.
    """

    __slots__ = ("needs", "values", "vectorised")

    def __init__(self, values: dict[str, Any], needs: Mapping[str, str], *, vectorised: bool | None = None) -> None:
        self.values = values
        self.needs = needs
        if vectorised is None:
            vectorised = any(type(v) is np.ndarray for v in values.values())
        self.vectorised = vectorised

    def get(self, name: str) -> Any:
        """The magnitude of ``name``, computing it from its formula on first use."""
        values = self.values
        if name in values:
            value = values[name]
            if value is None:
                raise NotApplicableError(name, self.needs.get(name, name))
            return value
        formula = FORMULAS.get(name)
        if formula is None:
            raise KeyError(name)
        try:
            if self.vectorised:
                with np.errstate(all="ignore"):  # a non-finite element is reported below, naming the equation
                    value = formula.evaluate(self.get)
            else:  # plain floats raise OverflowError / ZeroDivisionError instead of warning
                value = formula.evaluate(self.get)
            if not _finite(value):
                _not_finite(name, formula.case(self.get).expression)
        except NotApplicableError as err:
            if err.quantity == name:
                raise
            raise NotApplicableError(name, err.needs) from None
        except OverflowError:
            case = formula.case(self.get).expression
            raise NotApplicableError(name, "a finite value", detail=f"{name} = {case} is unbounded") from None
        except ZeroDivisionError:
            case = formula.case(self.get).expression
            raise NotApplicableError(
                name, "a non-zero denominator", detail=f"{name} = {case} divides by zero"
            ) from None
        values[name] = value
        return value

    def with_inputs(self, extra: Mapping[str, Any]) -> Env:
        """A child environment for a method call: ``extra`` inputs, the same cached values."""
        vectorised = self.vectorised or any(type(v) is np.ndarray for v in extra.values())
        return Env({**self.values, **extra}, self.needs, vectorised=vectorised)


def _not_finite(name: str, case: str) -> None:
    raise NotApplicableError(name, "a finite value", detail=f"{name} = {case} is not finite")


def is_array(value: Any) -> bool:
    """True for a NumPy array of one or more dimensions (a sweep's values)."""
    return isinstance(value, np.ndarray) and value.ndim > 0


def _finite(value: Any) -> bool:
    if isinstance(value, (bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return bool(np.all(np.isfinite(value)))


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value
    return value if isinstance(value, (bool, int)) else float(value)


def wrapper(name: str) -> Callable[[Any], Any]:
    """The function that attaches ``name``'s output unit to a base-unit magnitude.

    Plain numbers stay plain (float, int, bool); quantities are converted
    from the base unit (bytes, seconds) to the output unit (GB, ms) here.
    """
    out = FORMULAS[name].unit
    if not out:
        return _plain
    base = QUANTITIES[name].base
    scale = factor(base, out) if base != out else 1.0
    make: Callable[[Any], Any] = maker(out)
    if scale == 1.0:
        return make
    divisor = factor(out, base) if base else 1.0
    if scale < 1 and divisor == round(divisor):
        # bytes -> GB: dividing by the exact 1e9 rounds correctly; multiplying by 1e-9 may not
        return lambda value: make(value / divisor)
    return lambda value: make(value * scale)


def _wrap(name: str, value: Any) -> Any:
    """Attach the output unit of ``name`` (see :func:`wrapper`)."""
    return wrapper(name)(value)


def derived(name: str, *, post: Callable[[Any], Any] | None = None) -> Any:
    """A read-only property computing ``FORMULAS[name]``; its docstring carries the equation."""
    formula = FORMULAS[name]
    wrap = wrapper(name)

    def fget(self: Scenario) -> Any:
        value = self._env.get(name)
        if post is not None:
            value = post(value)
        return wrap(value)

    fget.__name__ = name
    return property(fget, doc=formula.docstring(SYMBOLS))


def _is_array_value(value: Any) -> bool:
    magnitude = getattr(value, "magnitude", value)
    return isinstance(magnitude, np.ndarray) and magnitude.ndim > 0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a == b
    result = a == b
    return bool(np.all(result)) if isinstance(result, np.ndarray) else bool(result)


def _hashable(value: Any) -> Any:
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return (float(value.to_base_units().magnitude), str(value.to_base_units().units))
    return value


class Scenario:
    """Base of the frozen scenario dataclasses: validation hooks and ``variant()``."""

    _env: Env
    _checked: dict[str, Any]
    #: the formulas of this scenario's derivation, in reading order
    FORMULA_NAMES: ClassVar[tuple[str, ...]] = ()

    def variant(self, **changes: Any) -> Any:
        """A new, fully validated scenario with ``changes`` applied; this one is untouched.

        Raises
        ------
        TypeError
            For a name that is not a field, listing the valid fields.
        """
        names = [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            msg = (
                f"{type(self).__name__}.variant() got unknown field(s) {', '.join(map(repr, unknown))}; "
                f"valid fields are: {', '.join(names)}"
            )
            raise TypeError(msg)
        if "name" not in changes and any(k not in ("name", "description") for k in changes):
            # a title describes the scenario it was given to; a changed scenario drops it rather than mislead
            changes = {**changes, **{k: "" for k in ("name", "description") if k in names}}
        token = _CHANGED.set(frozenset(changes))
        origin = _ORIGIN.set(self)
        try:
            return dataclasses.replace(self, **changes)  # type: ignore[type-var]
        finally:
            _CHANGED.reset(token)
            _ORIGIN.reset(origin)

    # -- validation: every declared field through its Knob, then what fields must agree on ---------
    def _check_fields(self) -> dict[str, Any]:
        """Check and normalise every declared field; returns their base-unit magnitudes by name."""
        owner = type(self).__name__
        for name in ("name", "description"):
            value = getattr(self, name, "")
            if not isinstance(value, str):
                raise FieldError(owner, name, f"must be a string, got {type(value).__name__} {value!r}")
        magnitudes: dict[str, Any] = {}
        origin = _ORIGIN.get()
        # variant(): a field left as it was (the very same object) was checked when the origin was made
        known = origin._checked if type(origin) is type(self) else {}  # noqa: SLF001 - same class
        for name, declared in knobs(self).items():
            value = getattr(self, name)
            if name in known and value is getattr(origin, name):
                magnitudes[name] = known[name]
                continue
            stored, magnitudes[name] = declared.check(owner, name, value)
            object.__setattr__(self, name, stored)
        object.__setattr__(self, "_checked", dict(magnitudes))
        arrays = {k: np.shape(v) for k, v in magnitudes.items() if isinstance(v, np.ndarray) and v.ndim}
        if len(arrays) > 1:
            try:
                np.broadcast_shapes(*arrays.values())
            except ValueError:
                shapes = ", ".join(f"{k} {v}" for k, v in arrays.items())
                msg = f"array fields must broadcast against each other (a sweep grid), got shapes {shapes}"
                raise FieldError(owner, next(reversed(arrays)), msg) from None
        return magnitudes

    def field_bounds(self, name: str) -> tuple[float, float | None]:
        """The range field ``name`` accepts in this scenario (its declaration's, unless a rule narrows it)."""
        declared = knobs(self)[name]
        return declared.low, declared.high

    @property
    def is_sweep(self) -> bool:
        """True when a field holds a NumPy array (the properties are then arrays too)."""
        return any(_is_array_value(v) for v in self.inputs().values())

    def _key(self) -> tuple[Any, ...]:
        out = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if not f.compare:
                continue
            value = getattr(self, f.name)
            if _is_array_value(value):
                magnitude = np.asarray(getattr(value, "magnitude", value))
                unit = str(getattr(value, "units", ""))
                value = ("array", unit, magnitude.shape, magnitude.tobytes())
            out.append(value)
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self._key(), other._key()
        return all(_same(a, b) for a, b in zip(mine, theirs, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(_hashable(v) for v in self._key()))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The input fields, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def inputs(self) -> dict[str, Any]:
        """The input fields and their values."""
        return {name: getattr(self, name) for name in self.field_names()}

    def magnitude(self, name: str) -> Any:
        """The base-unit magnitude of any input or derived quantity (bytes, seconds, counts)."""
        return self._env.get(name)

    def _set_env(self, values: dict[str, Any], needs: Mapping[str, str]) -> None:
        object.__setattr__(self, "_env", Env(values, needs))

    # -- presentation as data: what the display, comparison, control and sweep modules read ----------
    #: the derivation's sections, in reading order (default: one section with every formula)
    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = ()
    #: (heading, text) pairs: what the model assumes and leaves out
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: the quantities compare() shows (default: every formula)
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = ()

    def sections(self) -> tuple[SectionSpec, ...]:
        """The derivation's sections that apply to this scenario (a section's ``when`` flag must hold)."""
        specs = self.SECTIONS or (
            SectionSpec("Derivation", tuple((n, n) for n in self.FORMULA_NAMES), self.FORMULA_NAMES[-1]),
        )
        return tuple(spec for spec in specs if not spec.when or self.flag(spec.when))

    def flag(self, name: str) -> bool:
        """A yes/no fact of this scenario by name (``"adapter_mode"``), false when absent."""
        value = self._env.values.get(name)
        return value is not None and bool(np.all(value))

    def title(self) -> str:
        """The scenario's name, or a title built from its fields (never a stale one)."""
        return str(getattr(self, "name", "") or self.default_title())

    def default_title(self) -> str:
        """A title built from the fields; kinds say more than their class name."""
        return type(self).__name__

    def headline(self) -> Headline:
        """The one-line answer; by default the result of the last section's headline step."""
        from mlsysim_nb.render.numbers import format_result

        spec = self.sections()[-1]
        name = dict(spec.steps).get(spec.headline, spec.headline) or self.FORMULA_NAMES[-1]
        try:
            value = format_result(QUANTITIES[name].base, self.magnitude(name))
        except NotApplicableError as err:
            value = f"not applicable (needs {err.needs})"
        return Headline(f"{self.title()}: {name} = {value}")

    def memory_chart(self) -> MemoryChart | None:
        """The memory bar chart's data; ``None`` for a kind that draws none."""
        return None

    def caveats(self) -> tuple[str, ...]:
        """Sentences a reader must see beside these numbers (an estimate outside its assumptions); none by default."""
        return ()

    def sweep_quantity(self) -> str:
        """What a sweep plots and fits by default: the last memory quantity of the derivation."""
        in_bytes = [n for n in self.FORMULA_NAMES if QUANTITIES[n].base == "byte"]
        return in_bytes[-1] if in_bytes else self.FORMULA_NAMES[-1]

    def comparison_rows(self) -> tuple[str, ...]:
        """The quantities compare() lines up."""
        return self.COMPARISON_ROWS or self.FORMULA_NAMES

    def method_inputs(self) -> dict[str, Any]:
        """Example arguments of the methods the derivation shows (base-unit magnitudes by name)."""
        return {}

    def input_rows(self) -> list[tuple[str, str, str]]:
        """Inputs read from nested records (a workload, a device) as (name, meaning, value) rows."""
        return []

    def input_label(self, name: str) -> str:
        """How the inputs table explains field ``name``."""
        if name in QUANTITIES:
            return QUANTITIES[name].label
        if name in _RECORD_LABELS:
            return _RECORD_LABELS[name]
        declared = knobs(self).get(name)
        return declared.label if declared is not None and declared.label else name.replace("_", " ")

    def controls(self) -> list[Any]:
        """The live controls: one per field that declares one (kinds add catalog and view controls)."""
        from mlsysim_nb.live import controls as c

        return [c.field_control(self, name) for name, k in knobs(self).items() if k.control]

    def swept_fields(self) -> list[str]:
        """The fields that hold arrays."""
        return [name for name, value in self.inputs().items() if _is_array_value(value)]

    def __repr__(self) -> str:
        from mlsysim_nb.render.text import one_line

        return f"<{type(self).__name__}: {one_line(str(self.headline()))}>"

    # -- display: the derivation as HTML, Markdown and text, and the chart -----------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from mlsysim_nb.render.display import scenario_bundle

        return scenario_bundle(self)

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self, *, chart: bool = True) -> str:
        """The HTML repr: summary, inputs, chart, derivation and notes."""
        from mlsysim_nb.render.html import scenario_html

        return scenario_html(self, chart=chart)

    def to_text(self) -> str:
        """The derivation as plain text (what ``python -m mlsysim_nb show`` prints)."""
        from mlsysim_nb.render.text import scenario_text

        return scenario_text(self)

    def to_markdown(self) -> str:
        """The derivation as Markdown tables."""
        from mlsysim_nb.render.text import scenario_markdown

        return scenario_markdown(self)

    def explain(self) -> Any:
        """The derivation as data (:class:`mlsysim_nb.render.derivation.Derivation`)."""
        from mlsysim_nb.render.derivation import explain

        return explain(self)

    def explore(self) -> Any:
        """A live panel of controls re-binding this scenario's fields (``mlsysim_nb.explore``)."""
        from mlsysim_nb.live.explorer import explore

        return explore(self)

    def plot(self, ax: Any = None) -> Any:
        """The memory bar chart as a matplotlib ``Figure`` (drawn into ``ax`` if given)."""
        from mlsysim_nb.render.charts import memory_bar

        chart = self.memory_chart()
        if chart is None:
            raise NotApplicableError("plot", f"a memory chart, which {type(self).__name__} does not declare")
        return memory_bar(chart, ax=ax)
