"""A scenario's derivation as pure data: sections of steps, each a formula, its case and its numbers.

``explain(scenario)`` returns a :class:`Derivation` holding magnitudes, never
formatted text; the HTML, Markdown and text renderers format it (with
:func:`step_parts`). Which sections, headline and notes a scenario shows is the
scenario's own data (:mod:`mlsysim_nb.model.presentation`); every equation comes from
the scenario's own equations and notation (its class's ``EQUATIONS`` and ``notation()``), so nothing
here is retyped and nothing here knows a kind of scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.model.presentation import Headline
from mlsysim_nb.render.numbers import format_magnitude, format_result

if TYPE_CHECKING:
    from mlsysim_nb.formula import Case, Formula, Symbol
    from mlsysim_nb.model.notation import Quantity
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["Derivation", "InputRow", "Section", "Step", "choice_values", "explain", "step_parts"]


@dataclass(frozen=True)
class Step:
    """One derived quantity: the formula, the case that applies, its inputs' magnitudes and its result."""

    name: str  # the property or method, as a student types it
    formula: str  # the formula's name in the scenario's equations
    case: Case
    values: Mapping[str, Any] = field(default_factory=dict)  # inputs, base-unit magnitudes
    result: Any = None
    not_applicable: str = ""  # what it needs, when it cannot be computed
    #: in a sweep whose elements take different cases, every case some element takes (else empty)
    cases: tuple[Case, ...] = ()
    #: the formula itself, and the notation of every name it reads (the scenario's)
    equation: Formula | None = field(default=None, compare=False, repr=False)
    notation: Mapping[str, Quantity] = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        """A few words on what the quantity is."""
        row = self.notation.get(self.formula)
        return row.label if row is not None else self.formula.replace("_", " ")

    @property
    def case_label(self) -> str:
        """Which branch applies, for the few branching equations (``""`` otherwise)."""
        if len(self.cases) > 1:
            return "varies over the sweep: " + " / ".join(case.label for case in self.cases)
        return self.case.label if self.equation is not None and self.equation.is_branching else ""

    def base(self, name: str) -> str:
        """The base unit of ``name``'s magnitude in this step's notation (``""`` without a row)."""
        row = self.notation.get(name)
        return row.base if row is not None else ""


@dataclass(frozen=True)
class Section:
    """A group of steps; ``headline`` names the step whose result its summary line states."""

    title: str
    steps: tuple[Step, ...]
    headline: str = ""

    def headline_step(self) -> Step | None:
        """The step the section's summary line states."""
        return next((s for s in self.steps if s.name == self.headline), None)


@dataclass(frozen=True)
class InputRow:
    """One input and its value, already in words (a field's value is what the user gave)."""

    name: str
    label: str
    value: str
    help: str = ""  # the field's help, a tooltip on the row


@dataclass(frozen=True)
class Derivation:
    """Everything a scenario shows: title, headline, inputs, sections and notes."""

    kind: str
    title: str
    headline: Headline
    inputs: tuple[InputRow, ...]
    sections: tuple[Section, ...]
    notes: tuple[tuple[str, str], ...] = ()
    unset: tuple[str, ...] = ()  # optional inputs left at None, folded into one line
    caveats: tuple[str, ...] = ()  # what to know before reading the numbers (a segment count that misleads)

    @property
    def summary(self) -> str:
        """The headline as one line of text."""
        return str(self.headline)


def step_parts(step: Step, *, html: bool = False) -> tuple[str, str, str, str]:
    """``(symbol, equation, equation with numbers, result)`` of a step, as text or HTML."""
    style = "html" if html else "text"
    formula = step.equation
    if formula is None:
        msg = f"step {step.name!r} carries no formula"
        raise ValueError(msg)
    symbols: dict[str, Symbol] = {n: q.symbol for n, q in step.notation.items()}
    sym = symbols.get(step.formula)
    symbol = step.formula if sym is None else (sym.html() if html else sym.text())
    cases = step.cases or (step.case,)
    joiner = " <em>or</em> " if html else "  or  "
    equation = joiner.join(formula.render(symbols, style, case=case) for case in cases)
    if step.not_applicable:
        return symbol, equation, "", ""
    shown = {n: format_magnitude(step.base(n), v, html=html) for n, v in step.values.items()}
    substituted = joiner.join(formula.render(symbols, style, case=case, values=shown) for case in cases)
    result = format_result(step.base(step.formula), step.result, html=html)
    return symbol, equation, substituted, result


