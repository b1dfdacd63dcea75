"""The formula engine's round trips: what a formula renders reads back as the same formula; arrays equal scalars.

The text rendering is what a student reads (``M_w = P · b_val``); read back with the spellings swapped for
Python's (``·`` for ``*``, ``⌊x⌋`` for ``floor(x)``, ...) it must be the expression that was parsed, bracket for
bracket (``a // b`` and ``floor(a / b)`` both show as ``⌊a / b⌋``, so they count as one). A sweep evaluates a formula once on arrays; each element must be the formula on that element's scalars.
"""

from __future__ import annotations

import ast
import math
import re

import numpy as np
from hypothesis import example, given, reject
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlsysim_nb import kinds
from mlsysim_nb.formula import Formula
from tests.strategies import formula_expressions

# the text rendering's spellings, and Python's for the same thing
_TEXT_TO_PYTHON = [(" · ", " * "), (" − ", " - "), (" ≤ ", " <= "), ("^", "**"), ("⌊", "floor("), ("⌈", "ceil(")]
_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def _read_text(text: str) -> ast.Expression:
    """Parse a text rendering back into a Python expression tree."""
    for shown, python in _TEXT_TO_PYTHON:
        text = text.replace(shown, python)
    text = re.sub(r"[⌋⌉]", ")", text)
    text = re.sub(r"×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "e" + m.group(1).translate(_SUPERSCRIPT), text)
    return ast.parse(text, mode="eval")


_ADDITIVE = {ast.Add: 1, ast.Sub: -1}
_MULTIPLICATIVE = {ast.Mult: 1, ast.Div: -1}


def _chain(node: ast.AST, ops: dict[type, int], sign: int = 1) -> list[tuple[int, object]]:
    """The terms of a chain of ``+ -`` (or of ``* /``), each with its sign (or its power, 1 or -1), in order."""
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return _chain(node.left, ops, sign) + _chain(node.right, ops, sign * ops[type(node.op)])
    return [(sign, _canonical(node))]


def _canonical(node: ast.AST) -> object:
    """The tree up to what a rendering may rewrite, which the reader cannot tell apart.

    ``a + (b − c)`` is ``a + b − c``, ``a · (b / c)`` is ``a · b / c``, ``a // b`` is ``floor(a / b)`` (both show
    as ``⌊a / b⌋``), and ``3`` is ``3.0``. Signs and order are kept, so a misplaced bracket (``a − b + c`` for
    ``a − (b + c)``) still differs.
    """
    if isinstance(node, ast.Expression):
        return _canonical(node.body)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.FloorDiv):
            return ("floor", (_canonical(ast.BinOp(node.left, ast.Div(), node.right)),))
        if isinstance(node.op, ast.Pow):
            return ("**", _canonical(node.left), _canonical(node.right))
        ops = _ADDITIVE if type(node.op) in _ADDITIVE else _MULTIPLICATIVE
        return ("+" if ops is _ADDITIVE else "*", tuple(_chain(node, ops)))
    if isinstance(node, ast.UnaryOp):
        return ("-", _canonical(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return (node.func.id, tuple(_canonical(a) for a in node.args))
    if isinstance(node, ast.Compare):
        return ("<=", _canonical(node.left), _canonical(node.comparators[0]))
    if isinstance(node, ast.Constant):
        return float(node.value)
    assert isinstance(node, ast.Name), ast.dump(node)
    return node.id


@given(formula_expressions())
@example("(a) <= ((b) <= (c))")  # was shown as the chain a ≤ b ≤ c
@example("(a) // ((b) + (c))")  # was shown as ⌊a / b + c⌋
@example("(a) - ((b) + (c))")
@example("(a) / ((b) * (c))")
@example("-((a) ** 2) + (-(a)) ** 3 + (a) ** (-(b))")
@example("max(floor(a), ceil((b) / 2.5)) * min(a, 0.125)")
def test_text_rendering_reads_back_as_the_parsed_expression(expression: str) -> None:
    """Parsed, rendered as text and read back, an expression gives the same tree (brackets exactly where precedence needs them)."""
    formula = Formula("q", expression)
    rendered = formula.render({})
    assert _canonical(_read_text(rendered)) == _canonical(formula.cases[0].tree), rendered


_POSITIVE = st.floats(0.5, 1e4, allow_nan=False, allow_infinity=False)


def _elementwise_equal(swept: object, one_by_one: list[object]) -> bool:
    values = np.broadcast_to(np.asarray(swept, dtype=float), (len(one_by_one),))
    return all(
        math.isclose(float(v), float(w), rel_tol=1e-12, abs_tol=1e-12) for v, w in zip(values, one_by_one, strict=True)
    )


def _scalars(formula: Formula, inputs: dict[str, np.ndarray], i: int) -> object:
    try:
        return formula.evaluate({k: v[i].item() for k, v in inputs.items()})
    except (ZeroDivisionError, OverflowError):
        reject()  # the scalar path raises where the array path gives inf or nan: not this property's question


@given(formula_expressions(comparisons=False), st.data())
def test_an_expression_on_arrays_is_the_expression_on_each_element(expression: str, data: st.DataObject) -> None:
    """Evaluated on arrays, each element equals the evaluation on that element's scalars."""
    formula = Formula("q", expression)
    size = data.draw(st.integers(1, 6))
    inputs = {n: np.array(data.draw(st.lists(_POSITIVE, min_size=size, max_size=size))) for n in formula.inputs}
    one_by_one = [_scalars(formula, inputs, i) for i in range(size)]
    with np.errstate(all="ignore"):
        swept = formula.evaluate(inputs)
    assert _elementwise_equal(swept, one_by_one), (expression, swept, one_by_one)


def _shipped() -> dict[str, Formula]:
    """Every shipped formula, from each kind's own equations."""
    shipped: dict[str, Formula] = {}
    for kind in kinds.all_kinds():
        shipped.update(kind.load().EQUATIONS.formulas)
    return shipped


SHIPPED = _shipped()


_INPUTS = sorted({n for f in SHIPPED.values() for n in f.inputs})
_FLAGS = {case.when for f in SHIPPED.values() for case in f.cases if case.when}


@given(st.integers(1, 4).flatmap(lambda size: arrays(np.float64, (len(_INPUTS), size), elements=_POSITIVE)), st.data())
def test_every_shipped_formula_on_arrays_is_the_formula_on_each_element(table: np.ndarray, data: st.DataObject) -> None:
    """Each shipped formula, its inputs (flags too) drawn at random, evaluated on arrays equals it on scalars."""
    size = table.shape[1]
    flags = data.draw(arrays(np.bool_, (len(_FLAGS), size)), label="flags")
    inputs = dict(zip(_INPUTS, table, strict=True)) | dict(zip(sorted(_FLAGS), flags, strict=True))
    differ = {}
    for name, formula in SHIPPED.items():
        mine = {n: inputs[n] for n in formula.inputs}
        try:
            one_by_one = [formula.evaluate({k: v[i].item() for k, v in mine.items()}) for i in range(size)]
        except (ZeroDivisionError, OverflowError):
            continue  # the scalar path raises where the array path gives inf or nan: not this property's question
        with np.errstate(all="ignore"):
            swept = formula.evaluate(mine)
        if not _elementwise_equal(swept, one_by_one):
            differ[name] = (swept, one_by_one)
    assert differ == {}
