"""Limits a field takes from a record its scenario holds: a sequence at most the model's context window.

A knob declares one with ``within=`` (:data:`CONTEXT_WINDOW`); :meth:`Scenario._check_fields
<mlsysim_nb.model.scenario.Scenario._check_fields>` applies it to every kind the same way, after each field has
passed its own check. Nothing here knows a particular kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError, show_number

__all__ = ["CONTEXT_WINDOW", "RecordLimit"]


@dataclass(frozen=True)
class RecordLimit:
    """A field is at most a number a record of its scenario gives: ``record.attribute`` (none when it gives none).

    ``what`` names the number in a message (``"context window"``), ``unit`` its unit in words (``"tokens"``).
    When a ``variant()`` changes the record and not the field, the record is blamed: the new model is what
    no longer holds the old sequence.
    """

    record: str
    attribute: str
    what: str
    unit: str

    def limit(self, scenario: Any) -> Any:
        """The record's number in ``scenario`` (``None`` when the record gives none)."""
        return getattr(getattr(scenario, self.record, None), self.attribute, None)

    def check(self, scenario: Any, field: str, magnitude: Any, changed: frozenset[str] = frozenset()) -> None:
        """Refuse ``magnitude`` (a field's checked value, or an array of them) above the record's number.

        ``changed`` is what the ``variant()`` being made changes: a new record under the same field is blamed.
        """
        owner = type(scenario).__name__
        holder = getattr(scenario, self.record, None)
        limit = self.limit(scenario)
        if magnitude is None or limit is None:
            return
        if type(magnitude) is int and magnitude <= limit:  # one value within the limit: nothing to refuse
            return
        values = np.asarray(magnitude)
        over = values > limit
        if not np.any(over):
            return
        got = show_number(values[over].flat[0].item() if values.ndim else values.item())
        name = getattr(holder, "name", self.record)
        if self.record in changed and field not in changed:
            msg = f"models {name}, whose {self.what} ({show_number(limit)} {self.unit}) is below {field} = {got}"
            raise FieldError(owner, self.record, msg)
        msg = f"must be at most {name}'s {self.what} of {show_number(limit)} {self.unit}, got {got}"
        raise FieldError(owner, field, msg)


#: A sequence (or a context) is at most the tokens the model attends over: its positions end there.
CONTEXT_WINDOW = RecordLimit("workload", "context_length", "context window", "tokens")
