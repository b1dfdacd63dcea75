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

A few equations of the seeds choose between two expressions (adapter mode
versus full tuning, an explicit sequence length versus the workload's
context). Those are written as a formula with :class:`Case` entries: each case
is itself a restricted expression, and a boolean input names which applies.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Case", "Formula", "FormulaSyntaxError", "Symbol"]

Getter = Callable[[str], Any]
Compiled = Callable[[Getter], Any]


class FormulaSyntaxError(ValueError):
    """An expression uses something outside the restricted grammar."""


def _floor(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.floor(x)
    return math.floor(x)


def _ceil(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.ceil(x)
    return math.ceil(x)


def _max(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.maximum(a, b)
    return max(a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.minimum(a, b)
    return min(a, b)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "floor": _floor,
    "ceil": _ceil,
    "max": _max,
    "min": _min,
}

_BINARY: dict[type, tuple[Callable[[Any, Any], Any], str, int]] = {
    # operator: (function, text symbol, precedence)
    ast.Add: (lambda a, b: a + b, "+", 1),
    ast.Sub: (lambda a, b: a - b, "-", 1),
    ast.Mult: (lambda a, b: a * b, "*", 2),
    ast.Div: (lambda a, b: a / b, "/", 2),
    ast.FloorDiv: (lambda a, b: a // b, "//", 2),
    ast.Pow: (lambda a, b: a**b, "**", 4),
}


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


def _check(node: ast.AST, expression: str) -> None:
    """Refuse anything outside the grammar, naming it."""
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.USub,
        ast.Name,
        ast.Load,
        ast.Constant,
        ast.Call,
        ast.Compare,
        ast.LtE,
        *_BINARY,
    )
    for sub in ast.walk(node):
        if not isinstance(sub, allowed):
            msg = f"{type(sub).__name__} is not allowed in a formula: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, (int, float)):
            msg = f"only numeric constants are allowed: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Call) and (
            not isinstance(sub.func, ast.Name) or sub.func.id not in _FUNCTIONS or sub.keywords
        ):
            msg = f"only {sorted(_FUNCTIONS)} may be called in a formula: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Compare) and len(sub.ops) != 1:
            msg = f"chained comparisons are not allowed: {expression!r}"
            raise FormulaSyntaxError(msg)


def _callee(node: ast.Call) -> str:
    """The called function's name (``_check`` guarantees a plain name)."""
    if not isinstance(node.func, ast.Name):  # pragma: no cover - refused by _check
        msg = "only plain function names may be called"
        raise FormulaSyntaxError(msg)
    return node.func.id


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
        op = _BINARY[type(node.op)][0]
        left, right = _compile(node.left), _compile(node.right)
        return lambda get: op(left(get), right(get))
    if isinstance(node, ast.Compare):
        left, right = _compile(node.left), _compile(node.comparators[0])
        return lambda get: left(get) <= right(get)
    if isinstance(node, ast.Call):
        fn = _FUNCTIONS[_callee(node)]
        args = [_compile(a) for a in node.args]
        return lambda get: fn(*(a(get) for a in args))
    msg = f"cannot compile {type(node).__name__}"  # pragma: no cover - _check refuses it
    raise FormulaSyntaxError(msg)


def _names(node: ast.AST) -> tuple[str, ...]:
    """Names used by an expression, in order of first appearance."""
    callees = {id(sub.func) for sub in ast.walk(node) if isinstance(sub, ast.Call)}
    names = [sub for sub in ast.walk(node) if isinstance(sub, ast.Name) and id(sub) not in callees]
    seen: dict[str, None] = {sub.id: None for sub in names}
    # ast.walk is breadth-first; order by source position for reading order
    positions = {sub.id: (sub.lineno, sub.col_offset) for sub in reversed(names)}
    return tuple(sorted(seen, key=lambda n: positions[n]))


# -- rendering ---------------------------------------------------------------

Leaf = Callable[[str], str]


@dataclass(frozen=True)
class _Style:
    """The operator spellings of one output format."""

    mul: str
    div: str
    floordiv: Callable[[str, str], str]
    power: Callable[[str, str], str]
    le: str
    call: Callable[[str, list[str]], str]
    paren: Callable[[str], str]
    number: Callable[[Any], str]


def _num_text(v: float) -> str:
    return format_number(v)


TEXT = _Style(
    mul=" · ",
    div=" / ",
    floordiv=lambda a, b: f"⌊{a} / {b}⌋",
    power=lambda a, b: f"{a}^{b}",
    le=" ≤ ",
    call=lambda f, args: (
        f"⌊{args[0]}⌋" if f == "floor" else f"⌈{args[0]}⌉" if f == "ceil" else f"{f}({', '.join(args)})"
    ),
    paren=lambda s: f"({s})",
    number=_num_text,
)
HTML = _Style(
    mul=" &middot; ",
    div=" / ",
    floordiv=lambda a, b: f"&lfloor;{a} / {b}&rfloor;",
    power=lambda a, b: f"{a}<sup>{b}</sup>",
    le=" &le; ",
    call=lambda f, args: (
        f"&lfloor;{args[0]}&rfloor;"
        if f == "floor"
        else f"&lceil;{args[0]}&rceil;"
        if f == "ceil"
        else f"{f}({', '.join(args)})"
    ),
    paren=lambda s: f"({s})",
    number=lambda v: format_number(v, html=True),
)
LATEX = _Style(
    mul=r" \cdot ",
    div=" / ",
    floordiv=lambda a, b: rf"\left\lfloor {a} / {b} \right\rfloor",
    power=lambda a, b: f"{{{a}}}^{{{b}}}",
    le=r" \le ",
    call=lambda f, args: (
        rf"\lfloor {args[0]} \rfloor"
        if f == "floor"
        else rf"\lceil {args[0]} \rceil"
        if f == "ceil"
        else rf"\{f}({', '.join(args)})"
    ),
    paren=lambda s: rf"\left({s}\right)",
    number=lambda v: format_number(v, latex=True),
)


def _precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)][2]
    if isinstance(node, ast.UnaryOp):
        return 3
    if isinstance(node, ast.Compare):
        return 0
    return 5


