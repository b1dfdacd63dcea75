"""Equations written once, as data: parsed, evaluated and rendered from one string.

A :class:`Formula` holds a restricted arithmetic expression over named
quantities, such as ``"parameters * bytes_per_value"``. The string is parsed
with :mod:`ast` once, when the module that declares it loads; only numbers,
names, ``+ - * / // **``, unary minus, ``<=`` and the calls ``floor``,
``ceil``, ``min`` and ``max`` are allowed, and nothing is ever passed to
``eval``. The parsed tree is then

* compiled into a plain Python closure over magnitudes (bytes, seconds,
  counts), which runs unchanged on floats and NumPy arrays, and
* rendered as text, HTML or LaTeX, symbolically or with numbers substituted.

So the code that computes a quantity and the equation a student reads are
the same object and cannot drift apart.

A few equations of the model choose between two expressions (adapter mode
versus full tuning, an explicit sequence length versus the workload's
context). Those are written as a formula with :class:`Case` entries: each case
is itself a restricted expression, and a boolean input names which applies.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsysim_nb.formula.grammar import BINARY, FUNCTIONS, FormulaSyntaxError, callee, check, names
from mlsysim_nb.formula.rendering import HTML, LATEX, TEXT, format_number, render

__all__ = ["Case", "Formula", "FormulaSyntaxError", "Symbol", "format_number"]

Getter = Callable[[str], Any]
Compiled = Callable[[Getter], Any]


@dataclass(frozen=True)
class Symbol:
    """How one named quantity is written in an equation: ``M`` with subscript ``w``."""

    letter: str
    sub: str = ""

    def text(self) -> str:
        """Plain-text form, e.g. ``M_w``."""
        return f"{self.letter}_{self.sub}" if self.sub else self.letter

    def html(self) -> str:
        """HTML form, e.g. ``<var>M</var><sub>w</sub>``."""
        from html import escape

        out = f"<var>{escape(self.letter)}</var>"
        if self.sub:
            out += f"<sub>{escape(self.sub)}</sub>"
        return out

    def latex(self) -> str:
        r"""LaTeX form, e.g. ``M_{\\mathrm{w}}``."""
        if not self.sub:
            return self.letter
        return f"{self.letter}_{{\\mathrm{{{self.sub}}}}}"


def _compile(node: ast.AST) -> Compiled:
    """Turn a checked tree into a closure ``f(get)``; ``get(name)`` supplies magnitudes."""
    if isinstance(node, ast.Expression):
        return _compile(node.body)
    if isinstance(node, ast.Constant):
        value = node.value
        return lambda get: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda get: get(name)
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        return lambda get: -operand(get)
    if isinstance(node, ast.BinOp):
        return _binary(BINARY[type(node.op)][0], node.left, node.right)
    if isinstance(node, ast.Compare):
        left, right = _compile(node.left), _compile(node.comparators[0])
        return lambda get: left(get) <= right(get)
    if isinstance(node, ast.Call):
        fn = FUNCTIONS[callee(node)]
        args = [_compile(a) for a in node.args]
        return lambda get: fn(*(a(get) for a in args))
    msg = f"cannot compile {type(node).__name__}"  # pragma: no cover - _check refuses it
    raise FormulaSyntaxError(msg)


def _binary(op: Callable[[Any, Any], Any], left_node: ast.AST, right_node: ast.AST) -> Compiled:
    """``op(left, right)``, with a name or a number on either side read in place rather than through a closure.

    Most operands are names or numbers; reading them inline halves the calls an evaluation makes.
    """
    if isinstance(left_node, ast.Name) and isinstance(right_node, ast.Name):
        a, b = left_node.id, right_node.id
        return lambda get: op(get(a), get(b))
    if isinstance(left_node, ast.Name) and isinstance(right_node, ast.Constant):
        a, c = left_node.id, right_node.value
        return lambda get: op(get(a), c)
    if isinstance(left_node, ast.Constant) and isinstance(right_node, ast.Name):
        c, b = left_node.value, right_node.id
        return lambda get: op(c, get(b))
    left, right = _compile(left_node), _compile(right_node)
    if isinstance(right_node, ast.Name):
        b = right_node.id
        return lambda get: op(left(get), get(b))
    if isinstance(left_node, ast.Name):
        a = left_node.id
        return lambda get: op(get(a), right(get))
    return lambda get: op(left(get), right(get))


# -- the records ---------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One branch of a formula that chooses between expressions.

    ``when`` names a boolean input; the first case whose ``when`` is true (or
    that has no ``when``) applies. ``label`` says in words when it applies.
    """

    label: str
    expression: str
    when: str | None = None
    tree: ast.Expression = field(init=False, repr=False, compare=False)
    compiled: Compiled = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            tree = ast.parse(self.expression, mode="eval")
        except SyntaxError as err:
            msg = f"cannot parse formula {self.expression!r}: {err.msg}"
            raise FormulaSyntaxError(msg) from None
        check(tree, self.expression)
        object.__setattr__(self, "tree", tree)
        object.__setattr__(self, "compiled", _compile(tree))

    @property
    def inputs(self) -> tuple[str, ...]:
        """The names this case reads, in reading order."""
        return names(self.tree)


