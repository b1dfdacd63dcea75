"""Notebook 10's measurements taken once per test process, for the tests that run its code more than once.

``measure_layer`` and ``measure_training_state`` count the bytes PyTorch keeps, which depend on their
arguments alone (the random state changes the values, never the bytes). Notebook 10's code calls them in a
solution cell and again in the check cell's hidden test; the hidden-test check runs each check cell twice
(a wrong answer, then the right one), and the answer key runs every hidden test once more. Inside
:func:`measured_once` the first call with some arguments measures, and every later call with the same
arguments gets that measurement back (the results are frozen dataclasses). The functions themselves are
tested in ``tests/measure``, and nbval runs notebook 10 in a kernel of its own, measuring every cell afresh.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

#: the measurements whose result is a function of their arguments
DETERMINISTIC = ("measure_layer", "measure_training_state")

_TAKEN: dict[tuple[str, tuple[Any, ...], tuple[tuple[str, Any], ...]], Any] = {}


def _once(name: str, measure: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(measure)
    def measured(*args: Any, **kwargs: Any) -> Any:
        key = (name, args, tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # an argument such as a torch.dtype object that is not hashable: measure it again
            return measure(*args, **kwargs)
        if key not in _TAKEN:
            _TAKEN[key] = measure(*args, **kwargs)
        return _TAKEN[key]

    measured.measures = measure  # type: ignore[attr-defined]
    return measured


@contextmanager
def measured_once() -> Iterator[None]:
    """While the block runs, ``mlsysim_nb.measure``'s byte measurements are each taken once per process."""
    from mlsysim_nb import measure

    with pytest.MonkeyPatch.context() as patch:
        for name in DETERMINISTIC:
            original = getattr(measure, name)
            patch.setattr(measure, name, _once(name, getattr(original, "measures", original)))
        yield
