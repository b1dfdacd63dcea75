"""Rendering a checked formula tree as text, HTML or LaTeX, with symbols or numbers.

One renderer walks the tree; a :class:`_Style` per output format spells the
operators (pint's habit: one model, one formatter per format).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsysim_nb.formula.grammar import BINARY, FormulaSyntaxError, callee

__all__ = ["HTML", "LATEX", "TEXT", "format_number", "render"]


Leaf = Callable[[str], str]


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


@dataclass(frozen=True)
class _Style:
    """The spellings of one output format: operators, brackets and how numbers print."""

    mul: str
    div: str
    minus: str
    le: str
    floor: tuple[str, str]
    ceil: tuple[str, str]
    parens: tuple[str, str]
    power: str  # a format string with {base} and {exponent}
    function: str  # how a called function's name is written, with {name}
    number: Callable[[Any], str]

    def paren(self, text: str) -> str:
        """``text`` in round brackets."""
        return self.parens[0] + text + self.parens[1]

    def floordiv(self, a: str, b: str) -> str:
        """``⌊a / b⌋``."""
        return self.floor[0] + a + self.div + b + self.floor[1]

    def call(self, name: str, args: list[str]) -> str:
        """``⌊x⌋``, ``⌈x⌉``, or ``max(a, b)``."""
        if name in ("floor", "ceil"):
            left, right = self.floor if name == "floor" else self.ceil
            return left + args[0] + right
        return self.function.format(name=name) + self.paren(", ".join(args))


TEXT = _Style(
    mul=" · ",
    div=" / ",
    minus=" − ",
    le=" ≤ ",
    floor=("⌊", "⌋"),
    ceil=("⌈", "⌉"),
    parens=("(", ")"),
    power="{base}^{exponent}",
    function="{name}",
    number=format_number,
)
HTML = _Style(
    mul=" &middot; ",
    div=" / ",
    minus=" - ",
    le=" &le; ",
    floor=("&lfloor;", "&rfloor;"),
    ceil=("&lceil;", "&rceil;"),
    parens=("(", ")"),
    power="{base}<sup>{exponent}</sup>",
    function="{name}",
    number=lambda v: format_number(v, html=True),
)
LATEX = _Style(
    mul=r" \cdot ", div=" / ", minus=" - ", le=r" \le ", floor=(r"\left\lfloor ", r" \right\rfloor"),
    ceil=(r"\left\lceil ", r" \right\rceil"), parens=(r"\left(", r"\right)"), power="{{{base}}}^{{{exponent}}}",
    function=r"\{name}", number=lambda v: format_number(v, latex=True),
)  # fmt: skip


def _precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BinOp):
        return BINARY[type(node.op)][2]
    if isinstance(node, ast.UnaryOp):
        return 3
    if isinstance(node, ast.Compare):
        return 0
    return 5


def _comparand(node: ast.AST, style: _Style, leaf: Leaf) -> str:
    """One side of a comparison; a comparison there keeps its brackets (``a ≤ (b ≤ c)`` is not a chain)."""
    text = render(node, style, leaf)
    return style.paren(text) if isinstance(node, ast.Compare) else text


def render(node: ast.AST, style: _Style, leaf: Leaf) -> str:  # noqa: C901 - one branch per node kind
    """Render a checked tree with the spellings of ``style``; ``leaf`` writes names."""
    if isinstance(node, ast.Expression):
        return render(node.body, style, leaf)
    if isinstance(node, ast.Constant):
        return style.number(node.value)  # _check allows only int and float constants
    if isinstance(node, ast.Name):
        return leaf(node.id)
    if isinstance(node, ast.UnaryOp):
        inner = render(node.operand, style, leaf)
        return "-" + (style.paren(inner) if _precedence(node.operand) < 3 else inner)
    if isinstance(node, ast.Call):
        return style.call(callee(node), [render(a, style, leaf) for a in node.args])
    if isinstance(node, ast.Compare):
        left, right = (_comparand(n, style, leaf) for n in (node.left, node.comparators[0]))
        return left + style.le + right
    if not isinstance(node, ast.BinOp):  # pragma: no cover - _check allows nothing else
        msg = f"cannot render {type(node).__name__}"
        raise FormulaSyntaxError(msg)
    prec = _precedence(node)
    left = render(node.left, style, leaf)
    right = render(node.right, style, leaf)
    if _precedence(node.left) < prec or (isinstance(node.op, ast.Pow) and _precedence(node.left) <= prec):
        left = style.paren(left)
    # the right side of -, / and // (written a / b inside the floor brackets) needs brackets at equal precedence too
    tight = isinstance(node.op, (ast.Sub, ast.Div, ast.FloorDiv))
    if _precedence(node.right) < prec or (tight and _precedence(node.right) == prec):
        right = style.paren(right)
    if isinstance(node.op, ast.FloorDiv):
        return style.floordiv(left, right)
    if isinstance(node.op, ast.Pow):
        return style.power.format(base=left, exponent=right)
    symbol = {ast.Add: " + ", ast.Sub: style.minus, ast.Mult: style.mul, ast.Div: style.div}
    return left + symbol[type(node.op)] + right