@dataclass(frozen=True)
class Formula:
    """One named quantity's equation, in the restricted grammar.

    Parameters
    ----------
    name
        The quantity it defines; the same name as the scenario property.
    expression
        The equation's right-hand side, e.g. ``"parameters * bytes_per_value"``.
        Give either this or ``cases``.
    doc
        One sentence saying what the quantity is.
    unit
        The unit of the returned quantity (``""`` for a plain number).
    cases
        For the few equations that choose between expressions.
    note
        Where the model's equation gives an odd but defined answer, why.
    """

    name: str
    expression: str = ""
    doc: str = ""
    unit: str = ""
    cases: tuple[Case, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        if bool(self.expression) == bool(self.cases):
            msg = f"formula {self.name!r}: give an expression or cases, not both or neither"
            raise FormulaSyntaxError(msg)
        if self.expression:
            object.__setattr__(self, "cases", (Case("always", self.expression),))

    @property
    def is_branching(self) -> bool:
        """True for the equations that choose between expressions."""
        return len(self.cases) > 1

    @property
    def inputs(self) -> tuple[str, ...]:
        """Every name any case reads (and the case conditions)."""
        seen: dict[str, None] = {}
        for case in self.cases:
            if case.when:
                seen.setdefault(case.when, None)
            for name in case.inputs:
                seen.setdefault(name, None)
        return tuple(seen)

    def case(self, get: Getter) -> Case:
        """The case that applies, given the inputs (with a swept flag: the first case that holds anywhere)."""
        for case in self.cases:
            if case.when is None or np.any(get(case.when)):
                return case
        return self.cases[-1]

    def evaluate(self, get: Getter | Mapping[str, Any]) -> Any:
        """The value on magnitudes; ``get`` is a mapping or a function of a name.

        Cases are tried in order and only the one that applies is evaluated. A flag that is a NumPy
        array (a sweep over a choice) makes each element take the first case whose flag holds there.
        """
        getter: Getter = get if callable(get) else get.__getitem__  # a Mapping is not callable (isinstance costs 1 us)
        for case in self.cases:
            if case.when is None:
                return case.compiled(getter)
            flag = getter(case.when)
            if isinstance(flag, np.ndarray) and flag.ndim > 0:
                return self._elementwise(getter)
            if flag:
                return case.compiled(getter)
        return self.cases[-1].compiled(getter)

    def _elementwise(self, getter: Getter) -> Any:
        """Each element of a sweep takes the first case whose flag is true there (``np.select``)."""
        guarded = [case for case in self.cases if case.when is not None]
        conditions = [np.asarray(getter(str(case.when))).astype(np.bool_) for case in guarded]
        values = [case.compiled(getter) for case in guarded]
        rest = [case for case in self.cases if case.when is None]
        fallback = rest[0].compiled(getter) if rest else values[-1]
        return np.select(conditions, values, default=fallback)

    # rendering: a formula renders case by case
    def render(
        self,
        symbols: Mapping[str, Symbol],
        fmt: str = "text",
        *,
        case: Case | None = None,
        values: Mapping[str, str] | None = None,
    ) -> str:
        """The right-hand side in ``fmt`` (``text``, ``html`` or ``latex``).

        With ``values`` (name -> already formatted string) the numbers are
        substituted for the symbols.
        """
        style = {"text": TEXT, "html": HTML, "latex": LATEX}[fmt]
        chosen = case or self.cases[0]

        def leaf(name: str) -> str:
            if values is not None and name in values:
                return values[name]
            sym = symbols.get(name, Symbol(name))
            return {"text": sym.text, "html": sym.html, "latex": sym.latex}[fmt]()

        return render(chosen.tree, style, leaf)

    def equations(self, symbols: Mapping[str, Symbol]) -> list[str]:
        """Plain-text equations, one per case, for docstrings and ``help()``."""
        lhs = symbols.get(self.name, Symbol(self.name)).text()
        lines = []
        for case in self.cases:
            rhs = self.render(symbols, case=case)
            where = "" if not self.is_branching else f"    ({case.label})"
            lines.append(f"{lhs} = {rhs}{where}")
        return lines

    def docstring(self, symbols: Mapping[str, Symbol]) -> str:
        """The docstring a property built from this formula carries."""
        parts = [self.doc or self.name, ""]
        parts += ["Equation::", ""]
        parts += [f"    {line}" for line in self.equations(symbols)]
        parts += ["", "In code: " + "; ".join(c.expression for c in self.cases)]
        if self.unit:
            parts += ["", f"Unit: {self.unit}."]
        if self.note:
            parts += ["", self.note]
        return "\n".join(parts)
