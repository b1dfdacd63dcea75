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
from typing import Any

from mlsysim_nb.formula import Symbol

__all__ = ["RECORD_QUANTITIES", "Quantity", "clashes", "merge", "quantity", "symbol", "written"]


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


def clashes(tables: Iterable[tuple[str, Mapping[str, Quantity]]]) -> list[str]:
    """Where the notation of several kinds is ambiguous: a symbol with two meanings, a quantity with two symbols.

    Two rows mean the same quantity when they share its name or its label (``total`` and ``total_per_device``
    are both "memory per device", M_dev; ``batch_size`` is B whether the batch is trained or served). A symbol
    written for two rows that share neither has two meanings; a quantity (its name and its label) written with
    two symbols has two. A number written as itself (a constant, 4) means its value and is left out.
    """
    rows: dict[str, dict[tuple[str, str], str]] = {}
    symbols: dict[tuple[str, str], dict[str, str]] = {}
    for source, table in tables:
        for name, row in table.items():
            text = row.symbol.text()
            if text.replace(".", "", 1).isdigit():
                continue
            rows.setdefault(text, {}).setdefault((name, row.label), source)
            symbols.setdefault((name, row.label), {}).setdefault(text, source)
    out: list[str] = []
    for text, meanings in rows.items():
        (name, label), *others = meanings
        where = meanings[name, label]
        out.extend(
            f"{text} means {name} ({label}) in {where} and {other} ({words}) in {meanings[other, words]}"
            for other, words in others
            if other != name and words != label
        )
    for (name, label), written in symbols.items():
        if len(written) > 1:
            out.append(f"{name} ({label}) is written " + " and ".join(f"{t} in {w}" for t, w in written.items()))
    return out


def written(row: Quantity) -> dict[str, Any]:
    """A row as a field's ``knob()`` takes it (``symbol``, ``unit``, ``label``), for a record's field it describes."""
    return {"symbol": row.symbol.text(), "unit": row.base, "label": row.label}


#: The numbers a scenario reads from its records: the workload's shape and the device's memory (the device's
#: fields take their rows from here: ``Memory.capacity`` is declared with ``written(RECORD_QUANTITIES["capacity"])``).
RECORD_QUANTITIES: Mapping[str, Quantity] = MappingProxyType({
    "parameters": quantity("P", "", "model parameters"),
    "layers": quantity("L", "", "layers"),
    "hidden_dim": quantity("h", "", "hidden width"),
    "heads": quantity("a", "", "attention heads"),
    "kv_heads": quantity("a_kv", "", "key/value heads"),
    "context_length": quantity("s_ctx", "", "workload context length"),
    "capacity": quantity("C_mem", "byte", "device memory capacity"),
    "bandwidth": quantity("BW_mem", "byte/second", "device memory bandwidth"),
    "peak_flops": quantity("F_peak", "FLOP/second", "peak arithmetic (dense 16-bit)"),
    "link_bandwidth": quantity("BW_link", "byte/second", "link bandwidth inside a node, per device"),
    "network_bandwidth": quantity("BW_net", "byte/second", "network bandwidth between nodes, per device"),
})  # fmt: skip
