"""The restricted-expression Formula: grammar, evaluation and rendering."""

from __future__ import annotations

import numpy as np
import pytest

from mlsysim_nb.formula import Case, Formula, FormulaSyntaxError, Symbol, format_number

SYMS = {"a": Symbol("M", "w"), "b": Symbol("b", "val"), "c": Symbol("P")}


@pytest.mark.parametrize(
    "expression",
    ["__import__('os')", "a.b", "a[0]", "lambda: 1", "a if b else c", "'text'", "sum(a)", "a < b < c", "a and b"],
)
def test_grammar_refuses_everything_else(expression: str) -> None:
    """Attributes, subscripts, strings, lambdas and unknown calls are refused at parse time."""
    with pytest.raises(FormulaSyntaxError):
        Formula("x", expression)


def test_syntax_error_is_a_formula_error() -> None:
    """Unparseable text is reported as a FormulaSyntaxError."""
    with pytest.raises(FormulaSyntaxError, match="cannot parse"):
        Formula("x", "a +")


def test_evaluates_on_scalars_and_arrays() -> None:
    """The compiled closure runs on floats and on NumPy arrays alike."""
    f = Formula("x", "(a - b) / c * 2 + floor(a / 3) - a // 2 + max(a, b) ** 2")
    assert f.evaluate({"a": 10, "b": 4, "c": 3}) == 2 * (10 - 4) / 3 + 3 - 5 + 100
    arr = f.evaluate({"a": np.array([10.0, 20.0]), "b": 4, "c": 3})
    assert arr.shape == (2,)
    assert f.evaluate({"a": 20, "b": 4, "c": 3}) == arr[1]


def test_inputs_in_reading_order() -> None:
    """Inputs lists names left to right."""
    assert Formula("x", "c * (a + b)").inputs == ("c", "a", "b")


def test_cases_choose_by_flag() -> None:
    """A branching formula evaluates the first case whose flag is true."""
    f = Formula("x", cases=(Case("one", "a", when="flag"), Case("other", "b")))
    assert f.evaluate({"flag": True, "a": 1, "b": 2}) == 1
    assert f.evaluate({"flag": False, "a": 1, "b": 2}) == 2
    assert f.is_branching


def test_render_text_html_latex() -> None:
    """One tree renders in three formats with correct brackets."""
    f = Formula("x", "a * (b + c) / c")
    assert f.render(SYMS) == "M_w · (b_val + P) / P"
    html = f.render(SYMS, "html")
    assert html == "<var>M</var><sub>w</sub> &middot; (<var>b</var><sub>val</sub> + <var>P</var>) / <var>P</var>"
    assert f.render(SYMS, "latex") == r"M_{\mathrm{w}} \cdot \left(b_{\mathrm{val}} + P\right) / P"


def test_render_brackets_right_operand_of_division() -> None:
    """A / (b * c) keeps its brackets; a - (b - c) too."""
    assert Formula("x", "a / (b * c)").render(SYMS) == "M_w / (b_val · P)"
    assert Formula("x", "a - (b - c)").render(SYMS) == "M_w − (b_val − P)"
    assert Formula("x", "a - b + c").render(SYMS) == "M_w − b_val + P"


def test_render_substitutes_values() -> None:
    """With values, numbers take the symbols' places."""
    f = Formula("x", "c * b")
    assert f.render(SYMS, values={"c": "1.5×10⁹", "b": "4 B"}) == "1.5×10⁹ · 4 B"


def test_docstring_carries_equation() -> None:
    """The generated docstring holds the doc sentence and the rendered equation."""
    f = Formula("a", "c * b", "Weights.", "byte")
    doc = f.docstring(SYMS)
    assert doc.startswith("Weights.")
    assert "M_w = P · b_val" in doc


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (26, "26"),
        (0.27939677, "0.2794"),
        (1.5e9, "1.5×10⁹"),
        (6815744, "6.816×10⁶"),
        (2.5e-5, "2.5×10⁻⁵"),
        (True, "true"),
    ],
)
def test_format_number(value: float, text: str) -> None:
    """Numbers print deterministically."""
    assert text == format_number(value)
