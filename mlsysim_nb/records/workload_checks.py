"""The checks of a workload's fields that a knob alone does not say: each refusal names the field and the rule.

Every field's bounds and choices are its ``knob()`` in :class:`~mlsysim_nb.records.workloads.Workload`;
:func:`check_field` applies it, reading a dropout probability and a yes/no flag with their own words. The rules
between fields (the experts' k of E, the layers' pattern) are here too.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, FieldUnitError
from mlsysim_nb.layers.architecture import Layer
from mlsysim_nb.model.counts import check_count
from mlsysim_nb.model.fields import check_plain
from mlsysim_nb.model.knob import Knob

__all__ = ["check_experts", "check_field", "check_mixer_shapes", "check_pattern"]

#: The fields whose knob is a share but whose value is a probability of dropping, never 1.
_PROBABILITIES = frozenset({"attention_dropout", "hidden_dropout"})


def check_field(owner: str, name: str, declaration: Knob, value: Any) -> Any:
    """``value`` checked by the field's knob: its bounds, its choices, as every scenario's field is checked."""
    if _plainly_within(declaration, value):
        return value
    if name in _PROBABILITIES:
        return _probability(owner, name, value, declaration)
    if declaration.kind == "choice" and _yes_or_no(declaration):
        if not isinstance(value, bool):
            raise FieldError(owner, name, f"must be True or False, got {value!r}")
        return value
    return declaration.check(owner, name, value)[0]


def _plainly_within(declaration: Knob, value: Any) -> bool:
    """Whether ``value`` is a plain int, text or None the knob accepts as it is (most are; the rest go the long way)."""
    if value is None:
        return declaration.optional
    if declaration.kind == "count":
        high = declaration.high
        return type(value) is int and declaration.low <= value and (high is None or value <= high)
    if declaration.kind == "choice":
        return (
            type(value) in (str, bool) and value in _allowed(declaration) and type(value) is _choice_type(declaration)
        )
    return False


@functools.cache
def _allowed(declaration: Knob) -> frozenset[Any]:
    return frozenset(v for _, v in declaration.choices)


@functools.cache
def _choice_type(declaration: Knob) -> type:
    return type(declaration.choices[0][1])


@functools.cache
def _yes_or_no(declaration: Knob) -> bool:
    return all(isinstance(v, bool) for _, v in declaration.choices)


def _probability(owner: str, name: str, value: Any, declaration: Knob) -> float:
    """A probability, read as every share is (0.1, "0.1", "10 %", a NumPy number); a size is refused."""
    rule = "must be a probability from 0 up to (not including) 1"
    try:
        share = check_plain(owner, name, value, positive=False, maximum=declaration.high, rule="a probability")
    except FieldUnitError:
        raise
    except FieldError as err:
        raise FieldError(owner, name, f"{rule} ({err.reason})") from None
    if np.ndim(share) or share >= 1:
        raise FieldError(owner, name, f"{rule}, got {value!r}")
    return float(share)


def check_pattern(owner: str, value: Any, layers: int | None, most: int) -> tuple[Layer, ...]:
    """The layers' pattern as a tuple of :class:`Layer` (a mixer's name stands for its layer under no window).

    It repeats over ``layers``, so it lists at most that many (an entry past them would be dropped unsaid), and
    at most ``most`` (the layers' bound) when ``layers`` is not given; the length is checked before any entry.
    """
    if isinstance(value, (str, Layer)) or not isinstance(value, (tuple, list)):
        msg = f"must be a tuple of layers (Layer, or a mixer's name such as 'attention'), got {value!r}"
        raise FieldError(owner, "pattern", msg)
    if len(value) > (most if layers is None else layers):
        bound = f"{layers:,} layers, the model's" if layers is not None else f"{most:,} layers, the layers' bound"
        msg = f"must list at most {bound} (it repeats over the layers, never past them), got {len(value):,}"
        raise FieldError(owner, "pattern", msg)
    try:
        return tuple(layer if isinstance(layer, Layer) else Layer(layer) for layer in value)
    except FieldError as err:
        raise FieldError(owner, "pattern", err.reason) from None


def check_mixer_shapes(owner: str, value: Any) -> tuple[tuple[str, int], ...]:
    """``(symbol, size)`` pairs: a symbol once, a whole size from 0 (latent attention's ``r_q`` may be 0)."""
    rule = "must be (symbol, size) pairs such as (('r_kv', 512),), each symbol once, each size a whole number"
    if isinstance(value, dict):
        value = tuple(value.items())
    if not isinstance(value, (tuple, list)) or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in value):
        raise FieldError(owner, "mixer_shapes", f"{rule}, got {value!r}")
    out = []
    for symbol, size in value:
        if not isinstance(symbol, str) or not symbol.isidentifier():
            raise FieldError(owner, "mixer_shapes", f"{rule}, got the symbol {symbol!r}")
        out.append((symbol, int(check_count(owner, "mixer_shapes", size, minimum=0, maximum=2**24))))
    if len({symbol for symbol, _ in out}) != len(out):
        raise FieldError(owner, "mixer_shapes", f"{rule}, got a symbol twice in {value!r}")
    return tuple(out)


def check_experts(owner: str, declared: dict[str, Knob], experts: Any, per_token: Any, shared: Any) -> dict[str, Any]:
    """The mixture of experts' fields: given together, k of E (``experts`` already checked by its knob)."""
    if experts is None:
        for name, value, idle in (("experts_per_token", per_token, None), ("shared_experts", shared, 0)):
            if value != idle:
                raise FieldError(owner, name, "needs experts (the number of routed experts) to be given as well")
        return {"experts_per_token": None, "shared_experts": 0}
    per_token = check_field(owner, "experts_per_token", declared["experts_per_token"], per_token)
    if per_token is None:
        raise FieldError(owner, "experts_per_token", "must be given with experts (how many each token uses)")
    if per_token > experts:
        raise FieldError(owner, "experts_per_token", f"must be at most experts ({experts:,}), got {per_token:,}")
    shared = check_field(owner, "shared_experts", declared["shared_experts"], shared)
    return {"experts_per_token": per_token, "shared_experts": shared}
