"""Checks every measuring function shares: ``random_state``, and calls that must name their arguments.

One source for each rule, so ``measure_layer``, ``measure_hf_layer``, ``measure_hf_causal_lm`` and
``measure_training_state`` refuse the same bad value with the same words, labelled with the function
the user called.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.model.fields import check_count

__all__ = ["MAX_RANDOM_STATE", "check_random_state", "named_arguments"]

#: The largest ``random_state``: PyTorch's generator takes a 64-bit unsigned number.
MAX_RANDOM_STATE = 2**64 - 1

_P = ParamSpec("_P")
_R = TypeVar("_R")


def check_random_state(owner: str, value: Any) -> int:
    """``random_state`` as an ``int`` from 0 to 2**64 - 1 (PyTorch's generator's range), or a :class:`FieldError`.

    >>> check_random_state("measure_layer", 2**64)
    Traceback (most recent call last):
    ...
    mlsysim_nb.errors.FieldError: measure_layer.random_state: must be at most 18,446,744,073,709,551,615, got ...
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        rule = f"must be a whole number (an int) from 0 to {show_number(MAX_RANDOM_STATE)}"
        raise FieldError(owner, "random_state", f"{rule}, got {type(value).__name__} {value!r}")
    return int(check_count(owner, "random_state", int(value), minimum=0, maximum=MAX_RANDOM_STATE))


def named_arguments(positional: int = 0) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """A measuring function that takes its first ``positional`` arguments by position and the rest by name only.

    A call with more positional arguments raises a ``TypeError`` that lists the parameters to name,
    instead of Python's bare "takes 0 positional arguments but 4 were given".
    """

    def wrap(function: Callable[_P, _R]) -> Callable[_P, _R]:
        parameters = list(inspect.signature(function).parameters.values())
        by_name = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
        leading = [p.name for p in parameters[:positional]]

        @functools.wraps(function)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            if len(args) > positional:
                name = function.__name__
                first = f"{', '.join(leading)} by position and every other argument" if leading else "every argument"
                required = [p.name for p in parameters[positional:] if p.default is inspect.Parameter.empty]
                example = ", ".join([*leading, *(f"{n}=..." for n in required or by_name[:1])])
                reason = (
                    f"{name}() takes {first} by name: {', '.join(by_name)}; "
                    f"got {len(args)} positional argument{'s' if len(args) != 1 else ''}. "
                    f"Write, for example, {name}({example})"
                )
                raise TypeError(reason)
            return function(*args, **kwargs)

        return call

    return wrap
