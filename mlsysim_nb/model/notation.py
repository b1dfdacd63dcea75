"""Notation: how a quantity is written, in which base unit it is computed, and a few words on what it is.

A scenario's notation has three sources, each declaring its own names once: the records it reads (the
workload's and the device's numbers, :data:`RECORD_QUANTITIES` here), its fields (each ``knob()``
carries its symbol, unit and label) and its kind's equations (each computed quantity's row sits with its
formula, in the kind's ``physics.py``). :func:`merge` joins them and refuses a name two sources write
differently; nothing here is filled in at import time by anyone else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mlsysim_nb.formula import Symbol

__all__ = ["RECORD_QUANTITIES", "Quantity", "merge", "quantity", "symbol"]


@dataclass(frozen=True)
class Quantity:
    """One named quantity: how it is written and in which base unit it is computed."""

    symbol: Symbol
    base: str  # the unit of its magnitude inside the model; "" for plain numbers
    label: str  # a few words for tables and chart legends


def symbol(text: str) -> Symbol:
    """``"M_w"`` -> ``Symbol("M", "w")``: the letter, then after the first underscore the subscript."""
    letter, _, sub = text.partition("_")
    return Symbol(letter, sub)


def quantity(written: str, base: str, label: str) -> Quantity:
    """A row from its symbol as text (``"b_val"``), its base unit and its label."""
    return Quantity(symbol(written), base, label)


def merge(sources: Iterable[tuple[str, Mapping[str, Quantity]]]) -> Mapping[str, Quantity]:
    """The union of named notation tables; a name two of them write differently is refused, naming both."""
    out: dict[str, Quantity] = {}
    where: dict[str, str] = {}
    for source, table in sources:
        for name, row in table.items():
            if name in out and out[name] != row:
                msg = f"{name!r} is written {out[name]} in {where[name]} and {row} in {source}"
                raise ValueError(msg)
            out.setdefault(name, row)
            where.setdefault(name, source)
    return MappingProxyType(out)


#: The numbers a scenario reads from the workload (its shape).
_WORKLOAD_QUANTITIES: Mapping[str, Quantity] = MappingProxyType({
    "parameters": quantity("P", "", "model parameters"),
    "layers": quantity("L", "", "layers"),
    "hidden_dim": quantity("h", "", "hidden width"),
    "heads": quantity("a", "", "attention heads"),
    "kv_heads": quantity("a_kv", "", "key/value heads"),
    "context_length": quantity("s_ctx", "", "workload context length"),
})  # fmt: skip

#: The numbers a scenario reads from its records: the workload's shape and the device's memory, whose rows
#: are its fields' knobs (``Memory.capacity``: C_mem). Built on first use, since the records import this module.
RECORD_QUANTITIES: Mapping[str, Quantity]


def _record_quantities() -> Mapping[str, Quantity]:
    from mlsysim_nb.model.knob import knobs
    from mlsysim_nb.records.hardware import Memory

    device = {name: k.quantity(name) for name, k in knobs(Memory).items() if k.symbol}
    return MappingProxyType({**_WORKLOAD_QUANTITIES, **device})


def __getattr__(name: str) -> Mapping[str, Quantity]:
    if name == "RECORD_QUANTITIES":
        table = _record_quantities()
        globals()[name] = table
        return table
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
