"""The evaluator: a scenario's base-unit magnitudes, its formulas run on them, and units attached at the end.

A scenario converts its inputs to base-unit magnitudes once (bytes, seconds, counts) and hands them to
an :class:`Env` together with its kind's formulas. Each quantity is computed from its formula on first
use and cached; a value that is not finite, or a missing input, becomes :class:`NotApplicableError`
naming the equation. :func:`unit_wrapper` turns a magnitude into what a property returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.formula import Formula
from mlsysim_nb.units import factor, maker

__all__ = ["Env", "is_array", "unit_wrapper"]


class Env:
    """Magnitudes of one scenario, resolved and cached by name from ``formulas`` and ``constants``.

    Inputs that are absent are stored as ``None`` with the reason in
    ``needs``; reading one raises :class:`NotApplicableError`. A constant of
    the equations is read on first use, like a formula.
    """

    __slots__ = ("constants", "formulas", "needs", "values", "vectorised")

    def __init__(
        self,
        values: dict[str, Any],
        needs: Mapping[str, str],
        formulas: Mapping[str, Formula],
        constants: Mapping[str, Any],
        *,
        vectorised: bool | None = None,
    ) -> None:
        self.values = values
        self.needs = needs
        self.formulas = formulas
        self.constants = constants
        if vectorised is None:
            vectorised = np.ndarray in set(map(type, values.values()))
        self.vectorised = vectorised

    def get(self, name: str) -> Any:
        """The magnitude of ``name``, computing it from its formula on first use."""
        values = self.values
        if name in values:
            value = values[name]
            if value is None:
                raise NotApplicableError(name, self.needs.get(name, name))
            return value
        formula = self.formulas.get(name)
        if formula is None:
            value = self.constants[name]  # a KeyError names what is neither an input, a formula nor a constant
            values[name] = value
            return value
        try:
            if self.vectorised:
                with np.errstate(all="ignore"):  # a non-finite element is reported below, naming the equation
                    value = formula.evaluate(self.get)
            else:  # plain floats raise OverflowError / ZeroDivisionError instead of warning
                value = formula.evaluate(self.get)
            if not _finite(value):
                _not_finite(name, formula.case(self.get).expression)
        except NotApplicableError as err:
            if err.quantity == name:
                raise
            raise NotApplicableError(name, err.needs) from None
        except OverflowError:
            case = formula.case(self.get).expression
            raise NotApplicableError(name, "a finite value", detail=f"{name} = {case} is unbounded") from None
        except ZeroDivisionError:
            case = formula.case(self.get).expression
            raise NotApplicableError(
                name, "a non-zero denominator", detail=f"{name} = {case} divides by zero"
            ) from None
        values[name] = value
        return value

    def with_inputs(self, extra: Mapping[str, Any]) -> Env:
        """A child environment for a method call: ``extra`` inputs, the same cached values."""
        vectorised = self.vectorised or np.ndarray in set(map(type, extra.values()))
        return Env({**self.values, **extra}, self.needs, self.formulas, self.constants, vectorised=vectorised)


def _not_finite(name: str, case: str) -> None:
    raise NotApplicableError(name, "a finite value", detail=f"{name} = {case} is not finite")


def is_array(value: Any) -> bool:
    """True for a NumPy array of one or more dimensions (a sweep's values)."""
    return isinstance(value, np.ndarray) and value.ndim > 0


def _finite(value: Any) -> bool:
    kind = type(value)
    if kind is float:  # the common cases first, by exact type
        return math.isfinite(value)
    if kind is int or kind is bool or isinstance(value, (bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return bool(np.all(np.isfinite(value)))


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value
    return value if isinstance(value, (bool, int)) else float(value)


def unit_wrapper(out: str, base: str) -> Callable[[Any], Any]:
    """The function that attaches the output unit ``out`` to a magnitude in ``base``.

    Plain numbers stay plain (float, int, bool); quantities are converted
    from the base unit (bytes, seconds) to the output unit (GB, ms) here.
    """
    if not out:
        return _plain
    scale = factor(base, out) if base != out else 1.0
    make: Callable[[Any], Any] = maker(out)
    if scale == 1.0:
        return make
    divisor = factor(out, base) if base else 1.0
    if scale < 1 and divisor == round(divisor):
        # bytes -> GB: dividing by the exact 1e9 rounds correctly; multiplying by 1e-9 may not
        return lambda value: make(value / divisor)
    return lambda value: make(value * scale)
