"""The scenario kinds: one folder each, found by listing this package's folders.

A kind is a subpackage here, holding

* ``__init__.py``: its declaration, which this registry reads. It stays light (no import of the model):
  ``KIND``, the name of its scenario class; ``COLORS``, its chart parts' colours; optionally ``ORDER``,
  where its cases come in the catalog (lower first; 100 when not given, then by folder name);
* ``physics.py``: its equations as a value, ``EQUATIONS = Equations(name, definitions, notation)``
  (:class:`mlsysim_nb.model.equations.Equations`): each formula written with the symbol, label and base unit
  of the quantity it computes (:func:`~mlsysim_nb.model.equations.defined`), and the notation of the other
  names it defines (the flags its scenario sets, its methods' arguments, its constants); a kind that
  composes others passes ``includes=(their EQUATIONS, ...)``. Nothing is registered: the class reads it;
* ``model.py``: the scenario class named by ``KIND``, a frozen dataclass on
  :class:`mlsysim_nb.model.scenario.Scenario` with ``EQUATIONS`` set, one ``knob()`` per field (its checker,
  range, symbol, unit, label, help and control), ``derived("name")`` per formula it shows, and ``COUPLINGS``
  when a field follows another (:class:`mlsysim_nb.model.changes.Follows`);
* ``view.py``, its presentation as data (a mixin typing ``self`` as a protocol of what it reads);
* ``cases.py``: ``CASES``, its named scenarios as factories taking the catalog
  (:func:`mlsysim_nb.model.cases.case` builds one); a factory loads the model when it is called.

``import mlsysim_nb`` reads the declarations only: a kind's class, equations and cases load on first use.
:data:`mlsysim_nb.Scenarios` lists every kind's cases, ``mlsysim_nb.<KIND>`` exports each class, and the
charts take each kind's colours from here. A kind kept outside the package (a course's own) is a folder
inside a directory given to :func:`register_kind_path`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Kind", "all_cases", "all_colors", "all_kinds", "find", "register_kind_path"]

_DEFAULT_ORDER = 100


@dataclass(frozen=True)
class Kind:
    """One kind's declaration: its package, the name of its class, its place in the catalog and its colours."""

    package: str
    name: str
    order: int
    colors: tuple[tuple[str, str], ...]  # (part, colour) pairs

    def load(self) -> type:
        """The scenario class (imports the kind's model, and its equations, on first use)."""
        cls: type = getattr(importlib.import_module(f"{self.package}.model"), self.name)
        return cls

    def cases(self) -> dict[str, Callable[[Any], Any]]:
        """The kind's named cases, as factories taking the catalog (none without a ``cases.py``)."""
        try:
            module = importlib.import_module(f"{self.package}.cases")
        except ModuleNotFoundError as err:
            if err.name != f"{self.package}.cases":
                raise
            return {}
        return dict(module.CASES)


_found: dict[tuple[str, ...], tuple[Kind, ...]] = {}


def all_kinds() -> tuple[Kind, ...]:
    """Every kind, in catalog order: the subpackages of every folder on this package's ``__path__``."""
    key = tuple(__path__)
    if key not in _found:
        importlib.invalidate_caches()  # a folder written since the last look is seen
        kinds = []
        for info in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
            if not info.ispkg:
                continue
            module = importlib.import_module(info.name)
            order = getattr(module, "ORDER", _DEFAULT_ORDER)
            kinds.append(Kind(info.name, module.KIND, order, tuple(getattr(module, "COLORS", {}).items())))
        _found.clear()
        _found[key] = tuple(sorted(kinds, key=lambda k: (k.order, k.package)))
    return _found[key]


def find(name: str) -> Kind | None:
    """The kind whose class is called ``name``, or ``None``."""
    return next((k for k in all_kinds() if k.name == name), None)


_cases: dict[tuple[Kind, ...], dict[str, Callable[[Any], Any]]] = {}


def all_cases() -> dict[str, Callable[[Any], Any]]:
    """Every kind's named cases, kind by kind in catalog order; a name two kinds give is refused.

    The same dict while the kinds stay the same (the catalog caches what it built against it).
    """
    found = all_kinds()
    if found in _cases:
        return _cases[found]
    cases: dict[str, Callable[[Any], Any]] = {}
    for kind in found:
        own = kind.cases()
        taken = sorted(own.keys() & cases.keys())
        if taken:
            msg = f"{kind.package} names cases another kind already has: {', '.join(taken)}"
            raise ValueError(msg)
        cases.update(own)
    _cases.clear()
    _cases[found] = cases
    return cases


def all_colors() -> dict[str, str]:
    """Every kind's chart colours by part; two kinds may share a part only with the same colour."""
    colors: dict[str, str] = {}
    for kind in all_kinds():
        for part, color in kind.colors:
            if colors.setdefault(part, color) != color:
                msg = f"{kind.package} colours {part!r} {color}, another kind {colors[part]}"
                raise ValueError(msg)
    return colors


def register_kind_path(folder: str | Path) -> None:
    """Look for kinds in ``folder`` too: each subfolder holding an ``__init__.py`` there is a kind.

    A kind found there is ``mlsysim_nb.kinds.<subfolder>``, exported, listed in the catalog and
    coloured like the package's own. This appends ``folder`` to this package's ``__path__``, which is
    all that discovery reads.
    """
    path = Path(folder)
    if not path.is_dir():
        msg = f"{folder!s} is not a folder"
        raise ValueError(msg)
    if str(path) not in __path__:
        __path__.append(str(path))
