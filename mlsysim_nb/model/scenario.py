"""The scenario base: its fields checked by their declarations, its equations, and thin display methods.

A kind's class is a frozen dataclass on :class:`Scenario` that names its equations (``EQUATIONS``, an
:class:`~mlsysim_nb.model.equations.Equations` from the kind's ``physics.py``). When the class is made,
the base builds each ``derived(name)`` into a property and renders every docstring's equations in the
class's notation: the records' rows, each field's ``knob()`` and the equations' own rows. ``variant()``
lives in :mod:`~mlsysim_nb.model.changes`, the evaluator in :mod:`~mlsysim_nb.model.evaluator` and the
default presentation in :mod:`~mlsysim_nb.model.defaults`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.formula import Symbol
from mlsysim_nb.model.changes import ORIGIN, Follows, changed_fields, make_variant
from mlsysim_nb.model.defaults import Presentation
from mlsysim_nb.model.equations import EQUATIONS_SHOWN, Equations, equation_block
from mlsysim_nb.model.evaluator import Env, is_array, unit_wrapper
from mlsysim_nb.model.knob import Knob, declared_knobs, knobs
from mlsysim_nb.model.notation import RECORD_QUANTITIES, Quantity, merge

__all__ = ["Scenario", "changed_fields", "derived", "is_array"]


@dataclass(frozen=True)
class _Derived:
    """What ``derived()`` leaves in a class body; the class makes it a property when it is defined."""

    name: str
    post: Callable[[Any], Any] | None = None


def derived(name: str, *, post: Callable[[Any], Any] | None = None) -> Any:
    """A read-only property computing formula ``name`` of the class's equations; its docstring shows the equation."""
    return _Derived(name, post)


def _property(name: str, post: Callable[[Any], Any] | None, owner: type[Scenario], doc: str) -> property:
    # the unit wrapper is built on first read (it converts units with pint), so making a class stays quick
    wrap: Callable[[Any], Any] | None = None

    def fget(self: Scenario) -> Any:
        nonlocal wrap
        if wrap is None:
            wrap = owner.wrapper(name)
        value = self._env.get(name)
        return wrap(value if post is None else post(value))

    fget.__name__ = name
    return property(fget, doc=doc)


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


_DECLARED: dict[type, tuple[tuple[tuple[str, Knob], ...], tuple[tuple[str, Knob], ...]]] = {}


def _declared(cls: type) -> tuple[tuple[tuple[str, Knob], ...], tuple[tuple[str, Knob], ...]]:
    """A class's declared fields as ``(name, knob)`` pairs, and those a record's limit bounds (read once per class)."""
    found = _DECLARED.get(cls)
    if found is None:
        pairs = tuple(knobs(cls).items())
        found = _DECLARED[cls] = (pairs, tuple((name, k) for name, k in pairs if k.within is not None))
    return found


_NOTATION: dict[type, Mapping[str, Quantity]] = {}
_WRAPPERS: dict[tuple[type, str], Callable[[Any], Any]] = {}


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}." if text else ""


def _field_section(cls: type) -> str:
    """The ``Fields`` section of a class docstring: each knob's symbol, label, accepted values, help and coupling."""
    follows = {c.field: c for c in vars(cls).get("COUPLINGS", ())}
    lines = ["Fields", "------"]
    for name, declared in declared_knobs(cls).items():
        lines.append(f"{name} : {declared.quantity(name).symbol.text()}")
        parts = [_sentence(f"{declared.label}: {declared.describe()}"), _sentence(declared.help)]
        given = next((v for k in cls.__mro__ if isinstance(v := vars(k).get(name), dataclasses.Field)), None)
        if given is not None and given.default is not dataclasses.MISSING:
            parts.append(f"Default: ``{given.default!r}``.")
        if name in follows:
            c = follows[name]
            parts.append(f"Follows ``{c.leader}`` in ``variant()`` ({c.formula}) unless it is restated too.")
        lines.append("    " + " ".join(p for p in parts if p))
    return "\n".join(lines) if len(lines) > 2 else ""