def _cases(formula: Any, env: Any) -> tuple[Case, ...]:
    """The cases that apply: one for a scenario; in a sweep, every case some element takes, in order.

    Element-wise as :meth:`~mlsysim_nb.formula.Formula.evaluate` evaluates: each element takes the
    first case whose flag is true there.
    """
    if not formula.is_branching:
        return (formula.cases[0],)
    remaining: Any = True
    out = []
    for case in formula.cases:
        flag = True if case.when is None else np.asarray(env.get(case.when), dtype=bool)
        if np.any(np.logical_and(remaining, flag)):
            out.append(case)
        remaining = np.logical_and(remaining, np.logical_not(flag))
        if not np.any(remaining):
            break
    return tuple(out) or (formula.cases[-1],)


def _step(scenario: Scenario, env: Any, shown: str, name: str) -> Step:
    formula = type(scenario).EQUATIONS.formula(name)
    notation = type(scenario).notation()
    cases = _cases(formula, env)
    case, mixed = cases[0], cases if len(cases) > 1 else ()
    try:
        result = env.get(name)
        values = {n: env.get(n) for c in cases for n in c.inputs}  # a case's flag is its condition, never an input
    except NotApplicableError as err:
        reason = f"not applicable: needs {err.needs}" + (f" ({err.detail})" if err.detail else "")
        return Step(shown, name, case, not_applicable=reason, cases=mixed, equation=formula, notation=notation)
    return Step(shown, name, case, values, result, cases=mixed, equation=formula, notation=notation)


def _value_text(value: Any, base: str) -> str:
    if hasattr(value, "headline"):  # a scenario inside a scenario: its one-line answer
        return str(value.headline())
    if hasattr(value, "memory") or hasattr(value, "parameters"):  # a record: the device or the workload
        return str(value.name)
    if hasattr(value, "units"):
        if value.check("[information]"):
            return format_magnitude("byte", value.m_as("byte"))
        return f"{value:~P}"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":  # a choice swept over (strategies): its values, not a range
            return choice_values(value)
        return format_magnitude(base, value)
    return str(value)


def choice_values(values: Any) -> str:
    """The distinct values of a swept choice or flag, in order of appearance: ``"none, full"``."""
    seen = dict.fromkeys(np.asarray(values).ravel().tolist())
    return ", ".join(map(str, seen))


def _inputs(scenario: Scenario) -> tuple[tuple[InputRow, ...], tuple[str, ...]]:
    rows, unset = [], []
    for name in scenario.field_names():
        if name in ("workload", "name", "description"):
            continue
        value = getattr(scenario, name)
        if value is None:
            unset.append(name)
            continue
        base = scenario.base_unit(name)
        rows.append(InputRow(name, scenario.input_label(name), _value_text(value, base), scenario.input_help(name)))
    rows.extend(InputRow(*row) for row in scenario.input_rows())
    return tuple(rows), tuple(unset)


def explain(scenario: Scenario) -> Derivation:
    """The derivation of every quantity of ``scenario``, grouped into its kind's sections. Never raises."""
    env = scenario._env.with_inputs(scenario.method_inputs())  # noqa: SLF001 - explain renders the scenario's own numbers
    sections = []
    for spec in scenario.sections():
        steps = tuple(_step(scenario, env, shown, name) for shown, name in spec.steps)
        sections.append(Section(spec.title, steps, spec.headline))
    inputs, unset = _inputs(scenario)
    return Derivation(
        kind=type(scenario).__name__,
        title=scenario.title(),
        headline=scenario.headline(),
        inputs=inputs,
        sections=tuple(sections),
        notes=scenario.NOTES,
        unset=unset,
        caveats=tuple(scenario.caveats()),
    )
