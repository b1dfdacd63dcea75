"""The formula engine: restricted expressions that are evaluated and rendered from one string.

This subpackage knows nothing about training memory. A :class:`Formula` is
parsed once with :mod:`ast` under a small grammar (:mod:`.grammar`: numbers,
names, ``+ - * / // **``, comparisons and ``min/max/floor/ceil``; nothing
reaches ``eval``), compiled to a plain function over magnitudes (which runs
unchanged on NumPy arrays), and rendered as text, HTML or LaTeX
(:mod:`.rendering`), with or without the numbers substituted.
"""

from __future__ import annotations

from mlsysim_nb.formula.core import Case, Formula, Symbol
from mlsysim_nb.formula.grammar import FormulaSyntaxError
from mlsysim_nb.formula.rendering import format_number

__all__ = ["Case", "Formula", "FormulaSyntaxError", "Symbol", "format_number"]
