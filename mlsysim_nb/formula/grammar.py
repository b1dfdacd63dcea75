"""The restricted grammar of formulas: what an expression may contain, and how it is checked.

Only numbers, names, ``+ - * / // **``, unary minus, ``<=`` and the calls
``floor``, ``ceil``, ``min`` and ``max``. :func:`check` refuses anything else
when a formula is declared, so nothing outside this list is ever evaluated.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BINARY", "FUNCTIONS", "FormulaSyntaxError", "callee", "check", "names"]


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


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "floor": _floor,
    "ceil": _ceil,
    "max": _max,
    "min": _min,
}

BINARY: dict[type, tuple[Callable[[Any, Any], Any], str, int]] = {
    # operator: (function, text symbol, precedence); the function is the C one Python's operator calls
    ast.Add: (operator.add, "+", 1),
    ast.Sub: (operator.sub, "-", 1),
    ast.Mult: (operator.mul, "*", 2),
    ast.Div: (operator.truediv, "/", 2),
    ast.FloorDiv: (operator.floordiv, "//", 2),
    ast.Pow: (operator.pow, "**", 4),
}


def check(node: ast.AST, expression: str) -> None:
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
        *BINARY,
    )
    for sub in ast.walk(node):
        if not isinstance(sub, allowed):
            msg = f"{type(sub).__name__} is not allowed in a formula: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, (int, float)):
            msg = f"only numeric constants are allowed: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Call) and (
            not isinstance(sub.func, ast.Name) or sub.func.id not in FUNCTIONS or sub.keywords
        ):
            msg = f"only {sorted(FUNCTIONS)} may be called in a formula: {expression!r}"
            raise FormulaSyntaxError(msg)
        if isinstance(sub, ast.Compare) and len(sub.ops) != 1:
            msg = f"chained comparisons are not allowed: {expression!r}"
            raise FormulaSyntaxError(msg)


def callee(node: ast.Call) -> str:
    """The called function's name (``_check`` guarantees a plain name)."""
    if not isinstance(node.func, ast.Name):  # pragma: no cover - refused by _check
        msg = "only plain function names may be called"
        raise FormulaSyntaxError(msg)
    return node.func.id


def names(node: ast.AST) -> tuple[str, ...]:
    """Names used by an expression, in order of first appearance."""
    callees = {id(sub.func) for sub in ast.walk(node) if isinstance(sub, ast.Call)}
    names = [sub for sub in ast.walk(node) if isinstance(sub, ast.Name) and id(sub) not in callees]
    seen: dict[str, None] = {sub.id: None for sub in names}
    # ast.walk is breadth-first; order by source position for reading order
    positions = {sub.id: (sub.lineno, sub.col_offset) for sub in reversed(names)}
    return tuple(sorted(seen, key=lambda n: positions[n]))
