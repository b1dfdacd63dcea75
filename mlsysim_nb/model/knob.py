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

from mlsysim_nb.errors import show_number
from mlsysim_nb.formula import Symbol
from mlsysim_nb.model.fields import check_choice, check_count, check_number, check_quantity
from mlsysim_nb.model.notation import Quantity, symbol

__all__ = ["VALUE_WIDTHS", "Knob", "declared_knobs", "knob", "knobs", "label_and_help", "record"]

_KINDS = ("count", "bytes", "number", "choice")

#: The value widths a live control offers (label, bytes).
VALUE_WIDTHS = (("FP32 (4 B)", 4), ("BF16/FP16 (2 B)", 2), ("FP8 (1 B)", 1))


@dataclasses.dataclass(frozen=True)
class Knob:
    """A field's one declaration: how its value is checked, its bounds, notation, label and live control.

    Validation (``__post_init__``), the live controls, the inputs table, the equations' notation and
    the documentation all read this record, so the range a slider offers is the range the checker accepts.

    ``kind`` is ``"count"`` (a whole number from ``low`` to ``high``),
    ``"bytes"`` (a quantity of information; a plain number means bytes; ``high``
    in bytes), ``"number"`` (a plain real number up to ``high``) or
    ``"choice"`` (one of the values of ``choices``, of the same type). ``positive``
    refuses zero for bytes and numbers. ``symbol`` is how the equations write it
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

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            msg = f"Knob.kind must be one of {', '.join(_KINDS)}, got {self.kind!r}"
            raise ValueError(msg)
        if self.kind == "bytes" and self.unit not in {"", "byte"}:
            msg = f"Knob.unit of a bytes field is 'byte', got {self.unit!r}"
            raise ValueError(msg)
        if self.kind == "bytes":
            object.__setattr__(self, "unit", "byte")

    def quantity(self, name: str) -> Quantity:
        """The field's notation row: its symbol (the field's name when it declares none), unit and label."""
        return Quantity(symbol(self.symbol) if self.symbol else Symbol(name), self.unit, self.label)

    def check(self, owner: str, field: str, value: Any) -> tuple[Any, Any]:
        """``(value to store, magnitude in base units)``, or :class:`FieldError` naming ``owner.field``."""
        if self.kind == "count":
            high = None if self.high is None else int(self.high)
            count = check_count(owner, field, value, minimum=self.low, maximum=high, optional=self.optional)
            return count, count
        if self.kind == "choice":
            chosen = check_choice(owner, field, value, tuple(v for _, v in self.choices), optional=self.optional)
            return chosen, chosen
        if self.kind == "bytes":
            return check_quantity(
                owner, field, value, "byte", positive=self.positive, optional=self.optional, maximum=self.high
            )
        if hasattr(value, "units") or isinstance(value, str):
            _, value = check_quantity(owner, field, value, "byte", positive=self.positive, optional=self.optional)
        number = check_number(owner, field, value, positive=self.positive, optional=self.optional, maximum=self.high)
        return number, number

    def describe(self) -> str:
        """The accepted values in words, e.g. ``"a whole number from 1 to 65,536"``."""
        if self.kind == "choice":
            return "one of " + ", ".join(repr(v) for _, v in self.choices)
        if self.kind == "count":
            top = "" if self.high is None else f" to {show_number(int(self.high))}"
            return f"a whole number from {show_number(self.low)}{top}" + (", or None" if self.optional else "")
        unit = " B" if self.kind == "bytes" else ""
        low = "more than 0" if self.positive else "0 or more"
        top = "" if self.high is None else f", at most {show_number(self.high)}{unit}"
        return f"{'an amount of memory' if unit else 'a number'}, {low}{top}" + (", or None" if self.optional else "")


def knob(default: Any = dataclasses.MISSING, **declaration: Any) -> Any:
    """A dataclass field carrying its :class:`Knob` (checker, bounds, symbol, label, help, control)."""
    meta = {"knob": Knob(**declaration)}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


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