class Scenario(Presentation):
    """Base of the frozen scenario dataclasses: validation, equations, ``variant()`` and display."""

    _env: Env
    _checked: dict[str, Any]
    #: the kind's equations (from its ``physics.py``)
    EQUATIONS: ClassVar[Equations]
    #: the formulas of this scenario's derivation, in reading order (default: the equations' own)
    FORMULA_NAMES: ClassVar[tuple[str, ...]] = ()
    #: scenario classes this one composes, whose fields its equations read (their notation is included)
    PARTS: ClassVar[tuple[type[Scenario], ...]] = ()
    #: fields that follow another field (see :class:`~mlsysim_nb.model.changes.Follows`)
    COUPLINGS: ClassVar[tuple[Follows, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        equations = cls.__dict__.get("EQUATIONS")
        if equations is None:
            return
        if "FORMULA_NAMES" not in cls.__dict__:
            cls.FORMULA_NAMES = equations.names
        symbols = cls.symbols()
        for attr, value in list(vars(cls).items()):
            if isinstance(value, _Derived):
                doc = equations.formula(value.name).docstring(symbols)
                setattr(cls, attr, _property(value.name, value.post, cls, doc))
                continue
            fn = value.fget if isinstance(value, property) else value
            shown = getattr(fn, EQUATIONS_SHOWN, None)
            if shown is not None and callable(fn):
                fn.__doc__ = (fn.__doc__ or "") + equation_block(equations, shown, symbols)
                if isinstance(value, property):
                    value.__doc__ = fn.__doc__
        section = _field_section(cls)
        if section and cls.__doc__:
            cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n\n" + section + "\n"

    # -- notation: the records', the fields' (and the parts' fields') and the equations' rows ----------
    @classmethod
    def notation(cls) -> Mapping[str, Quantity]:
        """Every name this kind's equations read or define: its symbol, base unit and label."""
        table = _NOTATION.get(cls)
        if table is None:
            sources: list[tuple[str, Mapping[str, Quantity]]] = [("the records", RECORD_QUANTITIES)]
            for klass in (*cls.PARTS, cls):
                own = {name: k.quantity(name) for name, k in declared_knobs(klass).items()}
                sources.append((f"the fields of {klass.__name__}", own))
            sources.append((cls.EQUATIONS.name, cls.EQUATIONS.notation))
            table = _NOTATION[cls] = merge(sources)
        return table

    @classmethod
    def symbols(cls) -> Mapping[str, Symbol]:
        """How the equations write each name."""
        return {name: q.symbol for name, q in cls.notation().items()}

    @classmethod
    def base_unit(cls, name: str) -> str:
        """The base unit of ``name``'s magnitude (``""`` for plain numbers and names without a row)."""
        row = cls.notation().get(name)
        return row.base if row is not None else ""

    @classmethod
    def wrapper(cls, name: str) -> Callable[[Any], Any]:
        """The function that attaches formula ``name``'s output unit to its base-unit magnitude."""
        key = (cls, name)
        wrap = _WRAPPERS.get(key)
        if wrap is None:
            wrap = _WRAPPERS[key] = unit_wrapper(cls.EQUATIONS.formula(name).unit, cls.base_unit(name))
        return wrap

    def variant(self, **changes: Any) -> Any:
        """A new, fully validated scenario with ``changes`` applied; this one is untouched.

        A field that follows another (``COUPLINGS``) moves with it unless it is restated too.

        Raises
        ------
        TypeError
            For a name that is not a field, listing the valid fields.
        """
        return make_variant(self, changes)

    # -- validation: every declared field through its Knob, then what fields must agree on ---------
    def _check_fields(self) -> dict[str, Any]:
        """Check and normalise every declared field; returns their base-unit magnitudes by name."""
        owner = type(self).__name__
        for name in ("name", "description"):
            value = getattr(self, name, "")
            if not isinstance(value, str):
                raise FieldError(owner, name, f"must be a string, got {type(value).__name__} {value!r}")
        magnitudes: dict[str, Any] = {}
        made_from = ORIGIN.get()
        # variant(): a field left as it was (the very same object) was checked when the origin was made
        known = made_from._checked if type(made_from) is type(self) else {}  # noqa: SLF001 - same class
        declared_fields, limited = _declared(type(self))
        for name, declared in declared_fields:
            value = getattr(self, name)
            if name in known and value is getattr(made_from, name):
                magnitudes[name] = known[name]
                continue
            stored, magnitudes[name] = declared.check(owner, name, value)
            object.__setattr__(self, name, stored)
        object.__setattr__(self, "_checked", dict(magnitudes))
        if limited:
            changed = changed_fields()
            for name, declared in limited:  # a limit a record sets: checked on every kind alike
                declared.within.check(self, name, magnitudes[name], changed)  # type: ignore[union-attr]
        if np.ndarray not in set(map(type, magnitudes.values())):
            return magnitudes  # no array: nothing to broadcast
        arrays = {k: np.shape(v) for k, v in magnitudes.items() if isinstance(v, np.ndarray) and v.ndim}
        if len(arrays) > 1:
            try:
                np.broadcast_shapes(*arrays.values())
            except ValueError:
                shapes = ", ".join(f"{k} {v}" for k, v in arrays.items())
                msg = f"array fields must broadcast against each other (a sweep grid), got shapes {shapes}"
                raise FieldError(owner, next(reversed(arrays)), msg) from None
        return magnitudes

    def _check_grid(self, parts: Mapping[str, Any]) -> None:
        """Refuse array fields, here and in the scenarios composed, that do not form one sweep grid.

        ``parts`` maps a dotted prefix (``"state."``, ``"layout.activations."``) to a composed scenario or ``None``.
        Two arrays that cannot broadcast (a layout's ``data_parallel`` of 3 values beside its state's
        ``bytes_per_value`` of 2) are refused naming this scenario's own swept field (else the first part's), with
        every shape, before an equation mixes them.
        """
        own = {k: np.shape(v) for k, v in self._checked.items() if isinstance(v, np.ndarray) and v.ndim}
        arrays = dict(own)
        for prefix, part in parts.items():
            checked = getattr(part, "_checked", {})
            arrays |= {prefix + k: np.shape(v) for k, v in checked.items() if isinstance(v, np.ndarray) and v.ndim}
        if len(arrays) < 2:
            return
        try:
            np.broadcast_shapes(*arrays.values())
        except ValueError:
            shapes = ", ".join(f"{k} {v}" for k, v in arrays.items())
            msg = f"array fields must broadcast against each other (a sweep grid), got shapes {shapes}"
            field = next(reversed(own)) if own else next(iter(parts)).split(".")[0]
            raise FieldError(type(self).__name__, field, msg) from None

    def _set_env(self, values: dict[str, Any], needs: Mapping[str, str]) -> None:
        equations = type(self).EQUATIONS
        object.__setattr__(self, "_env", Env(values, needs, equations.formulas, equations.constants))

    def field_bounds(self, name: str) -> tuple[float, float | None]:
        """The range field ``name`` accepts in this scenario (its declaration's, unless a rule narrows it).

        A limit a record sets (``within``, the model's context window) narrows the top.
        """
        declared = knobs(self)[name]
        high = declared.high
        if declared.within is not None:
            limit = declared.within.limit(self)
            if limit is not None:
                high = limit if high is None else min(high, limit)
        return declared.low, high

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

    def swept_fields(self) -> list[str]:
        """The fields that hold arrays."""
        return [name for name, value in self.inputs().items() if _is_array_value(value)]

    # -- display: thin doors to the renderers ---------------------------------------------------
    def __repr__(self) -> str:
        from mlsysim_nb.render.text import one_line

        return f"<{type(self).__name__}: {one_line(str(self.headline()))}>"

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
