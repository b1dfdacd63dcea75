"""A field's one declaration: its checker, range, symbol, unit, label, help and live control.

``knob(default, kind=..., label=..., ...)`` is a dataclass field carrying a :class:`Knob`. Validation,
the live controls, the inputs table (its label, and its help as the row's tooltip), the equations'
notation and the class docstrings all read it, so nothing about a field is written twice. A field that
holds a record or another scenario has no checker of its own; :func:`record` gives it its label.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.formula import Symbol
from mlsysim_nb.model.fields import (
    ONE_BIT,
    check_choice,
    check_count,
    check_least,
    check_number,
    check_plain,
    check_quantity,
    read_sequence,
)
from mlsysim_nb.model.limits import CONTEXT_WINDOW, RecordLimit
from mlsysim_nb.model.notation import Quantity, symbol

__all__ = [
    "AVERAGE_LEAST",
    "CONTEXT_WINDOW",
    "VALUE_WIDTHS",
    "Knob",
    "declared_knobs",
    "knob",
    "knobs",
    "label_and_help",
    "record",
]

_KINDS = ("count", "bytes", "number", "share", "choice", "quantity", "text")

#: The smallest nonzero average of state per parameter, in bytes: one byte per million parameters. A factored
#: optimizer state falls below a bit per parameter (Adafactor's second moment of a 12,288 × 49,152 matrix keeps
#: 12,288 + 49,152 values for 604 million parameters: 4·10⁻⁴ B each), so such a field declares this ``least``.
AVERAGE_LEAST = 1e-6

#: The value widths a live control offers (label, bytes).
VALUE_WIDTHS = (("FP32 (4 B)", 4), ("BF16/FP16 (2 B)", 2), ("FP8 (1 B)", 1))


@dataclasses.dataclass(frozen=True)
class Knob:
    """A field's one declaration: how its value is checked, its bounds, notation, label and live control.

    Validation (``__post_init__``), the live controls, the inputs table, the equations' notation and
    the documentation all read this record, so the range a slider offers is the range the checker accepts.

    ``kind`` is ``"count"`` (a whole number from ``low`` to ``high``),
    ``"bytes"`` (a quantity of information; a plain number means bytes; ``high``
    in bytes), ``"number"`` (a real number up to ``high``, in ``unit``: a quantity or
    text is converted to it, a plain number is in it; without a unit it is a plain
    number, and only a dimensionless quantity is read), ``"share"`` (a part of a whole,
    such as a share of each device's memory: a plain number up to ``high`` <= 1, also
    given as a percentage, ``"10 %"``; a size is refused) or
    ``"choice"`` (one of the values of ``choices``, of the same type); a record's fields may also be
    ``"quantity"`` (a quantity of the dimension of ``unit``, kept in the unit it is given in; a plain number is
    in ``unit``; refused outside ``least`` to ``high``, which ``rule`` says in words: a device's memory capacity
    "from 1 KiB to 10 PB") or ``"text"`` (a string; non-empty unless ``positive=False``). ``positive``
    refuses zero for bytes, numbers and shares. ``least`` is the smallest nonzero magnitude
    of a field in bytes (default one bit, :data:`~mlsysim_nb.model.fields.ONE_BIT`: no value
    is stored in less; a per-parameter average such as an optimizer's state may declare less, and an amount
    that is a total rather than a width, such as saved activations that scale with the batch, declares 0).
    ``within`` is a limit a record of the scenario sets (:data:`~mlsysim_nb.model.limits.CONTEXT_WINDOW`: a
    sequence at most the model's context), applied by the scenario base to every kind alike.
    ``symbol`` is how the equations write it
    (``"b_val"``: the letter, then the subscript), ``unit`` the base unit of its
    magnitude (``"byte"`` for bytes; a number counted in bytes says so). ``help``
    is a sentence a tooltip shows. ``control`` is how a live panel shows
    it: ``"log"`` (powers of two, with exact entry), ``"int"`` (every whole
    number), ``"dropdown"`` (``choices``), ``"toggle"`` or ``""`` (no control).
    """

    kind: str
    label: str
    low: int = 1
    high: float | None = None
    positive: bool = True
    optional: bool = False
    control: str = ""
    choices: tuple[tuple[str, Any], ...] = ()
    help: str = ""
    symbol: str = ""
    unit: str = ""
    least: float | None = None
    within: RecordLimit | None = None
    rule: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            msg = f"Knob.kind must be one of {', '.join(_KINDS)}, got {self.kind!r}"
            raise ValueError(msg)
        if self.kind == "bytes" and self.unit not in {"", "byte"}:
            msg = f"Knob.unit of a bytes field is 'byte', got {self.unit!r}"
            raise ValueError(msg)
        if self.kind == "bytes":
            object.__setattr__(self, "unit", "byte")
        if self.kind == "share" and (self.unit or self.high is None or not 0 < self.high <= 1):
            msg = f"a share Knob has no unit and a high of at most 1 (the whole), got {self.unit!r}, {self.high!r}"
            raise ValueError(msg)
        if self.least is None and self.unit == "byte":
            object.__setattr__(self, "least", ONE_BIT)

    def quantity(self, name: str) -> Quantity:
        """The field's notation row: its symbol (the field's name when it declares none), unit and label."""
        return Quantity(symbol(self.symbol) if self.symbol else Symbol(name), self.unit, self.label)

    def check(self, owner: str, field: str, value: Any) -> tuple[Any, Any]:
        """``(value to store, magnitude in base units)``, or :class:`FieldError` naming ``owner.field``."""
        if self.kind == "text":
            return self._check_text(owner, field, value)
        if self.kind == "quantity":
            return check_quantity(
                owner, field, value, self.unit, positive=self.positive, optional=self.optional,
                minimum=self.least, maximum=self.high, rule=self.rule,
            )  # fmt: skip
        if self.kind == "choice":
            chosen = check_choice(owner, field, value, tuple(v for _, v in self.choices), optional=self.optional)
            return chosen, chosen
        if isinstance(value, (list, tuple)):  # a sweep's values: quantities and text read as one array
            value = read_sequence(owner, field, value)
        if self.kind == "count":
            high = None if self.high is None else int(self.high)
            count = check_count(owner, field, value, minimum=self.low, maximum=high, optional=self.optional)
            return count, count
        if self.kind == "share" or not self.unit:
            rule = "a share of the whole" if self.kind == "share" else "a plain number"
            number = check_plain(
                owner, field, value, positive=self.positive, optional=self.optional, maximum=self.high, rule=rule
            )
            return number, number
        if self.kind == "bytes":
            stored, magnitude = check_quantity(
                owner, field, value, "byte", positive=self.positive, optional=self.optional, maximum=self.high
            )
        else:  # a number in a unit: a quantity or text converted to it, a plain number in it
            if hasattr(value, "units") or isinstance(value, str):
                _, value = check_quantity(
                    owner, field, value, self.unit, positive=self.positive, optional=self.optional
                )
            stored = magnitude = check_number(
                owner, field, value, positive=self.positive, optional=self.optional, maximum=self.high
            )
        if self.least is not None:
            unit = _unit_text(self.unit)
            check_least(owner, field, magnitude, self.least, positive=self.positive, unit_text=unit)
        return stored, magnitude

    def _check_text(self, owner: str, field: str, value: Any) -> tuple[Any, Any]:
        """A string (non-empty when ``positive``), so that every repr can show it."""
        if value is None and self.optional:
            return None, None
        if not isinstance(value, str):
            raise FieldError(owner, field, f"must be a string, got {type(value).__name__} {value!r}")
        if self.positive and not value:
            raise FieldError(owner, field, f"must be a non-empty string, got {value!r}")
        return value, value

    def describe(self) -> str:
        """The accepted values in words, e.g. ``"a whole number from 1 to 65,536"``."""
        if self.kind == "text":
            return "a non-empty string" if self.positive else "a string"
        if self.kind == "quantity":
            return f"a quantity in {self.unit}, {self.rule or 'more than 0'}" + (", or None" if self.optional else "")
        if self.kind == "choice":
            return "one of " + ", ".join(repr(v) for _, v in self.choices)
        if self.kind == "count":
            top = "" if self.high is None else f" to {show_number(int(self.high))}"
            within = "" if self.within is None else f", at most the {self.within.record}'s {self.within.what}"
            return f"a whole number from {show_number(self.low)}{top}{within}" + (", or None" if self.optional else "")
        unit = " B" if self.unit == "byte" else ""
        low = "more than 0" if self.positive else "0 or more"
        if self.least:
            low = f"{'' if self.positive else '0 or '}at least {show_number(self.least)}{unit}"
        top = "" if self.high is None else f", at most {show_number(self.high)}{unit}"
        what = {"bytes": "an amount of memory", "share": "a share (0.1 or '10 %')"}.get(self.kind, "a number")
        return f"{what}, {low}{top}" + (", or None" if self.optional else "")


def knob(default: Any = dataclasses.MISSING, *, compare: bool = True, **declaration: Any) -> Any:
    """A dataclass field carrying its :class:`Knob` (checker, bounds, symbol, label, help, control).

    ``compare=False`` leaves the field out of equality (a record's source or note: two records of the same
    device are equal whatever their provenance says).
    """
    meta = {"knob": Knob(**declaration)}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta, compare=compare)
    return dataclasses.field(default=default, metadata=meta, compare=compare)


def record(default: Any = dataclasses.MISSING, *, label: str, help: str = "") -> Any:  # noqa: A002 - the knob's word
    """A dataclass field holding a record or another scenario (checked by the class), with its label and help."""
    meta = {"label": label, "help": help}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def knobs(cls: Any) -> dict[str, Knob]:
    """The declared fields of a dataclass (or instance), by name, in declaration order."""
    return _knobs(cls if isinstance(cls, type) else type(cls))


@functools.lru_cache(maxsize=64)
def _knobs(cls: type) -> dict[str, Knob]:
    # declarations are fixed when the class is made: read them once per class
    return {f.name: f.metadata["knob"] for f in dataclasses.fields(cls) if "knob" in f.metadata}


def declared_knobs(cls: type) -> dict[str, Knob]:
    """The knobs of a class, also while its class body is being made into a dataclass.

    Before ``@dataclass`` runs, a ``knob()`` is a ``dataclasses.Field`` in the class namespace; after,
    it is in ``__dataclass_fields__``. Bases come first, as dataclasses order fields.
    """
    out: dict[str, Knob] = {}
    for klass in reversed(cls.__mro__):
        own = vars(klass)
        fields = own.get("__dataclass_fields__")
        entries = fields.items() if fields is not None else own.items()
        for name, value in entries:
            if isinstance(value, dataclasses.Field) and "knob" in value.metadata:
                out[name] = value.metadata["knob"]
    return out


def label_and_help(cls: type, name: str) -> tuple[str, str]:
    """A field's label and help, from its knob or its record declaration (its name in words otherwise)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    field = fields.get(name)
    if field is not None:
        meta = field.metadata
        if "knob" in meta:
            return meta["knob"].label, meta["knob"].help
        if "label" in meta:
            return meta["label"], meta.get("help", "")
    return name.replace("_", " "), ""


def _unit_text(unit: str) -> str:
    """`` B`` for bytes, `` <unit>`` otherwise: a magnitude's unit as a message writes it."""
    return " B" if unit == "byte" else f" {unit}" if unit else ""
