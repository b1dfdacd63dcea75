"""A kind's named cases: ``case()`` declares one, built on first use from the catalog.

A kind's ``cases.py`` writes ``CASES = {"MyCaseName": case(make, title, description, **fields)}``;
:mod:`mlsysim_nb.catalog` lists every kind's and builds a case when it is first asked for. Nothing here
imports a kind's model or reads the hardware files until a case is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Factory", "case"]

#: A case as the catalog holds it: a function of the catalog (a case may read its fields from another).
Factory = Callable[[Any], Any]


def case(make: Callable[..., Any], title: str, description: str, **fields: Any) -> Factory:
    """A named case, built on first use by ``make(name=title, description=description, **fields)``.

    A field given as a function of the catalog is read from another case then, and a hardware given by
    key is looked up then, so declaring a case loads no TOML.
    """

    def build(catalog: Any) -> Any:
        values = {k: (v(catalog) if callable(v) else v) for k, v in fields.items()}
        if isinstance(values.get("hardware"), str):
            from mlsysim_nb.records.hardware import Hardware

            values["hardware"] = Hardware[values["hardware"]]
        return make(name=title, description=description, **values)

    return build
