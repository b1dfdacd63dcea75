"""A kind's physics as a value: its formulas, the notation of what they compute, and its constants.

Each kind builds one :class:`Equations` in its own ``physics.py`` and its scenario class reads it
(``EQUATIONS``); a kind that composes others includes theirs. Nothing is registered anywhere: two kinds
that define the same name are refused when an :class:`Equations` includes both, and the same imports in
any order give the same tables.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from mlsysim_nb.formula import Case, Formula, Symbol
from mlsysim_nb.model.notation import Quantity, merge, quantity

__all__ = ["Defined", "Equations", "defined", "equation_block", "with_equations"]


@dataclass(frozen=True)
class Defined:
    """One entry of a kind's equations: a formula and the notation of the quantity it defines, side by side."""

    formula: Formula
    quantity: Quantity


def defined(
    name: str,
    expression: str = "",
    doc: str = "",
    unit: str = "",
    *,
    symbol: str,
    label: str,
    base: str = "",
    cases: tuple[Case, ...] = (),
    note: str = "",
) -> Defined:
    """A :class:`~mlsysim_nb.formula.Formula` with its quantity's ``symbol`` (``"M_w"``), ``label`` and ``base`` unit.

    ``base`` is the unit of the magnitude inside the model (``"byte"``, ``"second"``, ``""``); ``unit`` is
    what the property returns (``"GB"``).
    """
    formula = Formula(name, expression, doc, unit, cases=cases, note=note)
    return Defined(formula, quantity(symbol, base, label))


class Equations:
    """The equations of one kind: formulas in reading order, each with its quantity's notation, and constants.

    ``definitions`` pair each formula with the symbol, base unit and label of what it computes
    (:func:`defined`). ``notation`` holds the rows of the other names the kind's equations define rather
    than read from a field or a record: the flags its scenario sets, the arguments of its methods and its
    ``constants`` (name -> magnitude). ``includes`` are the equations of the kinds it composes; their
    formulas and rows come first.

    >>> toy = Equations("toy", [defined("area", "width * width", symbol="A", label="area")])
    >>> toy.evaluate("area", {"width": 3})
    9
    """

    __slots__ = ("constants", "formulas", "name", "names", "notation")
    name: str
    names: tuple[str, ...]
    formulas: Mapping[str, Formula]
    notation: Mapping[str, Quantity]
    constants: Mapping[str, Any]

    def __init__(
        self,
        name: str,
        definitions: Iterable[Defined],
        notation: Mapping[str, Quantity] | None = None,
        *,
        constants: Mapping[str, Any] | None = None,
        includes: Iterable[Equations] = (),
    ) -> None:
        entries = tuple(definitions)
        own = tuple(d.formula for d in entries)
        includes = tuple(includes)
        names = [f.name for f in own]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            msg = f"{name}: {', '.join(twice)} defined twice"
            raise ValueError(msg)
        others = dict(notation or {})
        beside = sorted(set(names) & others.keys())
        if beside:
            msg = f"{name}: {', '.join(beside)} is written with its formula, not in the other names' notation"
            raise ValueError(msg)
        constants = dict(constants or {})
        unwritten = sorted(constants.keys() - others.keys())
        if unwritten:
            msg = f"{name}: no notation row for the constant {', '.join(unwritten)}: give each a Quantity"
            raise ValueError(msg)
        notation = {**{d.formula.name: d.quantity for d in entries}, **others}
        table: dict[str, Formula] = {}
        for part in (*includes, None):
            source = own if part is None else tuple(part.formulas.values())
            where = name if part is None else part.name
            for formula in source:
                known = table.get(formula.name)
                if known is not None and known is not formula:
                    msg = f"{where} defines {formula.name!r}, which another kind's equations already define"
                    raise ValueError(msg)
                table[formula.name] = formula
        self.name = name
        self.names = tuple(names)  # this kind's own formulas, in reading order
        self.formulas = MappingProxyType(table)
        self.notation = merge([*((p.name, p.notation) for p in includes), (name, notation)])
        merged: dict[str, Any] = {}
        for part in includes:
            merged.update(part.constants)
        merged.update(constants)
        self.constants = MappingProxyType(merged)

    def __contains__(self, name: object) -> bool:
        return name in self.formulas

    def __repr__(self) -> str:
        return f"<Equations {self.name}: {len(self.formulas)} formulas>"

    def formula(self, name: str) -> Formula:
        """The formula defining ``name`` (a ``KeyError`` naming the equations when there is none)."""
        try:
            return self.formulas[name]
        except KeyError:
            msg = f"{self.name} has no formula {name!r}"
            raise KeyError(msg) from None

    def evaluate(self, name: str, inputs: Mapping[str, Any]) -> Any:
        """Formula ``name`` on base-unit magnitudes, resolving the formulas it reads and the constants."""
        cache: dict[str, Any] = {**self.constants, **inputs}
        formulas = self.formulas

        def get(key: str) -> Any:
            if key not in cache:
                if key not in formulas:
                    msg = f"{name} needs {key!r}, which was not given"
                    raise KeyError(msg)
                cache[key] = formulas[key].evaluate(get)
            return cache[key]

        return get(name)


def equation_block(equations: Equations, names: Iterable[str], symbols: Mapping[str, Symbol]) -> str:
    """The ``Equation::`` block a method's or helper's docstring ends with."""
    lines = [line for name in names for line in equations.formula(name).equations(symbols)]
    return "\n\nEquation::\n\n" + "\n".join(f"    {line}" for line in lines) + "\n"


Function = TypeVar("Function", bound=Callable[..., Any])

#: the attribute a documented function carries: the formulas whose equations its docstring shows
EQUATIONS_SHOWN = "__equations_shown__"


def with_equations(*names: str, source: Any = None) -> Callable[[Function], Function]:
    """Decorator: the function's docstring ends with the equations of formulas ``names``.

    On a scenario's method the class renders them, in its own notation, once it is defined. A function
    outside a class names its ``source``, a scenario class whose equations and notation it uses.
    """

    def decorate(fn: Function) -> Function:
        # cleandoc: method docstrings are indented deeper than functions'; normalise before appending
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
        setattr(fn, EQUATIONS_SHOWN, names)
        if source is not None:
            fn.__doc__ += equation_block(source.EQUATIONS, names, source.symbols())
        return fn

    return decorate