def _render(node: ast.AST, style: _Style, leaf: Leaf) -> str:  # noqa: C901 - one branch per node kind
    """Render a checked tree with the spellings of ``style``; ``leaf`` writes names."""
    if isinstance(node, ast.Expression):
        return _render(node.body, style, leaf)
    if isinstance(node, ast.Constant):
        return style.number(node.value)  # _check allows only int and float constants
    if isinstance(node, ast.Name):
        return leaf(node.id)
    if isinstance(node, ast.UnaryOp):
        inner = _render(node.operand, style, leaf)
        return "-" + (style.paren(inner) if _precedence(node.operand) < 3 else inner)
    if isinstance(node, ast.Call):
        return style.call(_callee(node), [_render(a, style, leaf) for a in node.args])
    if isinstance(node, ast.Compare):
        left = _render(node.left, style, leaf)
        right = _render(node.comparators[0], style, leaf)
        return left + style.le + right
    if not isinstance(node, ast.BinOp):  # pragma: no cover - _check allows nothing else
        msg = f"cannot render {type(node).__name__}"
        raise FormulaSyntaxError(msg)
    prec = _precedence(node)
    left = _render(node.left, style, leaf)
    right = _render(node.right, style, leaf)
    if isinstance(node.op, ast.FloorDiv):
        return style.floordiv(left, right)
    if _precedence(node.left) < prec or (isinstance(node.op, ast.Pow) and _precedence(node.left) <= prec):
        left = style.paren(left)
    # the right side of - and / needs brackets at equal precedence too
    tight = isinstance(node.op, (ast.Sub, ast.Div))
    if _precedence(node.right) < prec or (tight and _precedence(node.right) == prec):
        right = style.paren(right)
    if isinstance(node.op, ast.Pow):
        return style.power(left, right)
    symbol = {ast.Add: " + ", ast.Sub: " − " if style is TEXT else " - ", ast.Mult: style.mul, ast.Div: style.div}
    return left + symbol[type(node.op)] + right


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_number(value: Any, *, digits: int = 4, html: bool = False, latex: bool = False) -> str:
    """A fixed, deterministic spelling of a number: ``1.5×10⁹``, ``26``, ``0.2794``.

    Integers below a million print whole; everything else to ``digits``
    significant digits, switching to powers of ten outside 1e-3..1e6.
    """
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    if v != 0 and not (1e-3 <= abs(v) < 1e6):
        mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        exp = int(exponent)
        if html:
            return f"{mantissa}&times;10<sup>{exp}</sup>"
        if latex:
            return rf"{mantissa} \times 10^{{{exp}}}"
        return f"{mantissa}×10{str(exp).translate(_SUPERSCRIPT)}"
    text = f"{v:.{digits}g}"
    if "e" in text:  # .g may still choose an exponent near the edges
        text = f"{v:.{max(digits - 1, 0)}f}"
    return text


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
        _check(tree, self.expression)
        object.__setattr__(self, "tree", tree)
        object.__setattr__(self, "compiled", _compile(tree))

    @property
    def inputs(self) -> tuple[str, ...]:
        """The names this case reads, in reading order."""
        return _names(self.tree)


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
        Where the seed's equation gives an odd but defined answer, why.
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
        """The case that applies, given the inputs."""
        for case in self.cases:
            if case.when is None or get(case.when):
                return case
        return self.cases[-1]

    def evaluate(self, get: Getter | Mapping[str, Any]) -> Any:
        """The value on magnitudes; ``get`` is a mapping or a function of a name."""
        getter: Getter = get.__getitem__ if isinstance(get, Mapping) else get
        return self.case(getter).compiled(getter)

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

        return _render(chosen.tree, style, leaf)

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


def all_inputs(formulas: Sequence[Formula]) -> set[str]:
    """Every name read by any of ``formulas``."""
    return {name for f in formulas for name in f.inputs}
