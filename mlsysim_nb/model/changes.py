"""``variant()``, the one way to change a field: validation of the changes, couplings, and what changed.

A new scenario is the old one with ``changes`` applied through ``dataclasses.replace``, so every
field is checked again by its declaration. While it is being made, :func:`changed_fields` says which
fields the call changes (a rule between two fields blames the one just changed) and :data:`ORIGIN`
holds the scenario it is made from (a field left as it was keeps its checked magnitude).

A field that follows another is declared once, beside the fields, as a :class:`Follows` in the class's
``COUPLINGS``: a training scenario's saved activations follow its batch. A control, a sweep and a call
all go through :func:`make_variant`, so each moves the follower the same way.
"""

from __future__ import annotations

import contextvars
import dataclasses
from dataclasses import dataclass
from typing import Any

from mlsysim_nb.model.knob import knobs
from mlsysim_nb.units import factor, same_units, unit_container

__all__ = ["ORIGIN", "Follows", "changed_fields", "make_variant"]

_CHANGED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("changed", default=frozenset())
#: The scenario the ``variant()`` being validated is made from (``None`` outside one): its fields' checked
#: magnitudes are reused for the fields left as they were.
ORIGIN: contextvars.ContextVar[Any] = contextvars.ContextVar("origin", default=None)


def changed_fields() -> frozenset[str]:
    """The fields the ``variant()`` call being validated changes (empty outside one).

    A check that involves several fields (an adapter shape too large for the
    model) blames the one the user just changed.
    """
    return _CHANGED.get()


@dataclass(frozen=True)
class Follows:
    """Field ``field`` follows field ``leader``: a change of the leader that does not restate it moves it.

    The follower's new value is formula ``formula`` of the scenario with ``argument`` set to the
    leader's new (checked) magnitude, given back in the unit the follower was stated in. It applies
    only when both fields are set and the new leader is not ``None``; stating the follower too keeps it.
    """

    field: str
    leader: str
    formula: str
    argument: str

    def applies(self, scenario: Any, changes: dict[str, Any]) -> bool:
        """Whether ``changes`` move the leader without restating the follower."""
        return (
            self.leader in changes
            and self.field not in changes
            and changes[self.leader] is not None
            and getattr(scenario, self.field) is not None
            and getattr(scenario, self.leader) is not None
        )

    def magnitude_at(self, scenario: Any, leader: Any) -> Any:
        """The follower's base-unit magnitude when the leader's magnitude is ``leader`` (an array in a sweep)."""
        return scenario._env.with_inputs({self.argument: leader}).get(self.formula)  # noqa: SLF001 - the base's own

    def moved(self, scenario: Any, new_leader: Any) -> Any:
        """The follower's new value for the leader's new value, checked by the leader's declaration."""
        declared = knobs(scenario)
        _, checked = declared[self.leader].check(type(scenario).__name__, self.leader, new_leader)
        magnitude = self.magnitude_at(scenario, checked)
        current = getattr(scenario, self.field)
        if not hasattr(current, "magnitude"):  # a plain number (reading .units would build a Unit)
            return magnitude
        return same_units(current, magnitude / factor(unit_container(current), declared[self.field].unit))


_FIELD_NAMES: dict[type, tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]] = {}


def _field_names(cls: type) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]:
    """A dataclass's field names in order, as a set, and the names ``__init__`` takes (read once per class)."""
    found = _FIELD_NAMES.get(cls)
    if found is None:
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields)
        found = _FIELD_NAMES[cls] = (names, frozenset(names), tuple(f.name for f in fields if f.init))
    return found


def make_variant(scenario: Any, changes: dict[str, Any]) -> Any:
    """``scenario`` with ``changes`` applied and every field checked again (see :meth:`Scenario.variant`)."""
    cls = type(scenario)
    names, known, init_names = _field_names(cls)
    if not known.issuperset(changes):
        unknown = sorted(set(changes) - known)
        msg = (
            f"{cls.__name__}.variant() got unknown field(s) {', '.join(map(repr, unknown))}; "
            f"valid fields are: {', '.join(names)}"
        )
        raise TypeError(msg)
    for coupling in scenario.COUPLINGS:
        if coupling.applies(scenario, changes):
            changes = {**changes, coupling.field: coupling.moved(scenario, changes[coupling.leader])}
    if "name" not in changes and any(k not in ("name", "description") for k in changes):
        # a title describes the scenario it was given to; a changed scenario drops it rather than mislead
        changes = {**changes, **{k: "" for k in ("name", "description") if k in known}}
    if len(init_names) != len(names) and not set(changes).issubset(init_names):
        # what dataclasses.replace() says of a field __init__ does not take
        fixed = next(name for name in changes if name not in init_names)
        msg = f"field {fixed} is declared with init=False, it cannot be specified with replace()"
        raise ValueError(msg)
    token = _CHANGED.set(frozenset(changes))
    made_from = ORIGIN.set(scenario)
    try:
        # dataclasses.replace(), without re-reading the class's fields on every call
        given = {name: getattr(scenario, name) for name in init_names}
        given.update(changes)
        return cls(**given)
    finally:
        _CHANGED.reset(token)
        ORIGIN.reset(made_from)
